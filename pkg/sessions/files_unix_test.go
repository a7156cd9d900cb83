//go:build unix

package sessions

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFilesFIFO: a named pipe or a socket, even with a session's name, is
// reported as unread, never opened (opening a pipe would block until a writer
// came along).
func TestFilesFIFO(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), `{}`)
	if err := syscall.Mkfifo(filepath.Join(dir, "b.json"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sock := filepath.Join(dir, "c.json")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []Item
	c, err := openFiles(t, dir).Walk(ctx, func(it Item) error {
		got = append(got, it)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Open == nil || c != (Counts{Documents: 1, Unread: 2}) {
		t.Fatalf("items %+v, counts %+v; want a.json, then the pipe and the socket unread", got, c)
	}
	for i, want := range []string{"a named pipe", "a socket"} {
		var ue *UnreadError
		if it := got[i+1]; !errors.As(it.Err, &ue) || ue.Reason != want || ue.Path != it.Place.Document {
			t.Errorf("item %d = %+v, want an UnreadError saying %q", i+1, it, want)
		}
	}
}

// TestFilesUnreadable: a folder or a document the operator cannot read is a
// problem confined to it; an unreadable top folder fails the walk. Root reads
// everything, so as root the test runs as uid 65534.
func TestFilesUnreadable(t *testing.T) {
	if os.Geteuid() == 0 && !asNobodyChild(t) {
		runAsNobody(t)
		return
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "x.json"), `{}`)
	writeFile(t, filepath.Join(dir, "b.json"), `{}`)
	writeFile(t, filepath.Join(dir, "c.json"), `{}`)
	if err := os.Chmod(filepath.Join(dir, "a"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(dir, "a"), 0o755)
	if err := os.Chmod(filepath.Join(dir, "b.json"), 0); err != nil {
		t.Fatal(err)
	}
	var got []Item
	c, err := openFiles(t, dir).Walk(context.Background(), func(it Item) error {
		got = append(got, it)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if len(got) != 3 || got[0].Err == nil || got[0].Place.Document != filepath.Join(dir, "a") ||
		got[1].Err == nil || got[1].Place.Document != filepath.Join(dir, "b.json") || got[2].Open == nil {
		t.Fatalf("items = %+v, want errors for a and b.json, then c.json", got)
	}
	if c != (Counts{Documents: 1}) {
		t.Errorf("counts = %+v", c)
	}
	if _, err := openFiles(t, filepath.Join(dir, "a")).Walk(context.Background(), func(Item) error { return nil }); err == nil {
		t.Error("Walk of an unreadable top folder: no error")
	}
}
