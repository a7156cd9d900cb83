//go:build unix

package store_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
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

// TestDeleteManyInternalLinks: a link in the run is removed, never followed;
// a folder of the run swapped for a link to outside fails the removals
// through it; nothing outside the store is touched, and a name given twice
// or a large batch in one folder ends with every named file gone.
func TestDeleteManyInternalLinks(t *testing.T) {
	s, dir, outside := newLocal(t)
	ctx := context.Background()
	run := filepath.Join(dir, store.InternalDir, "trash", "r")
	var names []string
	for i := range 3000 {
		n := fmt.Sprintf("trash/r/inbound/%064x.png", i)
		names = append(names, n)
		writeFile(t, filepath.Join(dir, store.InternalDir, n), "x")
	}
	writeFile(t, filepath.Join(outside, "victim"), "keep")
	writeFile(t, filepath.Join(outside, "sub", "victim"), "keep")
	if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(run, "inbound", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "sub"), filepath.Join(run, "swapped")); err != nil {
		t.Fatal(err)
	}
	batch := append(slices.Clone(names), "trash/r/inbound/link", names[7], "trash/r/swapped/victim")
	errs := s.DeleteManyInternal(ctx, "trash/r", batch)
	for i, err := range errs[:len(errs)-1] {
		if err != nil {
			t.Errorf("delete %s: %v", batch[i], err)
		}
	}
	if err := errs[len(errs)-1]; err == nil {
		t.Errorf("delete through a folder swapped for a link: no error")
	}
	if left, _ := os.ReadDir(filepath.Join(run, "inbound")); len(left) != 0 {
		t.Errorf("%d entries left in the run's inbound folder, want none", len(left))
	}
	for _, p := range []string{filepath.Join(outside, "victim"), filepath.Join(outside, "sub", "victim")} {
		if b, err := os.ReadFile(p); err != nil || string(b) != "keep" {
			t.Errorf("%s outside the store: %q, %v; want it untouched", p, b, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(run, "swapped")); err != nil {
		t.Errorf("the link swapped in for a folder: %v, want it left", err)
	}
}
