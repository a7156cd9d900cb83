package persist_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/persist"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// planOld writes content into a forge inbound folder with Put, dates it 30
// days ago, and returns the folder, the blob, and the blob as gc's plan
// describes it.
func planOld(t *testing.T, content string) (string, persist.Blob, trash.List) {
	t.Helper()
	inbound := filepath.Join(t.TempDir(), ".forge", "files", "inbound")
	b, err := persist.Put(inbound, strings.NewReader(content), ".png", persist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Second)
	if err := os.Chtimes(b.Path, old, old); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	return inbound, b, trash.List{{Key: b.Name, Size: fi.Size(), ModTime: fi.ModTime()}}
}

// sweep runs gc's move of list out of the store in dir, under the store's
// lock.
func sweep(t *testing.T, dir string, list trash.List) *trash.Result {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := storelock.Acquire(ctx, st, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	res, err := trash.Move(ctx, l, list, trash.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestFreshenedBlobIsNotMoved is the contract with mediactl's gc: a blob in
// gc's plan that a runtime re-uses with Put before the sweep reaches it is
// left in the store, reported as changed since the plan.
func TestFreshenedBlobIsNotMoved(t *testing.T) {
	const content = "an old picture a new session sends again"
	dir, b, plan := planOld(t, content)

	again, err := persist.Put(dir, strings.NewReader(content), ".png", persist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Written {
		t.Fatalf("Put = %+v, want the blob freshened", again)
	}

	res := sweep(t, dir, plan)
	if res.Trashed != 0 || res.Deleted != 0 || len(res.Failed) != 0 || len(res.Skipped) != 1 || res.Skipped[0].Key != b.Name {
		t.Fatalf("sweep result %+v, want %s skipped", res, b.Name)
	}
	if !strings.Contains(res.Skipped[0].Reason, "changed since the plan") {
		t.Errorf("skipped because %q", res.Skipped[0].Reason)
	}
	got, err := os.ReadFile(b.Path)
	if err != nil {
		t.Fatalf("the blob is not in the store: %v", err)
	}
	if string(got) != content {
		t.Fatalf("blob holds %q", got)
	}
}

// TestSkippedWriteIsMoved is the same sweep without the freshen, as a
// writer that skips the write of bytes already there leaves it: the blob
// goes to the trash although the runtime re-used it.
func TestSkippedWriteIsMoved(t *testing.T) {
	dir, b, plan := planOld(t, "an old picture, re-used without a freshen")
	res := sweep(t, dir, plan)
	if res.Trashed != 1 || len(res.Skipped) != 0 {
		t.Fatalf("sweep result %+v, want %s trashed", res, b.Name)
	}
	if _, err := os.Lstat(b.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the blob is still in the store: %v", err)
	}
}

// TestPutAfterSweepWritesAnew: a blob gc moved before the runtime re-used
// it is found gone, and Put writes it again; a sweep of the stale plan then
// leaves the new file alone.
func TestPutAfterSweepWritesAnew(t *testing.T) {
	const content = "moved to the trash, then sent again"
	dir, b, plan := planOld(t, content)
	if res := sweep(t, dir, plan); res.Trashed != 1 {
		t.Fatalf("sweep result %+v, want %s trashed", res, b.Name)
	}
	if err := persist.Freshen(b.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Freshen of a trashed blob = %v, want an error wrapping fs.ErrNotExist", err)
	}

	again, err := persist.Put(dir, strings.NewReader(content), ".png", persist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Written {
		t.Fatalf("Put = %+v, want the blob written anew", again)
	}
	res := sweep(t, dir, plan)
	if res.Trashed != 0 || len(res.Skipped) != 1 {
		t.Fatalf("second sweep result %+v, want %s skipped", res, b.Name)
	}
	got, err := os.ReadFile(b.Path)
	if err != nil || string(got) != content {
		t.Fatalf("blob holds %q (%v)", got, err)
	}
}
