//go:build unix

package sessions

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
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

// inode is a file's inode number.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// readWhileWalking walks src and reads each document when it is yielded, as
// the scan does (what a walk passes over is not read later). It returns what
// was read under each path (slash, relative to dir; versions joined by ";")
// and the Items with Err.
func readWhileWalking(t *testing.T, src Source, dir string) (map[string]string, []error) {
	t.Helper()
	read := map[string]string{}
	var errs []error
	_, err := src.Walk(context.Background(), func(it Item) error {
		switch {
		case it.Err != nil:
			errs = append(errs, it.Err)
		case it.Open != nil:
			r, err := it.Open()
			if err != nil {
				return err
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, it.Place.Document)
			read[filepath.ToSlash(rel)] += string(b) + ";"
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return read, errs
}

// TestFilesInodeReusedByNewSession: on ext4 a freed inode is handed out again
// at once. A session read early in the walk is removed (or saved again, which
// frees its old inode), and a new session saved the forge way (tmp + rename)
// into a folder not walked yet gets the freed inode. The new session is still
// read: a file read before is known by more than its device and inode.
func TestFilesInodeReusedByNewSession(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "a", "t-1.json")
	writeFile(t, old, `{"task_id":"t-1"}`)
	writeFile(t, filepath.Join(dir, "z", "t-0.json"), `{}`)
	freed := inode(t, old)
	newDoc := filepath.Join(dir, "z", "t-9.json")
	reused, done := false, false
	walkDirHook = func(p string) {
		if p != filepath.Join(dir, "z") || done {
			return
		}
		done = true
		if err := os.Remove(old); err != nil {
			t.Error(err)
		}
		// The same size as the removed session: only the change time tells
		// the two apart, so wait out the clock's granularity (a few ms).
		time.Sleep(20 * time.Millisecond)
		if err := forgeWrite(newDoc, `{"task_id":"t-9"}`); err != nil {
			t.Error(err)
		}
		reused = inode(t, newDoc) == freed
	}
	defer func() { walkDirHook = nil }()
	read, errs := readWhileWalking(t, openFiles(t, dir), dir)
	if !done {
		t.Fatal("the hook did not run")
	}
	if !reused {
		t.Skip("the filesystem did not hand the freed inode to the new session")
	}
	if read["z/t-9.json"] != `{"task_id":"t-9"};` {
		t.Errorf("z/t-9.json (the inode of the removed a/t-1.json) read as %q, errors %v; want it read once", read["z/t-9.json"], errs)
	}
}

// TestFilesInodeCycledBack: a session saved twice the forge way while the
// walk runs can end up on the inode it had when it was listed (X, then Y,
// then X again). Its latest version is still read.
func TestFilesInodeCycledBack(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "a", "t-1.json")
	writeFile(t, doc, `{"v":1}`)
	writeFile(t, filepath.Join(dir, "b", "t-2.json"), `{}`)
	first := inode(t, doc)
	cycled, done := false, false
	walkDirHook = func(p string) {
		if p != filepath.Join(dir, "b") || done {
			return
		}
		done = true
		time.Sleep(20 * time.Millisecond) // the change time must move (same size)
		for _, v := range []string{`{"v":2}`, `{"v":3}`} {
			if err := forgeWrite(doc, v); err != nil {
				t.Error(err)
			}
		}
		cycled = inode(t, doc) == first
	}
	defer func() { walkDirHook = nil }()
	read, errs := readWhileWalking(t, openFiles(t, dir), dir)
	if !done {
		t.Fatal("the hook did not run")
	}
	if !cycled {
		t.Skip("the filesystem did not hand the first inode back")
	}
	if !strings.HasSuffix(read["a/t-1.json"], `{"v":3};`) {
		t.Errorf("a/t-1.json read as %q, errors %v; want its latest version {\"v\":3} read", read["a/t-1.json"], errs)
	}
}
