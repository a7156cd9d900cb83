//go:build unix

package sessions

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
)

// TestBucketFileReadsNothingThroughALink: a file:// session bucket read
// while another process swaps its folders reads nothing outside it. After
// the listing named a document, its folder is swapped for a link to a folder
// outside holding a document of the same name — under a plain key, and under
// a key with a tab, which fileblob keeps in a folder "tab__0x9__dir" — or the
// document is swapped for a FIFO: its Open fails at once (ErrNotRegular),
// and no byte of the outside documents is read. A document under an escaped
// key read before still is. Before, the source read through fileblob, which
// opened through the link (and waited on the FIFO for ever).
func TestBucketFileReadsNothingThroughALink(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "bucket"), filepath.Join(base, "outside")
	inside := "/srv/agent/.forge/files/inbound/inside.png"
	writeFile(t, filepath.Join(dir, "acme", "t-1.json"), forgeSession("t-1", inside))
	writeFile(t, filepath.Join(dir, "tab__0x9__dir", "t-2.json"), forgeSession("t-2", inside))
	writeFile(t, filepath.Join(dir, "fifo__0x9__dir", "t-3.json"), forgeSession("t-3", inside))
	writeFile(t, filepath.Join(dir, "ok__0x9__dir", "t-4.json"), forgeSession("t-4", inside))
	for _, n := range []string{"t-1.json", "t-2.json"} {
		writeFile(t, filepath.Join(outside, n), forgeSession("secret", "/private/SECRET.png"))
	}
	swap := func(folder string) {
		if err := os.Rename(folder, folder+".moved"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, folder); err != nil {
			t.Fatal(err)
		}
	}
	src, err := Open(context.Background(), fileURL(dir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// Not waited on for ever: gocloud's Close waits for a read stuck
		// opening a FIFO, and a regression must fail, not hang.
		closed := make(chan struct{})
		go func() { src.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Error("Close blocked: a read is still under way")
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opened := map[string]error{}
	read := map[string]string{}
	done := make(chan error, 1)
	go func() {
		_, err := src.Walk(ctx, func(it Item) error {
			doc := it.Place.Document
			switch doc {
			case "acme/t-1.json":
				swap(filepath.Join(dir, "acme"))
			case "tab\tdir/t-2.json":
				swap(filepath.Join(dir, "tab__0x9__dir"))
			case "fifo\tdir/t-3.json":
				p := filepath.Join(dir, "fifo__0x9__dir", "t-3.json")
				if err := os.Remove(p); err != nil {
					return err
				}
				if err := syscall.Mkfifo(p, 0o600); err != nil {
					return err
				}
			}
			if it.Err != nil || it.Open == nil {
				opened[doc] = it.Err
				return nil
			}
			rc, err := it.Open()
			opened[doc] = err
			if err == nil {
				b, rerr := io.ReadAll(rc)
				rc.Close()
				read[doc] = string(b)
				opened[doc] = rerr
			}
			return nil
		})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Walk: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the walk has not ended in 20s: a read waits on the FIFO")
	}
	for _, doc := range []string{"acme/t-1.json", "tab\tdir/t-2.json", "fifo\tdir/t-3.json"} {
		err, seen := opened[doc]
		switch {
		case !seen:
			t.Errorf("%q was not listed", doc)
		case !errors.Is(err, store.ErrNotRegular):
			t.Errorf("%q swapped after the listing: Open = %v, read %q; want ErrNotRegular", doc, err, read[doc])
		case !strings.Contains(err.Error(), doc):
			t.Errorf("%q: the error %q does not name it", doc, err)
		}
	}
	if err := opened["ok\tdir/t-4.json"]; err != nil || !strings.Contains(read["ok\tdir/t-4.json"], inside) {
		t.Errorf("the document under an escaped key: %v, read %q", err, read["ok\tdir/t-4.json"])
	}
	for doc, b := range read {
		if strings.Contains(b, "SECRET") {
			t.Errorf("%q read a document outside the bucket: %s", doc, b)
		}
	}
}
