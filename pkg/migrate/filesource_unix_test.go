//go:build unix

package migrate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/store"
)

// swappedAfterListing is a bucket whose listing is taken whole, after which
// swap runs before a single blob is read: another process swapping a folder
// for a link, or a file for a FIFO, between the listing and the copies.
type swappedAfterListing struct {
	store.Bucket
	swap func()
}

func (s swappedAfterListing) List(ctx context.Context, prefix string, fn func(store.Entry) error) error {
	var listed []store.Entry
	if err := s.Bucket.List(ctx, prefix, func(e store.Entry) error {
		listed = append(listed, e)
		return nil
	}); err != nil {
		return err
	}
	s.swap()
	for _, e := range listed {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// TestCopyFileSourceReadsNothingOutside: migrate from a file:// bucket
// whose folders, after the listing, are swapped for a link to a private
// folder outside holding blobs of the same names (and the right bytes for
// them) — a plain folder and one with a tab in its name, which fileblob
// keeps as "tab__0x9__dir" — or one of whose blobs, under a key with a tab,
// is swapped for a FIFO: those blobs fail, at once, and none is uploaded or
// journaled as copied; the run is incomplete. The untouched blob, under an
// escaped key too, is copied. Before, migrate copied the files outside into
// the destination, journaled them as copied and exited 0, and a FIFO under
// an escaped key held the run for ever.
func TestCopyFileSourceReadsNothingOutside(t *testing.T) {
	t.Run("link", func(t *testing.T) { copySwapped(t, false) })
	t.Run("fifo", func(t *testing.T) { copySwapped(t, true) })
}

func copySwapped(t *testing.T, fifo bool) {
	base := t.TempDir()
	srcDir, dstDir, outside := filepath.Join(base, "src"), filepath.Join(base, "dst"), filepath.Join(base, "private")
	for _, d := range []string{srcDir, dstDir, outside} {
		must(t, os.MkdirAll(d, 0o700))
	}
	src, err := store.Open(context.Background(), "file://"+srcDir)
	must(t, err)
	t.Cleanup(func() {
		// Not waited on for ever: gocloud's Close waits for a read stuck
		// opening a FIFO, and a regression must fail, not hang.
		closed := make(chan struct{})
		go func() { src.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Error("Close blocked: a read is still under way")
		}
	})
	dst := openStore(t, "file://"+dstDir)
	blob := func(s string) ([]byte, string) {
		b := append(append([]byte{}, pngHead...), s...)
		return b, digest(b) + ".png"
	}
	plainB, plain := blob("plain folder")
	tabB, tab := blob("folder with a tab")
	fifoB, fifoName := blob("a FIFO after the listing")
	keptB, kept := blob("untouched")
	blobs := map[string][]byte{"ok\tdir/" + kept: keptB}
	var swapped []string
	if fifo {
		blobs["fifo\tdir/"+fifoName] = fifoB
		swapped = []string{"fifo\tdir/" + fifoName}
	} else {
		blobs["inbound/"+plain] = plainB
		blobs["tab\tdir/"+tab] = tabB
		swapped = []string{"inbound/" + plain, "tab\tdir/" + tab}
		must(t, os.WriteFile(filepath.Join(outside, plain), plainB, 0o600))
		must(t, os.WriteFile(filepath.Join(outside, tab), tabB, 0o600))
	}
	for k, b := range blobs {
		must(t, src.Put(context.Background(), k, strings.NewReader(string(b)), store.PutOptions{}))
	}
	swap := func() {
		if fifo {
			p := filepath.Join(srcDir, "fifo__0x9__dir", fifoName)
			must(t, os.Remove(p))
			must(t, syscall.Mkfifo(p, 0o600))
			return
		}
		for _, d := range []string{"inbound", "tab__0x9__dir"} {
			must(t, os.Rename(filepath.Join(srcDir, d), filepath.Join(base, d+".moved")))
			must(t, os.Symlink(outside, filepath.Join(srcDir, d)))
		}
	}
	j := journal(t, filepath.Join(base, "journal.jsonl"))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rep *migrate.Report
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep, err = migrate.Copy(ctx, migrate.Options{From: swappedAfterListing{src.(store.Bucket), swap}, To: dst, Journal: j})
	}()
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		t.Fatal("migrate has not ended in 40s: a read waits on the FIFO")
	}
	must(t, err)
	if rep.Interrupted {
		t.Fatalf("the run reached its deadline: %+v", rep)
	}
	if rep.Copied != 1 || rep.Failed != int64(len(swapped)) || rep.Complete() || rep.Outcome() != outcome.Incomplete {
		t.Errorf("report: copied %d, failed %d (%+v), complete %v, outcome %v; want 1 copied, %d failed, incomplete (exit 3)", rep.Copied, rep.Failed, rep.FailedList, rep.Complete(), rep.Outcome(), len(swapped))
	}
	want := "symbolic link"
	if fifo {
		want = "FIFO"
	}
	for _, p := range rep.FailedList {
		if !strings.Contains(p.Reason, want) {
			t.Errorf("%q failed for %q, want %q named", p.Key, p.Reason, want)
		}
	}
	for _, key := range swapped {
		if _, err := dst.Stat(context.Background(), key); !isNotExist(err) {
			t.Errorf("%q is in the destination (%v): read through the swap", key, err)
		}
		if _, ok := j.Proven(key); ok {
			t.Errorf("%q is journaled as copied", key)
		}
	}
	if got := readObject(t, dst, "ok\tdir/"+kept); string(got) != string(keptB) {
		t.Errorf("the untouched blob under an escaped key: %q", got)
	}
}
