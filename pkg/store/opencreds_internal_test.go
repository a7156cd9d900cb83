package store

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestS3CredentialsWithin: a Kubernetes service account's role (a web
// identity token, exchanged at AWS STS) whose token service accepts the
// connection and never answers ends the open within credentialTimeout, with
// a CredentialsError that says so: the SDK asks STS on a connection of its
// own, which io_timeout does not cover.
func TestS3CredentialsWithin(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // holds every connection open, unanswered, until ln closes
		var held []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				break
			}
			held = append(held, c)
		}
		for _, c := range held {
			c.Close()
		}
	}()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("eyJhbGciOiJSUzI1NiJ9.e30.c2ln"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_CONFIG_FILE": filepath.Join(t.TempDir(), "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": "us-east-1",
		"AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/mediactl", "AWS_WEB_IDENTITY_TOKEN_FILE": token,
		"AWS_ENDPOINT_URL_STS": "http://" + ln.Addr().String(),
	} {
		t.Setenv(k, v)
	}
	defer func(d time.Duration) { credentialTimeout = d }(credentialTimeout)
	credentialTimeout = 500 * time.Millisecond

	done := make(chan error, 1)
	go func() {
		st, err := Open(context.Background(), "s3://media?endpoint=http://127.0.0.1:9&use_path_style=true")
		if err == nil {
			st.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		var ce *CredentialsError
		if !errors.As(err, &ce) || ce.Scheme != "s3" || !strings.Contains(err.Error(), "did not end within 500ms") {
			t.Fatalf("open with a token service that never answers: %v, want an s3 CredentialsError saying the search did not end", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the open still waits for the token service after 20 s")
	}
}
