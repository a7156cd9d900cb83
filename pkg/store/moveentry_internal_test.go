//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
