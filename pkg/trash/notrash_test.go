package trash_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// undeletable is a local store whose deletions from its internal folder fail
// for the names fail holds: what a file system that refuses an unlink looks
// like to a sweep.
type undeletable struct {
	*store.LocalStore
	fail map[string]bool
}

func (u *undeletable) Drops() store.Features { return 0 }

func (u *undeletable) DeleteManyInternal(ctx context.Context, under string, names []string) []error {
	var pass []string
	var at []int
	errs := make([]error, len(names))
	for i, n := range names {
		if u.fail[filepath.Base(n)] {
			errs[i] = errors.New("unlink refused")
			continue
		}
		pass = append(pass, n)
		at = append(at, i)
	}
	for j, err := range u.LocalStore.DeleteManyInternal(ctx, under, pass) {
		errs[at[j]] = err
	}
	return errs
}

// TestNoTrashUndeletableStaysInATrashRun: a blob that a sweep without the
// trash moved out of the store and then could not delete is not lost from
// sight: it is in a trash run the result names, counted as trashed, listed by
// Runs and restorable, and the sweep returns an error saying so.
func TestNoTrashUndeletableStaysInATrashRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	list, _ := writeABC(t, dir)
	ls, err := store.OpenLocal(dir)
	must(t, err)
	defer ls.Close()
	st := &undeletable{LocalStore: ls, fail: map[string]bool{"b.png": true}}
	if _, ok := store.AsBatchMover(st); !ok {
		t.Fatal("the wrapper lost the batch move")
	}
	l := locktest.Of(t, st)
	res, err := trash.Move(ctx, l, list, trash.Options{NoTrash: true})
	if err == nil || !strings.Contains(err.Error(), "1 blobs taken out of") || !strings.Contains(err.Error(), "unlink refused") {
		t.Fatalf("sweep error %v, want one naming the blob left in the trash", err)
	}
	if res.Deleted != 2 || res.Trashed != 1 || !strings.HasSuffix(res.Run, "-no-trash") || res.Bytes != 3*int64(len("bytes of a.png")) {
		t.Fatalf("result %+v", res)
	}
	for _, k := range []string{"a.png", "b.png", "c.png"} {
		if _, err := os.Lstat(filepath.Join(dir, k)); !os.IsNotExist(err) {
			t.Errorf("%s still in the store: %v", k, err)
		}
	}
	runs, err := trash.Runs(ctx, ls)
	must(t, err)
	if len(runs) != 1 || runs[0].Run != res.Run || runs[0].Blobs != 1 {
		t.Fatalf("runs %+v, want %s with b.png", runs, res.Run)
	}
	rr, err := trash.Restore(ctx, l, res.Run)
	must(t, err)
	if rr.Restored != 1 {
		t.Fatalf("restore %+v", rr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b.png")); err != nil || string(b) != "bytes of b.png" {
		t.Fatalf("b.png after the restore: %q, %v", b, err)
	}
}

// TestFolderRemovedMidBatch: another process removes a folder the sweep
// emptied before the batch's folders are synced, so the move of the blob it
// held fails after its rename. The blob is in the run, not in the store: with
// the trash or without, the result counts it there and names the run, and
// the sweep fails saying so, instead of reporting it "gone since the plan".
// Without the trash it is not deleted either: its move did not succeed.
func TestFolderRemovedMidBatch(t *testing.T) {
	for _, noTrash := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-trash=%v", noTrash), func(t *testing.T) { folderRemovedMidBatch(t, noTrash) })
	}
}

func folderRemovedMidBatch(t *testing.T, noTrash bool) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	var list trash.List
	add := func(k, content string) {
		p := filepath.Join(dir, k)
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(content), 0o600))
		must(t, os.Chtimes(p, old, old))
		list = append(list, trash.Item{Key: k, Size: int64(len(content)), ModTime: old})
	}
	add("a/x.png", "blob x")
	// Enough after it that the batch's sync comes long after its move.
	const n = 20000
	for i := range n {
		add(fmt.Sprintf("b/%05d.png", i), fmt.Sprintf("blob %d", i))
	}
	st, err := store.OpenLocal(dir)
	must(t, err)
	defer st.Close()
	removed := make(chan bool, 1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				removed <- false
				return
			default:
			}
			if _, err := os.Lstat(filepath.Join(dir, "a", "x.png")); os.IsNotExist(err) && os.Remove(filepath.Join(dir, "a")) == nil {
				removed <- true
				return
			}
		}
	}()
	res, err := trash.Move(context.Background(), locktest.Of(t, st), list, trash.Options{NoTrash: noTrash})
	close(stop)
	if !<-removed {
		t.Skip("the folder was not removed before the sweep ended")
	}
	moved := filepath.Join(dir, store.InternalDir, trash.Dir, res.Run, "a", "x.png")
	if b, rerr := os.ReadFile(moved); rerr != nil || string(b) != "blob x" {
		t.Fatalf("a/x.png in the run %q: %q, %v", res.Run, b, rerr)
	}
	if !errors.Is(err, trash.ErrLeftInRun) || !strings.Contains(err.Error(), res.Run) || strings.HasSuffix(res.Run, "-no-trash") != noTrash {
		t.Errorf("sweep error %v, run %q; want an error naming the run", err, res.Run)
	}
	wantTrashed, wantDeleted := int64(n+1), int64(0)
	if noTrash {
		wantTrashed, wantDeleted = 1, n
	}
	if res.Trashed != wantTrashed || res.Deleted != wantDeleted || len(res.Skipped) != 0 || len(res.Failed) != 0 {
		t.Errorf("trashed %d, deleted %d, skipped %v, failed %v; want %d trashed, %d deleted", res.Trashed, res.Deleted, res.Skipped, res.Failed, wantTrashed, wantDeleted)
	}
	runs, err := trash.Runs(context.Background(), st)
	must(t, err)
	if len(runs) != 1 || runs[0].Run != res.Run || runs[0].Blobs != wantTrashed {
		t.Errorf("runs %+v, want the run with its %d blobs", runs, wantTrashed)
	}
}
