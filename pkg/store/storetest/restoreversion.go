package storetest

import (
	"errors"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

// testRestoreVersion: a store that restores deleted blobs from the versions
// its service keeps never replaces a key that holds a blob (ErrExist, the
// blob unchanged), reports a key it keeps no matching version of
// (ErrNoVersion), and on a service it does not restore on says so
// (*VersionRestoreUnsupportedError) and changes nothing. Restoring an
// actual version is tested where a server keeps versions (S3 with
// versioning enabled, pkg/store and pkg/gc).
func testRestoreVersion(t *testing.T, s store.Store) {
	vr, ok := store.AsVersionRestorer(s)
	if !ok {
		t.Skip("does not restore from versions")
	}
	put(t, s, "here.png", "here", store.PutOptions{})
	e, err := s.Stat(ctx, "here.png")
	if err != nil {
		t.Fatal(err)
	}
	var unsupported *store.VersionRestoreUnsupportedError
	_, err = vr.RestoreVersion(ctx, "here.png", store.Version{Size: e.Size, ModTime: e.ModTime, ETag: e.ETag})
	switch {
	case errors.As(err, &unsupported):
		if unsupported.Scheme == "" {
			t.Errorf("RestoreVersion: %v names no scheme", err)
		}
		t.Logf("not implemented here: %v", err)
	case !errors.Is(err, store.ErrExist):
		t.Errorf("RestoreVersion of a key that holds a blob: %v, want ErrExist", err)
	}
	if got := read(t, s, "here.png"); got != "here" {
		t.Errorf("after RestoreVersion the blob holds %q", got)
	}
	_, err = vr.RestoreVersion(ctx, "never.png", store.Version{Size: 5})
	if !errors.As(err, &unsupported) && !errors.Is(err, store.ErrNoVersion) {
		t.Errorf("RestoreVersion of a key never written: %v, want ErrNoVersion", err)
	}
	wantKeys(t, s, "", "here.png")
}
