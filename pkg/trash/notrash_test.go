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
