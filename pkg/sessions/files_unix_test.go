//go:build unix

package sessions

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFilesFIFO: a named pipe with a session's name is skipped, never opened
// (opening it would block until a writer came along).
func TestFilesFIFO(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), `{}`)
	if err := syscall.Mkfifo(filepath.Join(dir, "b.json"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var docs []string
	c, err := openFiles(t, dir).Walk(ctx, func(it Item) error {
		docs = append(docs, filepath.Base(it.Place.Document))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0] != "a.json" || c != (Counts{Documents: 1, Skipped: 1}) {
		t.Fatalf("documents %q, counts %+v; want a.json and the pipe skipped", docs, c)
	}
}
