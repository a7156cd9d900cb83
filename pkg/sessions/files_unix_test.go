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

// TestFilesOpenThroughLink: a document listed through a symbolic link is
// opened through it; a link that no longer leads to a regular file (here a
// named pipe, which must not block) is refused.
func TestFilesOpenThroughLink(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "s.json"), `{"v":1}`)
	link := filepath.Join(dir, "s.json")
	if err := os.Symlink(filepath.Join(other, "s.json"), link); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	var item Item
	if _, err := openFiles(t, dir).Walk(context.Background(), func(it Item) error { item = it; return nil }); err != nil {
		t.Fatal(err)
	}
	if item.Open == nil || item.Place.Document != link {
		t.Fatalf("item = %+v, want the linked document", item)
	}
	// Renamed over at its target, as forge writes: still read.
	if err := forgeWrite(filepath.Join(other, "s.json"), `{"v":2}`); err != nil {
		t.Fatal(err)
	}
	r, err := item.Open()
	if err != nil {
		t.Fatalf("Open after the target was rewritten: %v", err)
	}
	r.Close()
	// The target replaced by a pipe: refused, without blocking.
	if err := os.Remove(filepath.Join(other, "s.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(other, "s.json"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		r, err := item.Open()
		if err == nil {
			r.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Open read a named pipe through the link")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open blocked on a named pipe")
	}
}
