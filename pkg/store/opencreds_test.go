package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/usage"
)

// emptyCloudEnv leaves no Google or Azure credentials in the environment or
// the home directory: what a fresh machine or a bare container has.
func emptyCloudEnv(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLOUDSDK_CONFIG", filepath.Join(t.TempDir(), "gcloud"))
	for _, k := range []string{
		"GOOGLE_APPLICATION_CREDENTIALS", "STORAGE_EMULATOR_HOST", "STORAGE_EMULATOR_HOST_GRPC", "GCE_METADATA_HOST",
		"AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING",
		"AZURE_STORAGEBLOB_CONNECTIONSTRING", "AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET",
		"AZURE_FEDERATED_TOKEN_FILE",
	} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

func wantCredentialsError(t *testing.T, url, scheme string) *store.CredentialsError {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	var ce *store.CredentialsError
	if !errors.As(err, &ce) || ce.Scheme != scheme || !errors.Is(err, usage.Err) {
		if err == nil {
			st.Close()
		}
		t.Fatalf("Open(%s) = %v, want a %s CredentialsError that is a usage error", url, err, scheme)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("Open(%s): the error spans lines: %q", url, err)
	}
	return ce
}

// TestOpenGCSWithoutCredentials: no application default credentials is one
// usage error at open (gcsblob itself prints a warning and goes on
// anonymously). The last place Google's chain looks is the GCE metadata
// server: on a Google Cloud VM this test would find the VM's account.
func TestOpenGCSWithoutCredentials(t *testing.T) {
	emptyCloudEnv(t)
	wantCredentialsError(t, "gs://media", "gs")
}

// TestOpenAzureWithoutCredentials: no storage account is one usage error at
// open (azureblob: "Options.AccountName is required"), also with a key.
// (The cases that do open are tested on cloudCredentials: gocloud's URL
// openers read the environment once per process, at their first open.)
func TestOpenAzureWithoutCredentials(t *testing.T) {
	emptyCloudEnv(t)
	ce := wantCredentialsError(t, "azblob://media", "azblob")
	if !strings.Contains(ce.Error(), "AZURE_STORAGE_ACCOUNT") {
		t.Errorf("the error does not say which account setting is missing: %v", ce)
	}
	t.Setenv("AZURE_STORAGE_KEY", "a2V5")
	wantCredentialsError(t, "azblob://media", "azblob") // a key without an account
}
