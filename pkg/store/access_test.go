package store_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// probeKind opens spec and probes it; it returns the AccessError's kind, or
// "" when the store reads (or fails otherwise).
func probeKind(t *testing.T, spec string) store.AccessKind {
	t.Helper()
	st, err := store.Open(ctx, spec)
	if err != nil {
		err = store.Classify(spec, err)
	} else {
		defer st.Close()
		err = store.Probe(ctx, st)
	}
	var ae *store.AccessError
	if !errors.As(err, &ae) {
		if err != nil {
			t.Logf("%s: %v (not an access error)", spec, err)
		}
		return ""
	}
	if !errors.Is(err, store.ErrUsage) {
		t.Errorf("%s: an AccessError that is no usage error: %v", spec, err)
	}
	return ae.Kind
}

// TestProbeSeaweedFS: a wrong secret key and a mistyped bucket are access
// errors (usage, exit 2); the right bucket reads.
func TestProbeSeaweedFS(t *testing.T) {
	srv := storetest.SeaweedFS(t)
	good := srv.Bucket(t, "probe")
	if k := probeKind(t, good); k != "" {
		t.Fatalf("the bucket: %s", k)
	}
	if k := probeKind(t, "s3://no-such-bucket-mediactl?"+srv.Query()); k != store.NoSuchBucket {
		t.Errorf("a missing bucket: %q, want %q", k, store.NoSuchBucket)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
	if k := probeKind(t, good); k != store.BadCredentials {
		t.Errorf("a wrong secret key: %q, want %q", k, store.BadCredentials)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "nobody")
	if k := probeKind(t, good); k != store.BadCredentials {
		t.Errorf("an unknown access key: %q, want %q", k, store.BadCredentials)
	}
}

// TestProbeAzurite: a wrong account key and a missing container.
func TestProbeAzurite(t *testing.T) {
	srv := storetest.StartAzurite(t)
	good := srv.Container(t, "probe")
	if k := probeKind(t, good); k != "" {
		t.Fatalf("the container: %s", k)
	}
	if k := probeKind(t, "azblob://no-such-container-mediactl?"+srv.Query()); k != store.NoSuchBucket {
		t.Errorf("a missing container: %q, want %q", k, store.NoSuchBucket)
	}
	// Azure answers a request signed with the wrong key with
	// AuthenticationFailed; Azurite with AuthorizationFailure. Either is a
	// refusal to fix, not to retry.
	t.Setenv("AZURE_STORAGE_KEY", "bm90IHRoZSBrZXk=")
	if k := probeKind(t, good); k != store.BadCredentials && k != store.Denied {
		t.Errorf("a wrong key: %q, want %q or %q", k, store.BadCredentials, store.Denied)
	}
}

// TestProbeGCSAndFile: a missing GCS bucket (fake-gcs-server) and a missing
// file:// folder.
func TestProbeGCSAndFile(t *testing.T) {
	g := storetest.StartGCS(t)
	if k := probeKind(t, g.Bucket(t, "probe")); k != "" {
		t.Fatalf("the bucket: %s", k)
	}
	if k := probeKind(t, "gs://no-such-bucket-mediactl"); k != store.NoSuchBucket {
		t.Errorf("a missing GCS bucket: %q, want %q", k, store.NoSuchBucket)
	}
	if k := probeKind(t, "file://"+filepath.Join(t.TempDir(), "nope")); k != store.NoSuchBucket {
		t.Errorf("a missing file:// folder: %q, want %q", k, store.NoSuchBucket)
	}
	if k := probeKind(t, "file://"+t.TempDir()); k != "" {
		t.Errorf("a file:// folder: %q", k)
	}
}
