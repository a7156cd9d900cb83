package gc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// TestUnusableTrashFailsTheRun: when the trash cannot take a blob (the
// store's trash folder is a file or a symbolic link, or a trash directory's
// run folder is a file), Execute fails the run with ErrUnusableTrash: nothing
// is moved, no candidate is reported as gone or skipped, and the link's
// target is untouched.
func TestUnusableTrashFailsTheRun(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	now := time.Now().Add(-time.Minute)
	cases := []struct {
		name    string
		trashed func(t *testing.T, f *fixture) store.Store // makes the trash unusable
	}{
		{"trash folder is a file", func(t *testing.T, f *fixture) store.Store {
			must(t, os.MkdirAll(filepath.Join(f.inbound, store.InternalDir), 0o700))
			must(t, os.WriteFile(filepath.Join(f.inbound, store.InternalDir, trash.Dir), []byte("not a folder"), 0o600))
			return f.st
		}},
		{"trash folder is a symbolic link", func(t *testing.T, f *fixture) store.Store {
			must(t, os.MkdirAll(filepath.Join(f.inbound, store.InternalDir), 0o700))
			must(t, os.Symlink(filepath.Join(f.root, "victim"), filepath.Join(f.inbound, store.InternalDir, trash.Dir)))
			return f.st
		}},
		{"run folder is a symbolic link", func(t *testing.T, f *fixture) store.Store {
			trashDir := filepath.Join(f.inbound, store.InternalDir, trash.Dir)
			must(t, os.MkdirAll(trashDir, 0o700))
			must(t, os.Symlink(filepath.Join(f.root, "victim"), filepath.Join(trashDir, trash.RunID(now))))
			return f.st
		}},
		{"trash directory's run folder is a file", func(t *testing.T, f *fixture) store.Store {
			dir := filepath.Join(f.root, "trashdir")
			must(t, os.MkdirAll(dir, 0o700))
			must(t, os.WriteFile(filepath.Join(dir, trash.RunID(now)), []byte("not a folder"), 0o600))
			td, err := trash.AtDir(f.st, dir, trash.MoveInto)
			must(t, err)
			t.Cleanup(func() { td.Close() })
			return td
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			victim := filepath.Join(f.root, "victim")
			must(t, os.MkdirAll(victim, 0o700))
			var blobs []string
			for i := range 5 {
				blobs = append(blobs, f.blob(t, strings.Repeat("x", i+1), 72*time.Hour))
			}
			f.session(t, "s.json")
			st := tc.trashed(t, f)
			p, err := gc.MakePlan(context.Background(), gc.Options{Store: st, Sessions: []sessions.Source{f.src}})
			must(t, err)
			if p.Candidates.Len() != len(blobs) {
				t.Fatalf("plan has %d candidates, want %d", p.Candidates.Len(), len(blobs))
			}
			res, err := p.Execute(context.Background(), locktest.Of(t, st), gc.ExecOptions{Now: now})
			if !errors.Is(err, trash.ErrUnusable) || !errors.Is(err, store.ErrUnsafePath) {
				t.Fatalf("Execute = %v, want ErrUnusableTrash wrapping store.ErrUnsafePath", err)
			}
			if errors.Is(err, store.ErrNotExist) || errors.Is(err, store.ErrNotRegular) {
				t.Errorf("the trash's fault reads as a fact about a blob: %v", err)
			}
			// The run's record, written before the first move, meets the
			// trash: no skip, no failure, nothing moved, nothing attempted.
			if res == nil || res.Trashed != 0 || len(res.Skipped) != 0 || len(res.Failed) != 0 || res.NotAttempted != 5 {
				t.Fatalf("result %+v", res)
			}
			if !strings.Contains(err.Error(), "0 blobs moved, 5 not attempted") {
				t.Errorf("error does not count the run: %v", err)
			}
			for _, k := range blobs {
				if _, err := os.Lstat(filepath.Join(f.inbound, k)); err != nil {
					t.Errorf("blob %s left the store: %v", k, err)
				}
			}
			if des, err := os.ReadDir(victim); err != nil || len(des) != 0 {
				t.Errorf("something was moved through the link: %v, %v", des, err)
			}
		})
	}
}
