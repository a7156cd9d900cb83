package store

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
	"google.golang.org/api/option"
)

// gcsMaxAttempts is how many times a gs:// request is tried. The storage
// library otherwise retries a failing request until its context ends, which
// for a service that stopped answering is never; five tries is in line with
// the S3 SDK's three and the Azure SDK's four, and its backoff (1 s doubling,
// up to 30 s) still rides out a burst of 429s.
const gcsMaxAttempts = 5

// openGCS opens a gs:// URL as gocloud's gcsblob opener does (the same
// credentials and parameters), with a client on bucketTransport: enough idle
// connections for mediactl's concurrency, and the I/O timeout. The gRPC API
// (grpc=true, zonal=true) dials connections of its own, with gRPC keepalives;
// it is left to gocloud's opener, and the timeout does not apply to it. Access
// IDs and private keys only sign URLs, which mediactl does not do.
func openGCS(ctx context.Context, u *url.URL, ioTimeout time.Duration) (*blob.Bucket, error) {
	q := u.Query()
	grpc, _ := strconv.ParseBool(q.Get("grpc"))
	zonal, _ := strconv.ParseBool(q.Get("zonal"))
	var b *blob.Bucket
	if grpc || zonal {
		if err := cloudCredentials(ctx, "gs", q); err != nil {
			return nil, err
		}
		var err error
		if b, err = blob.OpenBucket(ctx, u.String()); err != nil {
			return nil, err
		}
	} else {
		credCtx, cancel := context.WithTimeout(ctx, credentialTimeout)
		creds, err := gcsCredentials(credCtx, q)
		cancel()
		if err != nil {
			return nil, err
		}
		tr := bucketTransport(ioTimeout)
		var opts gcsblob.Options
		client := gcp.NewAnonymousHTTPClient(tr)
		if creds != nil {
			if client, err = gcp.NewHTTPClient(tr, gcp.CredentialsTokenSource(creds)); err != nil {
				return nil, err
			}
			if ud, err := creds.GetUniverseDomain(); err == nil && ud != "" {
				opts.ClientOptions = append(opts.ClientOptions, option.WithUniverseDomain(ud))
			}
		}
		if os.Getenv("STORAGE_EMULATOR_HOST") != "" {
			// gcsblob talks to an emulator through http.DefaultClient; this
			// option comes after its own and gives it this client instead.
			opts.ClientOptions = append(opts.ClientOptions, option.WithHTTPClient(&client.Client))
		}
		if b, err = gcsblob.OpenBucket(ctx, client, u.Host, &opts); err != nil {
			return nil, err
		}
	}
	var c *storage.Client
	if b.As(&c) {
		c.SetRetry(storage.WithMaxAttempts(gcsMaxAttempts))
	}
	return b, nil
}

// openAzure opens an azblob:// URL as gocloud's azureblob opener does (the
// service URL from the environment and the URL's parameters, the credentials
// gocloud v0.49 picks: see azureClient), with a client on bucketTransport.
func openAzure(ctx context.Context, u *url.URL, ioTimeout time.Duration) (*blob.Bucket, error) {
	if err := cloudCredentials(ctx, "azblob", u.Query()); err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: bucketTransport(ioTimeout)}
	o := &azureblob.URLOpener{
		MakeClient: func(svc azureblob.ServiceURL, name azureblob.ContainerName) (*container.Client, error) {
			return azureClient(svc, name, hc)
		},
		ServiceURLOptions: *azureblob.NewDefaultServiceURLOptions(),
	}
	return o.OpenBucketURL(ctx, u)
}

// azureClient is the container client gocloud's azureblob opener makes
// (gocloud.dev v0.49, credInfoT.NewClient: the storage account and key from
// the environment, else a SAS token, which is in the service URL, else a
// connection string, else azidentity's DefaultAzureCredential), on hc.
func azureClient(svc azureblob.ServiceURL, name azureblob.ContainerName, hc *http.Client) (*container.Client, error) {
	opts := &container.ClientOptions{ClientOptions: policy.ClientOptions{
		Telemetry: policy.TelemetryOptions{ApplicationID: "mediactl"},
		Transport: hc,
	}}
	containerURL, err := url.JoinPath(string(svc), string(name))
	if err != nil {
		return nil, err
	}
	account, key := os.Getenv("AZURE_STORAGE_ACCOUNT"), os.Getenv("AZURE_STORAGE_KEY")
	conn := os.Getenv("AZURE_STORAGE_CONNECTION_STRING")
	if conn == "" {
		conn = os.Getenv("AZURE_STORAGEBLOB_CONNECTIONSTRING")
	}
	switch {
	case account != "" && key != "":
		cred, err := azblob.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, fmt.Errorf("AZURE_STORAGE_KEY: %w", err)
		}
		return container.NewClientWithSharedKeyCredential(containerURL, cred, opts)
	case os.Getenv("AZURE_STORAGE_SAS_TOKEN") != "":
		return container.NewClientWithNoCredential(containerURL, opts)
	case conn != "":
		return container.NewClientFromConnectionString(conn, string(name), opts)
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("azidentity.NewDefaultAzureCredential: %w", err)
	}
	return container.NewClient(containerURL, cred, opts)
}
