//go:build unix

package verify_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/verify"
)

// swappedAfterListing is a bucket whose listing is taken whole, after which
// swap runs before a single blob is read: another process swapping a folder
// for a link, or a file for a FIFO, between the listing and the reads.
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

// openFileBucket opens the file:// bucket on dir; it is closed when the test
// ends, without waiting for ever on a read stuck on a FIFO (gocloud's Close
// waits for it): a regression fails, it does not hang.
func openFileBucket(t *testing.T, dir string) store.Bucket {
	t.Helper()
	st, err := store.Open(context.Background(), "file://"+dir)
	must(t, err)
	t.Cleanup(func() {
		closed := make(chan struct{})
		go func() { st.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Error("Close blocked: a read is still under way")
		}
	})
	return st.(store.Bucket)
}

// TestFileBucketReadsNothingOutside: verify of a file:// bucket whose
// folders are swapped, after the listing, for a link to a folder outside
// holding the same names with the right bytes — a plain folder, and one with
// a tab in its name that fileblob keeps as "tab__0x9__dir" — or one of whose
// blobs under an escaped key is swapped for a FIFO, calls those blobs
// unreadable, at once, and the run incomplete; it never hashes a file
// outside as if it were the blob. The untouched blob under an escaped key is
// verified. Before, verify read the files outside and called them ok, and
// the FIFO held the run for ever.
func TestFileBucketReadsNothingOutside(t *testing.T) {
	t.Run("link", func(t *testing.T) { verifySwapped(t, false) })
	t.Run("fifo", func(t *testing.T) { verifySwapped(t, true) })
}

func verifySwapped(t *testing.T, fifo bool) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "bucket"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		must(t, os.MkdirAll(d, 0o700))
	}
	st := openFileBucket(t, dir)
	folders := []string{"inbound", "tab\tdir", "ok\tdir"}
	if fifo {
		folders = []string{"fifo\tdir", "ok\tdir"}
	}
	for _, folder := range folders {
		b := []byte("the bytes of a picture in " + folder)
		key := folder + "/" + name(b, ".png")
		must(t, st.Put(context.Background(), key, bytes.NewReader(b), store.PutOptions{}))
		if folder == "inbound" || folder == "tab\tdir" {
			must(t, os.WriteFile(filepath.Join(outside, name(b, ".png")), b, 0o600))
		}
	}
	swap := func() {
		if fifo {
			entries, err := os.ReadDir(filepath.Join(dir, "fifo__0x9__dir"))
			must(t, err)
			for _, e := range entries {
				p := filepath.Join(dir, "fifo__0x9__dir", e.Name())
				must(t, os.Remove(p))
				must(t, syscall.Mkfifo(p, 0o600))
			}
			return
		}
		for _, d := range []string{"inbound", "tab__0x9__dir"} {
			must(t, os.Rename(filepath.Join(dir, d), filepath.Join(base, d+".moved")))
			must(t, os.Symlink(outside, filepath.Join(dir, d)))
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rep *verify.Report
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep, err = verify.Run(ctx, verify.Options{Store: swappedAfterListing{st, swap}})
	}()
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		t.Fatal("verify has not ended in 40s: a read waits on the FIFO")
	}
	must(t, err)
	if rep.Interrupted || rep.Complete || rep.Outcome(false) != outcome.Incomplete {
		t.Errorf("interrupted %v, complete %v, outcome %v: want an incomplete run that ran to its end (exit 3)", rep.Interrupted, rep.Complete, rep.Outcome(false))
	}
	want, why := int64(len(folders)-1), "symbolic link"
	if fifo {
		why = "FIFO"
	}
	if rep.Counts[verify.OK] != 1 || rep.Counts[verify.Unreadable] != want {
		t.Errorf("counts %v: want 1 ok (the untouched blob) and %d unreadable", rep.Counts, want)
	}
	for _, r := range rep.Unreadable {
		if !strings.Contains(r.Err, why) {
			t.Errorf("%q unreadable for %q, want %q named", r.Key, r.Err, why)
		}
		if strings.HasPrefix(r.Key, "ok\t") {
			t.Errorf("the untouched blob is unreadable: %s", r.Err)
		}
	}
}

// TestFileBucketQuarantineCopiesNothingOutside: a corrupt blob of a
// file:// bucket, under a key with a tab, whose folder is swapped for a link
// to a folder outside (holding the same corrupt bytes under its name) after
// verify found it, is kept: the quarantine's re-read and copy read nothing
// through the link, and nothing outside is copied into the quarantine.
// Before, the copy read the file outside through fileblob.
func TestFileBucketQuarantineCopiesNothingOutside(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir, qdir, outside := filepath.Join(base, "bucket"), filepath.Join(base, "quarantine"), filepath.Join(base, "outside")
	for _, d := range []string{dir, qdir, outside} {
		must(t, os.MkdirAll(d, 0o700))
	}
	st := openFileBucket(t, dir)
	rotted := []byte("bit-rotted bytes, private")
	key := "bad\tdir/" + name([]byte("the good bytes"), ".png")
	must(t, st.Put(ctx, key, bytes.NewReader(rotted), store.PutOptions{}))
	rep, err := verify.Run(ctx, verify.Options{Store: st})
	must(t, err)
	if len(rep.Corrupt) != 1 {
		t.Fatalf("%d corrupt, want 1", len(rep.Corrupt))
	}
	must(t, os.WriteFile(filepath.Join(outside, filepath.Base(key)), rotted, 0o600))
	must(t, os.Rename(filepath.Join(dir, "bad__0x9__dir"), filepath.Join(base, "moved")))
	must(t, os.Symlink(outside, filepath.Join(dir, "bad__0x9__dir")))

	q, err := store.Open(ctx, "file://"+qdir)
	must(t, err)
	defer q.Close()
	l, err := storelock.Acquire(ctx, st, "test")
	must(t, err)
	defer l.Release(ctx)
	qr, err := verify.Quarantine(ctx, l, q, rep.Corrupt, time.Now())
	must(t, err)
	if len(qr.Moved) != 0 || len(qr.Kept) != 1 || !strings.Contains(qr.Kept[0].Err, "symbolic link") {
		t.Errorf("moved %+v, kept %+v: want the blob kept, the link named", qr.Moved, qr.Kept)
	}
	filepath.WalkDir(qdir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, rotted) {
				t.Errorf("%s in the quarantine holds the file outside", p)
			}
		}
		return nil
	})
	if b, err := os.ReadFile(filepath.Join(outside, filepath.Base(key))); err != nil || !bytes.Equal(b, rotted) {
		t.Errorf("the file outside: %q, %v", b, err)
	}
}
