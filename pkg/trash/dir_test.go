package trash_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// TestDirStoreRefusesAnotherStoresTrash: a trash folder records the store
// whose trash it holds when first used; given to another store it is
// refused, with both stores named, before any run of it can be listed,
// restored into the wrong store or purged. The store that owns it reopens it
// by any spelling (here through a link).
func TestDirStoreRefusesAnotherStoresTrash(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	for _, d := range []string{"a", "b", "trash"} {
		must(t, os.Mkdir(filepath.Join(base, d), 0o700))
	}
	must(t, os.Symlink(filepath.Join(base, "b"), filepath.Join(base, "b-link")))
	a, err := store.OpenLocal(filepath.Join(base, "a"))
	must(t, err)
	b, err := store.OpenLocal(filepath.Join(base, "b"))
	must(t, err)
	content := "blob of store b"
	key := name(content)
	must(t, b.Put(ctx, key, strings.NewReader(content), store.PutOptions{}))
	e, err := b.Stat(ctx, key)
	must(t, err)
	dir := filepath.Join(base, "trash")
	bt, err := trash.DirStore(b, dir)
	must(t, err)
	var res *trash.Result
	t.Run("b trashes", func(t *testing.T) { // b's lock is released at its end
		res, err = trash.Move(ctx, locktest.Of(t, bt), trash.List{{Key: key, Size: e.Size, ModTime: e.ModTime}}, trash.Options{})
		must(t, err)
	})
	if res == nil || res.Trashed != 1 {
		t.Fatalf("trashed: %+v", res)
	}

	_, err = trash.DirStore(a, dir)
	var oe *trash.OwnerError
	if !errors.As(err, &oe) {
		t.Fatalf("DirStore of another store on b's trash folder = %v, want an *OwnerError", err)
	}
	realB, _ := store.RealPath(filepath.Join(base, "b"))
	realA, _ := store.RealPath(filepath.Join(base, "a"))
	if oe.Owner != realB || oe.Store != realA || !strings.Contains(err.Error(), realB) || !strings.Contains(err.Error(), realA) {
		t.Errorf("error %q (owner %q, store %q), want both stores named: %s owns it, %s asked", err, oe.Owner, oe.Store, realB, realA)
	}
	if _, err := a.Stat(ctx, key); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("store a has b's blob: %v", err)
	}

	bl, err := store.OpenLocal(filepath.Join(base, "b-link"))
	must(t, err)
	bt2, err := trash.DirStore(bl, dir)
	must(t, err)
	runs, err := trash.Runs(ctx, bt2)
	must(t, err)
	if len(runs) != 1 || runs[0].Run != res.Run {
		t.Fatalf("runs %+v, want b's run %s", runs, res.Run)
	}
	rr, err := trash.Restore(ctx, locktest.Of(t, bt2), res.Run)
	must(t, err)
	if rr.Restored != 1 {
		t.Errorf("restored %d, want 1", rr.Restored)
	}
	if _, err := b.Stat(ctx, key); err != nil {
		t.Errorf("b's blob is not back: %v", err)
	}
}
