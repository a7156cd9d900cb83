//go:build unix

package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

// TestUnsafeDestination: a destination folder that is a link or a file fails
// the move with ErrUnsafePath (never ErrNotExist or ErrNotRegular, which
// would read as facts about the source), leaves the source in place and
// writes nothing through the link; a folder on the way to the source that is
// a link means the key is no regular file of the store. Both with openat2 and
// with the walk taken where it is refused.
func TestUnsafeDestination(t *testing.T) {
	for _, walk := range []bool{false, true} {
		s, dir, outside := newLocal(t)
		if walk {
			store.WalkOnly(s)
		}
		other, err := store.OpenLocal(outside)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		writeFile(t, filepath.Join(dir, "a", "blob"), "blob")
		writeFile(t, filepath.Join(dir, store.InternalDir, "trash"), "a file, not a folder")
		writeFile(t, filepath.Join(outside, "q", "x"), "outside")
		symlink(t, filepath.Join(outside, "q"), filepath.Join(dir, "b"))
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(os.MkdirAll(filepath.Join(outside, "dst"), 0o700))
		symlink(t, outside, filepath.Join(outside, "dst", "link"))

		unsafe := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, store.ErrUnsafePath) || errors.Is(err, store.ErrNotExist) || errors.Is(err, store.ErrNotRegular) {
				t.Errorf("walk=%v: %s = %v, want ErrUnsafePath only", walk, what, err)
			}
		}
		unsafe("MoveToInternal into a trash that is a file", s.MoveToInternal(ctx, "a/blob", "trash/r/a/blob"))
		errs := s.MoveManyToInternal(ctx, []store.InternalMove{{Key: "a/blob", Name: "trash/r/a/blob"}, {Key: "a/blob", Name: "journal/x"}})
		unsafe("MoveManyToInternal into a trash that is a file", errs[0])
		if !errors.Is(errs[1], store.ErrNotAttempted) {
			t.Errorf("walk=%v: the move after an unsafe one = %v, want ErrNotAttempted", walk, errs[1])
		}
		unsafe("Rename below a link", s.Rename(ctx, "a/blob", "b/blob"))
		unsafe("Rename below a link, deeper", s.Rename(ctx, "a/blob", "b/new/blob"))
		unsafe("Rename below a file", s.Rename(ctx, "a/blob", "a/blob/below"))
		unsafe("MoveTo below a link of the other store", s.MoveTo(ctx, "a/blob", other, "dst/link/blob"))
		if got := readFile(t, filepath.Join(dir, "a", "blob")); got != "blob" {
			t.Errorf("walk=%v: the source moved: %q", walk, got)
		}
		for _, p := range []string{filepath.Join(outside, "q", "blob"), filepath.Join(outside, "q", "new"), filepath.Join(outside, "blob")} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("walk=%v: %s was written through a link", walk, p)
			}
		}
		// The source side: through a link, no regular file; the link's
		// target is neither moved nor removed.
		if err := s.Rename(ctx, "b/x", "c/x"); !errors.Is(err, store.ErrNotRegular) {
			t.Errorf("walk=%v: Rename of b/x = %v, want ErrNotRegular", walk, err)
		}
		if err := s.Delete(ctx, "b/x"); !errors.Is(err, store.ErrNotRegular) {
			t.Errorf("walk=%v: Delete of b/x = %v, want ErrNotRegular", walk, err)
		}
		if got := readFile(t, filepath.Join(outside, "q", "x")); got != "outside" {
			t.Errorf("walk=%v: the link's target changed: %q", walk, got)
		}
		// A move that is safe creates its folders and goes through.
		must(s.Rename(ctx, "a/blob", "d/e/f/blob"))
		must(s.MoveTo(ctx, "d/e/f/blob", other, "dst/g/h/blob"))
		if got := readFile(t, filepath.Join(outside, "dst", "g", "h", "blob")); got != "blob" {
			t.Errorf("walk=%v: moved content %q", walk, got)
		}
		if err := s.Delete(ctx, "d/e/f/blob"); !errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), "d/e/f/blob") {
			t.Errorf("walk=%v: Delete of a moved blob = %v, want ErrNotExist naming the key", walk, err)
		}
	}
}
