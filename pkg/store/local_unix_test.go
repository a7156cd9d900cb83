//go:build unix

package store_test

import (
	"errors"
	"io/fs"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
)

func TestLocalNonRegular(t *testing.T) {
	s, dir, _ := newLocal(t)
	writeFile(t, filepath.Join(dir, "a"), "a")
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Unix socket paths are limited to ~100 bytes; skip the socket if the temp dir is deep.
	sock := filepath.Join(dir, "sock")
	withSocket := len(sock) < 100
	if withSocket {
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}

	got := listAll(t, s, "")
	if e := got["fifo"]; e.Mode&fs.ModeNamedPipe == 0 || e.Regular() {
		t.Errorf("fifo listed as %+v", e)
	}
	if e := got["sock"]; withSocket && (e.Mode&fs.ModeSocket == 0 || e.Regular()) {
		t.Errorf("socket listed as %+v", e)
	}
	if e, err := s.Stat(ctx, "fifo"); err != nil || e.Mode&fs.ModeNamedPipe == 0 {
		t.Errorf("Stat(fifo) = %+v, %v", e, err)
	}

	// Opening a FIFO would block until a writer comes: it must be refused at once.
	done := make(chan error, 1)
	go func() {
		r, err := s.Open(ctx, "fifo")
		if r != nil {
			r.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrNotRegular) {
			t.Errorf("Open(fifo) = %v, want ErrNotRegular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open(fifo) blocked")
	}
	if withSocket {
		if _, err := s.Open(ctx, "sock"); !errors.Is(err, store.ErrNotRegular) {
			t.Errorf("Open(sock) = %v, want ErrNotRegular", err)
		}
	}
	if err := s.Delete(ctx, "fifo"); !errors.Is(err, store.ErrNotRegular) {
		t.Errorf("Delete(fifo) = %v, want ErrNotRegular", err)
	}
	if err := s.Rename(ctx, "fifo", "f2"); !errors.Is(err, store.ErrNotRegular) {
		t.Errorf("Rename(fifo) = %v, want ErrNotRegular", err)
	}
	// With IfNotExist, a FIFO is an existing key like any other.
	if err := s.Put(ctx, "fifo", strings.NewReader("now a file"), store.PutOptions{IfNotExist: true}); !errors.Is(err, store.ErrExist) {
		t.Errorf("Put(fifo, IfNotExist) = %v, want ErrExist", err)
	}
	// /dev/null reached through a link inside the store is never opened.
	symlink(t, "/dev/null", filepath.Join(dir, "devnull"))
	if _, err := s.Open(ctx, "devnull"); !errors.Is(err, store.ErrNotRegular) {
		t.Errorf("Open(devnull) = %v, want ErrNotRegular", err)
	}
}
