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
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
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
	var b *blob.Bucket
	if gcsGRPC(q) {
		if err := cloudCredentials(ctx, "gs", q); err != nil {
			return nil, err
		}
		var err error
		if b, err = blob.OpenBucket(ctx, u.String()); err != nil {
			return nil, err
		}
	} else {
		client, opts, err := gcsHTTPClient(ctx, q, bucketTransport(ioTimeout))
		if err != nil {
			return nil, err
		}
		if b, err = gcsblob.OpenBucket(ctx, client, u.Host, &gcsblob.Options{ClientOptions: opts}); err != nil {
			return nil, err
		}
	}
	var c *storage.Client
	if b.As(&c) {
		c.SetRetry(storage.WithMaxAttempts(gcsMaxAttempts))
	}
	return b, nil
}

// gcsGRPC reports whether a gs:// URL asks for the gRPC API (grpc=true, or
// zonal=true, which needs it).
func gcsGRPC(q url.Values) bool {
	grpc, _ := strconv.ParseBool(q.Get("grpc"))
	zonal, _ := strconv.ParseBool(q.Get("zonal"))
	return grpc || zonal
}

// gcsHTTPClient is the client of a gs:// bucket on the JSON API, on tr, and
// the storage client's options: the universe domain of the credentials (or
// of the URL, without credentials), and an emulator's client. The
// credentials keep a context that is never cancelled: an authorized user's
// (gcloud) or a federated identity's token source refreshes its token with
// the context it was found with, for as long as the bucket is open. Their
// token requests go through tr too (oauth2.HTTPClient).
func gcsHTTPClient(ctx context.Context, q url.Values, tr http.RoundTripper) (*gcp.HTTPClient, []option.ClientOption, error) {
	credCtx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, &http.Client{Transport: tr})
	creds, err := gcsCredentialsWithin(ctx, credCtx, q)
	if err != nil {
		return nil, nil, err
	}
	var opts []option.ClientOption
	client := gcp.NewAnonymousHTTPClient(tr)
	if creds != nil {
		if client, err = gcp.NewHTTPClient(tr, gcp.CredentialsTokenSource(creds)); err != nil {
			return nil, nil, err
		}
		if ud, err := creds.GetUniverseDomain(); err == nil && ud != "" {
			opts = append(opts, option.WithUniverseDomain(ud))
		}
	} else if ud := q.Get("universe_domain"); ud != "" {
		opts = append(opts, option.WithUniverseDomain(ud))
	}
	if os.Getenv("STORAGE_EMULATOR_HOST") != "" {
		// gcsblob talks to an emulator through http.DefaultClient; this
		// option comes after its own and gives it this client instead.
		opts = append(opts, option.WithHTTPClient(&client.Client))
	}
	return client, opts, nil
}

// gcsCredentialsWithin looks for the credentials on credCtx, which they
// keep, but waits for them only until ctx ends or credentialTimeout passes:
// the search may ask an instance metadata service, which off the cloud may
// not answer. A search given up on ends in the background.
func gcsCredentialsWithin(ctx, credCtx context.Context, q url.Values) (*google.Credentials, error) {
	type found struct {
		creds *google.Credentials
		err   error
	}
	done := make(chan found, 1)
	go func() {
		creds, err := gcsCredentials(credCtx, q)
		done <- found{creds, err}
	}()
	t := time.NewTimer(credentialTimeout)
	defer t.Stop()
	select {
	case f := <-done:
		return f.creds, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, &CredentialsError{Scheme: "gs", Err: fmt.Errorf("the search for application default credentials did not end within %v", credentialTimeout)}
	}
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
// connection string, else azidentity's DefaultAzureCredential), on hc: the
// container of azureService's client, on its pipeline.
func azureClient(svc azureblob.ServiceURL, name azureblob.ContainerName, hc *http.Client) (*container.Client, error) {
	c, err := azureService(string(svc), hc)
	if err != nil {
		return nil, err
	}
	return c.NewContainerClient(string(name)), nil
}

// azureService is the client of the blob service at serviceURL, with the
// credentials azureClient documents, on hc. A connection string names its
// own service.
func azureService(serviceURL string, hc *http.Client) (*service.Client, error) {
	opts := &service.ClientOptions{ClientOptions: policy.ClientOptions{
		Telemetry: policy.TelemetryOptions{ApplicationID: "mediactl"},
		Transport: hc,
	}}
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
		return service.NewClientWithSharedKeyCredential(serviceURL, cred, opts)
	case os.Getenv("AZURE_STORAGE_SAS_TOKEN") != "":
		return service.NewClientWithNoCredential(serviceURL, opts)
	case conn != "":
		return service.NewClientFromConnectionString(conn, opts)
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("azidentity.NewDefaultAzureCredential: %w", err)
	}
	return service.NewClient(serviceURL, cred, opts)
}
