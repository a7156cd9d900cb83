package store

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// TestCloudCredentialsFound: the credentials each driver would use are
// accepted without a request: a Google service account key file, an
// emulator, an anonymous URL; an Azure account with a key, a SAS token, a
// connection string. An empty environment finds none.
func TestCloudCredentialsFound(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLOUDSDK_CONFIG", filepath.Join(t.TempDir(), "gcloud"))
	key := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(key, []byte(`{"type": "service_account", "project_id": "p", "client_email": "m@p.iam.gserviceaccount.com", "private_key": "", "token_uri": "https://oauth2.googleapis.com/token"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"GOOGLE_APPLICATION_CREDENTIALS", "STORAGE_EMULATOR_HOST", "STORAGE_EMULATOR_HOST_GRPC", "GCE_METADATA_HOST",
		"AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGEBLOB_CONNECTIONSTRING"} {
		t.Setenv(k, "")
	}
	q := func(s string) url.Values { v, _ := url.ParseQuery(s); return v }
	for _, tc := range []struct {
		scheme, query string
		env           map[string]string
		found         bool
	}{
		{"gs", "", nil, false},
		{"gs", "anonymous=true", nil, true},
		{"gs", "", map[string]string{"STORAGE_EMULATOR_HOST": "127.0.0.1:9"}, true},
		{"gs", "", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": key}, true},
		{"azblob", "", nil, false},
		{"azblob", "", map[string]string{"AZURE_STORAGE_KEY": "a2V5"}, false},
		{"azblob", "", map[string]string{"AZURE_STORAGE_ACCOUNT": "acct", "AZURE_STORAGE_KEY": "a2V5"}, true},
		{"azblob", "storage_account=acct", map[string]string{"AZURE_STORAGE_SAS_TOKEN": "sv=2024-01-01&sig=x"}, true},
		{"azblob", "", map[string]string{"AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5"}, true},
		{"s3", "", nil, true}, // s3:// is resolved by openS3
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		err := cloudCredentials(context.Background(), tc.scheme, q(tc.query))
		var ce *CredentialsError
		if tc.found && err != nil || !tc.found && !errors.As(err, &ce) {
			t.Errorf("%s ?%s %v: %v, want found %v", tc.scheme, tc.query, tc.env, err, tc.found)
		}
		for k := range tc.env {
			t.Setenv(k, "")
		}
	}
}

// TestChainLine: azidentity's error lists each credential tried on a line of
// its own and each HTTP response below it; the message keeps one line per
// credential, joined, without the responses.
func TestChainLine(t *testing.T) {
	err := errors.New("DefaultAzureCredential: failed to acquire a token.\nAttempted credentials:\n\tEnvironmentCredential: missing environment variable AZURE_TENANT_ID\n\tManagedIdentityCredential authentication failed. \n\t\tGET http://169.254.169.254/metadata/identity/oauth2/token\n\t\t-----\n\t\tRESPONSE 403: 403 Forbidden\n")
	got := chainLine(err)
	want := "DefaultAzureCredential: failed to acquire a token; Attempted credentials; EnvironmentCredential: missing environment variable AZURE_TENANT_ID; ManagedIdentityCredential authentication failed"
	if got != want {
		t.Errorf("chainLine =\n%q, want\n%q", got, want)
	}
	if got := chainLine(errors.New("no EC2 IMDS role found")); got != "no EC2 IMDS role found" {
		t.Errorf("a one-line error changed: %q", got)
	}
}
