package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/usage"
)

// TestOpenS3WithoutCredentials: no credentials anywhere is one usage error
// naming the service, at open, not an SDK chain on every request.
func TestOpenS3WithoutCredentials(t *testing.T) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	_, err := store.Open(context.Background(), "s3://media?region=us-east-1&endpoint=http://127.0.0.1:9&use_path_style=true")
	var ce *store.CredentialsError
	if !errors.As(err, &ce) || ce.Scheme != "s3" || !errors.Is(err, usage.Err) {
		t.Fatalf("Open = %v, want a CredentialsError that is a usage error", err)
	}
	// anonymous=true asks for none.
	st, err := store.Open(context.Background(), "s3://media?region=us-east-1&endpoint=http://127.0.0.1:9&use_path_style=true&anonymous=true")
	if err != nil {
		t.Fatalf("anonymous: %v", err)
	}
	st.Close()
}

// TestOpenS3EndpointNeedsPathStyle: a custom endpoint that virtual-host
// addressing cannot reach is refused with the fix, before any request.
func TestOpenS3EndpointNeedsPathStyle(t *testing.T) {
	srv := storetest.StartS3(t, nil) // sets static credentials
	for _, ep := range []string{"http://127.0.0.1:9000", "http://localhost:9000", "http://[::1]:9000"} {
		_, err := store.Open(context.Background(), "s3://media?region=us-east-1&endpoint="+ep)
		var ee *store.EndpointError
		if !errors.As(err, &ee) || !errors.Is(err, usage.Err) {
			t.Errorf("%s: Open = %v, want an EndpointError", ep, err)
		}
	}
	st, err := store.Open(context.Background(), srv.Bucket(t, "ok"))
	if err != nil {
		t.Fatalf("path style: %v", err)
	}
	st.Close()
}
