package trash_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// The --trash-dir store stands in front of a local store wherever a store
// is used (gc, migrate's delete-source and rollback, restore, purge): it runs
// the suite every store kind runs, unchanged.

// TestDirStoreConformance runs the store suite on DirStore, the store a run
// that moves blobs into the folder works through.
func TestDirStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		st, dir := storeAndTrashDir(t)
		ts, err := trash.DirStore(st, dir)
		must(t, err)
		return ts
	})
}

// TestPeekDirStoreConformance runs the suite on PeekDirStore, the store a dry
// run, restore and purge work through, on a folder a run has claimed.
func TestPeekDirStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		st, dir := storeAndTrashDir(t)
		claim, err := trash.DirStore(st, dir)
		must(t, err)
		must(t, claim.Close())
		ts, err := trash.PeekDirStore(st, dir)
		must(t, err)
		return ts
	})
}

// storeAndTrashDir is a new, empty local store and a folder beside it, on
// the same file system, for its trash.
func storeAndTrashDir(t *testing.T) (*store.LocalStore, string) {
	t.Helper()
	base := t.TempDir()
	must(t, os.Mkdir(filepath.Join(base, "store"), 0o700))
	st, err := store.OpenLocal(filepath.Join(base, "store"))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	return st, filepath.Join(base, "trash")
}

// TestDirStoreCloseReleasesFolder: Close of the store DirStore and
// PeekDirStore open gives up the trash folder they opened (the store whose
// trash it is stays its caller's): a process that opens one per run does
// not keep a descriptor of each folder.
func TestDirStoreCloseReleasesFolder(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	for _, open := range []struct {
		name string
		fn   func(store.Store, string) (store.Store, error)
	}{{"DirStore", trash.DirStore}, {"PeekDirStore", trash.PeekDirStore}} {
		t.Run(open.name, func(t *testing.T) {
			st, dir := storeAndTrashDir(t)
			claim, err := trash.DirStore(st, dir)
			must(t, err)
			must(t, claim.Close())
			ts, err := open.fn(st, dir)
			must(t, err)
			if openFDs(t, dir) == 0 {
				t.Fatalf("no descriptor of %s while the store is open", dir)
			}
			must(t, ts.Close())
			if n := openFDs(t, dir); n != 0 {
				t.Errorf("%d descriptors of %s left open after Close", n, dir)
			}
			if _, err := st.Stat(context.Background(), "missing"); !errors.Is(err, store.ErrNotExist) {
				t.Errorf("the wrapped store is not usable after the wrapper's Close: %v", err)
			}
		})
	}
}

// openFDs counts this process's descriptors of dir or of anything below it.
func openFDs(t *testing.T, dir string) int {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	must(t, err)
	des, err := os.ReadDir("/proc/self/fd")
	must(t, err)
	n := 0
	for _, de := range des {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", de.Name()))
		if err == nil && (target == real || strings.HasPrefix(target, real+"/")) {
			n++
		}
	}
	return n
}
