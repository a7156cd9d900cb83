//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file a writer renames over a blob after the blob's check and before its
// move is not the blob that was checked: the move puts it back, and says the
// blob changed; the name keeps the writer's file.
func TestMoveEntryPutsBackAFileSwappedInAfterTheCheck(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.png"), []byte("checked"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(entryStat) error {
		// The writer saves the blob again, the way runtimes do: a new
		// file beside it, renamed over it.
		tmp := filepath.Join(dir, ".a.png.tmp")
		if err := os.WriteFile(tmp, []byte("saved again"), 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, filepath.Join(dir, "a.png"))
	}
	err = s.moveEntry("a.png", s, "b.png", check, false)
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("move = %v, want ErrChanged", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.png")); err != nil || string(b) != "saved again" {
		t.Fatalf("a.png after the move: %q, %v; want the writer's file", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "b.png")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("b.png after the move: %v; want nothing there", err)
	}
	// Without a writer, the move moves.
	if err := s.moveEntry("a.png", s, "b.png", func(entryStat) error { return nil }, false); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b.png")); err != nil || string(b) != "saved again" {
		t.Fatalf("b.png: %q, %v", b, err)
	}
}

// A runtime that re-uses a blob it finds present freshens its modification
// time (package persist). A freshen that lands between the blob's check and
// its move leaves the same file, newer: the move puts it back and says the
// blob changed, so a blob a session is about to name stays in the store.
func TestMoveEntryPutsBackABlobFreshenedAfterTheCheck(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		dir := t.TempDir()
		old := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Second)
		blob := filepath.Join(dir, "a.png")
		if err := os.WriteFile(blob, []byte("in use"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(blob, old, old); err != nil {
			t.Fatal(err)
		}
		s, err := OpenLocal(dir)
		if err != nil {
			t.Fatal(err)
		}
		if fallback {
			withLinkFallback(t, nil)
		}
		freshened := false
		check := func(st entryStat) error {
			if !st.mtime.Equal(old) {
				return ErrChanged
			}
			if !freshened {
				// The runtime finds the blob and freshens it, as git
				// freshens an object it would have written.
				freshened = true
				now := time.Now()
				if err := os.Chtimes(blob, now, now); err != nil {
					t.Fatal(err)
				}
			}
			return nil
		}
		err = s.moveEntry("a.png", s, "b.png", check, false)
		if !errors.Is(err, ErrChanged) {
			t.Fatalf("fallback %v: move = %v, want ErrChanged", fallback, err)
		}
		if b, err := os.ReadFile(blob); err != nil || string(b) != "in use" {
			t.Fatalf("fallback %v: a.png after the move: %q, %v; want it back", fallback, b, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "b.png")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("fallback %v: b.png after the move: %v; want nothing there", fallback, err)
		}
		s.Close()
		forceLinkFallback, afterLinkHook = false, nil
	}
}

// withLinkFallback makes moves work for the test as where renameat2 is
// missing (macOS, the BSDs, NFS, CIFS): a hard link, then the source's
// removal; hook runs in between.
func withLinkFallback(t *testing.T, hook func()) {
	forceLinkFallback, afterLinkHook = true, hook
	t.Cleanup(func() { forceLinkFallback, afterLinkHook = false, nil })
}

// Without renameat2, a writer that saves the blob again between the link
// into the trash and the removal of the blob's name must keep its file: the
// removal takes exactly the file linked, and the writer's file stays the
// blob. Unlinking the name would delete the writer's file, with the checked
// blob in the trash and nothing in the store.
func TestLinkFallbackKeepsAFileSavedAfterTheLink(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "a.png"), []byte("checked"), 0o600))
	s, err := OpenLocal(dir)
	must(err)
	defer s.Close()
	saves := 0
	withLinkFallback(t, func() {
		saves++
		tmp := filepath.Join(dir, ".a.png.tmp")
		must(os.WriteFile(tmp, []byte("saved again"), 0o600))
		must(os.Rename(tmp, filepath.Join(dir, "a.png")))
	})
	to := InternalDir + "/trash/run/a.png"
	must(os.MkdirAll(filepath.Join(dir, InternalDir, "trash", "run"), 0o700))
	if err := s.moveEntry("a.png", s, to, func(entryStat) error { return nil }, true); err != nil {
		t.Fatalf("move: %v", err)
	}
	if saves != 1 {
		t.Fatalf("the link fallback ran %d times, want 1", saves)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.png")); err != nil || string(b) != "saved again" {
		t.Errorf("a.png after the move: %q, %v; want the writer's file", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(to))); err != nil || string(b) != "checked" {
		t.Errorf("%s: %q, %v; want the blob checked", to, b, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, InternalDir, "trash", "run", "*.unlinking")); len(left) > 0 {
		t.Errorf("left beside the move: %v", left)
	}
}

// Without renameat2 and without a writer, a move moves, into the internal
// folder and back out of it (restore), and replaces nothing.
func TestLinkFallbackMoves(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.png"), []byte("blob"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	withLinkFallback(t, nil)
	ok := func(entryStat) error { return nil }
	to := InternalDir + "/trash/run/a.png"
	if err := os.MkdirAll(filepath.Join(dir, InternalDir, "trash", "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.moveEntry("a.png", s, to, ok, true); err != nil {
		t.Fatalf("move into the trash: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a.png after its move: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.png"), []byte("saved since"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.moveEntry(to, s, "a.png", ok, true); !errors.Is(err, os.ErrExist) {
		t.Errorf("restore over a saved file: %v, want ErrExist", err)
	}
	if err := os.Remove(filepath.Join(dir, "a.png")); err != nil {
		t.Fatal(err)
	}
	if err := s.moveEntry(to, s, "a.png", ok, true); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.png")); err != nil || string(b) != "blob" {
		t.Errorf("a.png restored: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(to))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after the restore: %v", to, err)
	}
}
