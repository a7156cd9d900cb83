package store

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2/google"
)

// credentialTimeout bounds the wait for the search for credentials at open
// (cloudCredentials, gcsCredentialsWithin, and s3:// buckets'): the chains
// probe an instance metadata service, which off the cloud may not answer, or
// ask a token service (AWS STS for a Kubernetes service account's role) on
// connections of their own, outside io_timeout. A variable for the tests.
var credentialTimeout = 30 * time.Second

// cloudCredentials finds the credentials a gs:// or azblob:// bucket's driver
// will use, the way the driver looks for them, before the bucket is opened:
// without any, gcsblob prints a warning and goes on anonymously, and
// azureblob fails every request with its chain of attempts, so each listing
// of a run would report the same error. None found is a *CredentialsError.
// q is the query the driver is opened with.
func cloudCredentials(ctx context.Context, scheme string, q url.Values) error {
	ctx, cancel := context.WithTimeout(ctx, credentialTimeout)
	defer cancel()
	switch scheme {
	case "gs":
		_, err := gcsCredentials(ctx, q)
		return err
	case "azblob":
		return azureCredentials(ctx, q)
	}
	return nil
}

// gcsCredentials looks for application default credentials as gcsblob's URL
// opener does (gocloud.dev/gcp.DefaultCredentials): an emulator or an
// anonymous URL needs none (nil, nil).
func gcsCredentials(ctx context.Context, q url.Values) (*google.Credentials, error) {
	if os.Getenv("STORAGE_EMULATOR_HOST") != "" || os.Getenv("STORAGE_EMULATOR_HOST_GRPC") != "" {
		return nil, nil
	}
	if gcsAnonymous(q) {
		return nil, nil
	}
	var creds *google.Credentials
	var err error
	if ud := q.Get("universe_domain"); ud != "" {
		creds, err = gcp.DefaultCredentialsWithParams(ctx, google.CredentialsParams{UniverseDomain: ud})
	} else {
		creds, err = gcp.DefaultCredentials(ctx)
	}
	if err != nil {
		return nil, &CredentialsError{Scheme: "gs", Err: err}
	}
	return creds, nil
}

// gcsAnonymous reports whether a gs:// URL asks for an unauthenticated
// client, as gcsblob reads it: anonymous=true or access_id=-.
func gcsAnonymous(q url.Values) bool {
	anon, _ := strconv.ParseBool(q.Get("anonymous"))
	return anon || q.Get("access_id") == "-"
}

// errNoAzureAccount is the reason azureblob cannot even build the service URL.
var errNoAzureAccount = errors.New("no storage account: AZURE_STORAGE_ACCOUNT is not set, the URL has no storage_account= and no connection string names one")

// azureStorageScope is the token scope of Azure Blob Storage.
const azureStorageScope = "https://storage.azure.com/.default"

// azureCredentials follows azureblob's choice (gocloud.dev v0.49,
// newCredInfoFromEnv): an account with AZURE_STORAGE_KEY, a SAS token or a
// connection string are credentials as they are; otherwise the driver uses
// azidentity's DefaultAzureCredential, from which a token is asked now.
func azureCredentials(ctx context.Context, q url.Values) error {
	account := os.Getenv("AZURE_STORAGE_ACCOUNT")
	if v := q.Get("storage_account"); v != "" {
		account = v
	}
	conn := os.Getenv("AZURE_STORAGE_CONNECTION_STRING")
	if conn == "" {
		conn = os.Getenv("AZURE_STORAGEBLOB_CONNECTIONSTRING")
	}
	switch {
	case conn != "":
		if account == "" && !strings.Contains(conn, "AccountName=") {
			return &CredentialsError{Scheme: "azblob", Err: errNoAzureAccount}
		}
		return nil
	case account == "":
		return &CredentialsError{Scheme: "azblob", Err: errNoAzureAccount}
	case os.Getenv("AZURE_STORAGE_KEY") != "" && os.Getenv("AZURE_STORAGE_ACCOUNT") != "",
		os.Getenv("AZURE_STORAGE_SAS_TOKEN") != "":
		return nil
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err == nil {
		_, err = cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{azureStorageScope}})
	}
	if err != nil {
		return &CredentialsError{Scheme: "azblob", Err: err}
	}
	return nil
}
