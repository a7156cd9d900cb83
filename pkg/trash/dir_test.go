package trash_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// savedAfterStat is a store with its trash in another folder whose Stat,
// once it has described a blob, lets a writer save that blob again (a temp
// file renamed over it, as forge saves): the moment between the sweep's
// check and its move.
type savedAfterStat struct {
	trashDirStore
	save func(key string)
}

type trashDirStore interface {
	store.Store
	store.Internal
	store.CheckedInternalMover
}

func (s *savedAfterStat) Stat(ctx context.Context, key string) (store.Entry, error) {
	e, err := s.trashDirStore.Stat(ctx, key)
	s.save(key)
	return e, err
}

// TestTrashDirKeepsWhatAWriterSavesAfterTheCheck: with the trash in another
// folder, a blob a writer saves again between the sweep's check and its move
// stays in the store, with the writer's bytes, and the run says why; the
// move checks the file it renames. Before, the writer's new file went to the
// trash, and a purge would have removed it for good.
func TestTrashDirKeepsWhatAWriterSavesAfterTheCheck(t *testing.T) {
	root := t.TempDir()
	dir, trashDir := filepath.Join(root, "store"), filepath.Join(root, "trash")
	must(t, os.MkdirAll(dir, 0o700))
	must(t, os.MkdirAll(trashDir, 0o700))
	old := time.Now().Add(-72 * time.Hour)
	var items trash.List
	for _, c := range []string{"saved again", "left alone"} {
		key := name(c)
		must(t, os.WriteFile(filepath.Join(dir, key), []byte(c), 0o600))
		must(t, os.Chtimes(filepath.Join(dir, key), old, old))
		items = append(items, trash.Item{Key: key, Size: int64(len(c)), ModTime: old})
	}
	ls, err := store.OpenLocal(dir)
	must(t, err)
	defer ls.Close()
	td, err := store.OpenLocal(trashDir)
	must(t, err)
	defer td.Close()
	resaved := items[0].Key
	st := &savedAfterStat{trashDirStore: trash.WithDir(ls, td).(trashDirStore), save: func(key string) {
		if key != resaved {
			return
		}
		tmp := filepath.Join(dir, ".tmp-save")
		must(t, os.WriteFile(tmp, []byte("the writer's new bytes"), 0o600))
		must(t, os.Rename(tmp, filepath.Join(dir, key)))
	}}

	res, err := trash.Move(context.Background(), locktest.Of(t, st), items, trash.Options{})
	must(t, err)
	if b, err := os.ReadFile(filepath.Join(dir, resaved)); err != nil || string(b) != "the writer's new bytes" {
		t.Fatalf("the blob saved after the check: the store holds %q (%v), want the writer's file", b, err)
	}
	if res.Trashed != 1 || len(res.Skipped) != 1 || res.Skipped[0].Key != resaved || !strings.Contains(res.Skipped[0].Reason, "changed since the plan") {
		t.Fatalf("trashed %d, skipped %v; want the other blob trashed and this one kept as changed", res.Trashed, res.Skipped)
	}
	if _, err := os.Stat(filepath.Join(trashDir, res.Run, items[1].Key)); err != nil {
		t.Errorf("the blob left alone is not in the trash run: %v", err)
	}
}

// TestUnclaimedFolderIsNoTrash: a folder no run moved the store's blobs into
// (it records no store) holds no trash of it, however its folders are named:
// opened for what makes no run (gc runs, restore, purge), it is refused and
// left as it was, unclaimed, its files in place. An export folder whose
// nightly folder starts with a time stamp, as a run's name does.
func TestUnclaimedFolderIsNoTrash(t *testing.T) {
	base := t.TempDir()
	must(t, os.Mkdir(filepath.Join(base, "store"), 0o700))
	st, err := store.OpenLocal(filepath.Join(base, "store"))
	must(t, err)
	dir := filepath.Join(base, "exports")
	dump := filepath.Join(dir, "20260101T000000Z-nightly", "db", "dump.sql")
	must(t, os.MkdirAll(filepath.Dir(dump), 0o700))
	must(t, os.WriteFile(dump, []byte("important dump\n"), 0o600))

	_, err = trash.PeekDirStore(st, dir)
	var ue *trash.UnclaimedError
	if !errors.As(err, &ue) || ue.Dir != dir || !strings.Contains(err.Error(), dir) {
		t.Errorf("PeekDirStore of a folder no run moved blobs into = %v, want an *UnclaimedError naming it", err)
	}
	if _, err := os.Stat(filepath.Join(dir, store.InternalDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the folder was claimed: %v", err)
	}
	if b, err := os.ReadFile(dump); err != nil || string(b) != "important dump\n" {
		t.Errorf("the folder's file: %q, %v", b, err)
	}

	// The open of a run that moves blobs into it claims it; from then on it
	// is the store's trash.
	_, err = trash.DirStore(st, dir)
	must(t, err)
	_, err = trash.PeekDirStore(st, dir)
	must(t, err)
}
