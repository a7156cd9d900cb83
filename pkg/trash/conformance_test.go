package trash_test

import (
	"os"
	"path/filepath"
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
