package trash_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
)

// TestTrashBlobs: listed blobs go to a trash run that Restore puts back; one
// that changed since it was described stays in the store.
func TestTrashBlobs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	var list trash.List
	for _, k := range []string{"a.png", "b.png", "c.png"} {
		must(t, os.WriteFile(filepath.Join(dir, k), []byte("bytes of "+k), 0o600))
		must(t, os.Chtimes(filepath.Join(dir, k), old, old))
		list = append(list, trash.Item{Key: k, Size: int64(len("bytes of " + k)), ModTime: old})
	}
	// c.png is rewritten after it was described.
	must(t, os.WriteFile(filepath.Join(dir, "c.png"), []byte("new bytes of c"), 0o600))
	st, err := store.Open(ctx, dir)
	must(t, err)
	defer st.Close()
	res, err := trash.Move(ctx, lockOf(t, st), list, trash.Options{})
	must(t, err)
	if res.Trashed != 2 || len(res.Skipped) != 1 || res.Skipped[0].Key != "c.png" {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.png")); !os.IsNotExist(err) {
		t.Fatalf("a.png still in the store: %v", err)
	}
	rr, err := trash.Restore(ctx, lockOf(t, st), res.Run)
	must(t, err)
	if rr.Restored != 2 {
		t.Fatalf("restore %+v", rr)
	}
	for _, k := range []string{"a.png", "b.png"} {
		b, err := os.ReadFile(filepath.Join(dir, k))
		must(t, err)
		fi, _ := os.Stat(filepath.Join(dir, k))
		if string(b) != "bytes of "+k || !fi.ModTime().Equal(old) {
			t.Fatalf("%s restored as %q at %v", k, b, fi.ModTime())
		}
	}
}
