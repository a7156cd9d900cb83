//go:build linux

package trash_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
)

// TestNoTrashKeepsWhatAWriterSavesAgain: a sweep without the trash on a local
// store, while a writer saves blobs again the way forge does (a temporary
// file beside the blob, renamed over it) right behind the sweep: as soon as
// the sweep has taken blob i-1 out, the writer saves blob i, so that its save
// lands around the sweep's check of blob i. A file the writer saved is never
// the blob the sweep checked, and must be in the store afterwards, whether
// the save came before the check (the blob changed: kept), after it (the
// writer's file replaced a name the sweep had already emptied), or in between.
// A sweep that checks a blob and then unlinks its name loses the files saved
// in between.
func TestNoTrashKeepsWhatAWriterSavesAgain(t *testing.T) {
	const pairs = 3000
	dir := t.TempDir()
	old := time.Now().Add(-72 * time.Hour)
	var items trash.List
	keys := make([]string, 0, 2*pairs)
	for i := range 2 * pairs {
		content := fmt.Sprintf("blob %d", i)
		key := name(content)
		keys = append(keys, key)
		p := filepath.Join(dir, key)
		must(t, os.WriteFile(p, []byte(content), 0o600))
		must(t, os.Chtimes(p, old, old))
	}
	st, err := store.OpenLocal(dir)
	must(t, err)
	t.Cleanup(func() { st.Close() })
	// The sweep takes the blobs in this order: the writer follows it.
	for _, k := range keys {
		e, err := st.Stat(context.Background(), k)
		must(t, err)
		items = append(items, trash.Item{Key: k, Size: e.Size, ModTime: e.ModTime})
	}

	// The writer's new files wait beside the blobs, so that saving one
	// again is a single rename.
	for i := 1; i < len(keys); i += 2 {
		must(t, os.WriteFile(filepath.Join(dir, "."+keys[i]+".tmp"), []byte("saved again"), 0o600))
	}
	gone := func(i int) bool {
		_, err := os.Lstat(filepath.Join(dir, keys[i]))
		return errors.Is(err, fs.ErrNotExist)
	}
	var done atomic.Bool
	saved := make(chan []string)
	go func() {
		var out []string
		for i := 0; i+1 < len(keys) && !done.Load(); i += 2 {
			// Catch up with the sweep: the first blob i it has not taken
			// yet (the writer only ever touches the blobs after them), then
			// wait for the sweep to take it and save blob i+1 again at once.
			for i+3 < len(keys) && gone(i) {
				i += 2
			}
			for !done.Load() && !gone(i) {
			}
			if done.Load() {
				break
			}
			if err := os.Rename(filepath.Join(dir, "."+keys[i+1]+".tmp"), filepath.Join(dir, keys[i+1])); err != nil {
				t.Error(err)
				break
			}
			out = append(out, keys[i+1])
		}
		saved <- out
	}()
	res := sweepBesideWriter(t, st, items, trash.Options{NoTrash: true}, &done, saved, func(k string) error {
		if b, err := os.ReadFile(filepath.Join(dir, k)); err != nil || string(b) != "saved again" {
			return fmt.Errorf("%q, %v; want the writer's file", b, err)
		}
		return nil
	})
	if got := res.Deleted + int64(len(res.Skipped)) + int64(len(res.Failed)) + res.NotAttempted; got != int64(len(items)) {
		t.Errorf("deleted %d + skipped %d + failed %d + not attempted %d = %d, want %d", res.Deleted, len(res.Skipped), len(res.Failed), res.NotAttempted, got, len(items))
	}
	// Nothing is left behind in the store's internal folder: the blobs
	// deleted are gone for good.
	if runs, err := trash.Runs(context.Background(), st); err != nil || len(runs) != 0 {
		t.Errorf("trash runs after a sweep without the trash: %v, %v", runs, err)
	}
	if left, err := os.ReadDir(filepath.Join(dir, store.InternalDir, trash.Dir)); err == nil && len(left) > 0 {
		t.Errorf("the trash folder holds %d entries after a sweep without the trash (%s, …)", len(left), left[0].Name())
	}
	t.Logf("%d deleted, %d kept", res.Deleted, len(res.Skipped))
}
