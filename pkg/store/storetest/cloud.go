package storetest

import (
	"context"
	"io"
	"net/url"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob"
)

// GCS is an in-process fake-gcs-server on 127.0.0.1.
type GCS struct{ srv *fakestorage.Server }

// StartGCS starts a fake GCS server for the test and points gocloud's gs://
// opener at it (STORAGE_EMULATOR_HOST: no credentials, plain HTTP).
func StartGCS(t testing.TB) *GCS {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme:     "http",
		Host:       "127.0.0.1",
		PublicHost: "127.0.0.1", // reads answer 404 without it
		Writer:     io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("STORAGE_EMULATOR_HOST", u.Host)
	return &GCS{srv: srv}
}

// Bucket creates bucket name and returns its URL ("gs://name").
func (g *GCS) Bucket(t testing.TB, name string) string {
	t.Helper()
	g.srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: name})
	return "gs://" + name
}

// AzuriteEnv names the variable scripts/services/azurite.sh sets: 127.0.0.1:PORT.
const AzuriteEnv = "MEDIACTL_TEST_AZURITE"

// The Azurite development account, as published in its documentation.
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Azurite is the Azurite server started by scripts/services/azurite.sh.
type Azurite struct{ Addr string }

// StartAzurite returns the Azurite server named by MEDIACTL_TEST_AZURITE and sets
// its shared-key credentials for the test. Without the variable the test is
// skipped, except on CI (CI=true) where it fails.
func StartAzurite(t testing.TB) *Azurite {
	t.Helper()
	addr := serviceEnv(t, AzuriteEnv, "azurite")
	t.Setenv("AZURE_STORAGE_ACCOUNT", AzuriteAccount)
	t.Setenv("AZURE_STORAGE_KEY", AzuriteKey)
	return &Azurite{Addr: addr}
}

// Query is the URL query that reaches this server.
func (a *Azurite) Query() string {
	return "protocol=http&domain=" + url.QueryEscape(a.Addr) + "&localemu=true"
}

// Container creates a container named prefix-<random hex> and returns its URL
// ("azblob://NAME?…"); it is deleted when the test ends.
func (a *Azurite) Container(t testing.TB, prefix string) string {
	t.Helper()
	name := randomName(prefix)
	u := "azblob://" + name + "?" + a.Query()
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	var c *container.Client
	if !b.As(&c) {
		b.Close()
		t.Fatal("azblob bucket does not expose *container.Client")
	}
	if _, err := c.Create(ctx, nil); err != nil {
		b.Close()
		t.Fatalf("creating container %s on Azurite at %s: %v", name, a.Addr, err)
	}
	t.Cleanup(func() {
		_, _ = c.Delete(context.Background(), nil)
		b.Close()
	})
	return u
}
