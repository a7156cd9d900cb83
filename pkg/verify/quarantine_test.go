package verify_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/verify"
)

// listedBefore is a bucket as its listing was just before a writer
// replaced one object: the listing shows the object's old size.
type listedBefore struct {
	store.Bucket
	key  string
	size int64
}

func (s listedBefore) List(ctx context.Context, prefix string, fn func(store.Entry) error) error {
	return s.Bucket.List(ctx, prefix, func(e store.Entry) error {
		if e.Key == s.key {
			e.Size = s.size
		}
		return fn(e)
	})
}

// TestFastQuarantineKeepsAnIntactBlob: --fast calls a blob corrupt when its
// listed size differs from its stored one (a writer replaced it between the
// listing and the check), though its sha256 metadata matches its name; its
// bytes were never seen to differ, and quarantine leaves it in the store.
// Before, its stored digest counted as the corrupt one and the intact blob
// was moved out.
func TestFastQuarantineKeepsAnIntactBlob(t *testing.T) {
	ctx := context.Background()
	dir, qdir := t.TempDir(), t.TempDir()
	st, err := store.Open(ctx, "file://"+dir)
	must(t, err)
	defer st.Close()
	good := []byte("the good, complete content of an image")
	key := name(good, ".png")
	must(t, st.Put(ctx, key, bytes.NewReader(good), store.PutOptions{Metadata: map[string]string{"sha256": key[:64]}}))
	rep, err := verify.Run(ctx, verify.Options{Store: listedBefore{st.(store.Bucket), key, 7}, Fast: true})
	must(t, err)
	if len(rep.Corrupt) != 1 {
		t.Fatalf("the fast check found %d corrupt, want the blob whose size changed", len(rep.Corrupt))
	}
	q, err := store.Open(ctx, "file://"+qdir)
	must(t, err)
	defer q.Close()
	l, err := storelock.Acquire(ctx, st, "test")
	must(t, err)
	defer l.Release(ctx)
	qr, err := verify.Quarantine(ctx, l, q, rep.Corrupt, time.Now())
	must(t, err)
	if len(qr.Moved) != 0 {
		t.Errorf("moved %+v", qr.Moved)
	}
	if b, err := os.ReadFile(filepath.Join(dir, key)); err != nil || !bytes.Equal(b, good) {
		t.Fatalf("the intact blob in the store: %q, %v", b, err)
	}
}

// repairedWhileHashed is a local store on which a runtime repairs a corrupt
// blob (good bytes renamed over it) while quarantine hashes it again.
type repairedWhileHashed struct {
	*store.LocalStore
	repair func()
}

func (s *repairedWhileHashed) Drops() store.Features { return 0 }

func (s *repairedWhileHashed) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	rc, err := s.LocalStore.Open(ctx, key)
	if err == nil && s.repair != nil {
		s.repair()
		s.repair = nil
	}
	return rc, err
}

// TestQuarantineKeepsABlobRepairedWhileHashed: the hash that finds the blob
// still corrupt reads the file it opened; the rename then takes only that
// file (same size and time), so the repaired one stays in the store.
// Before, the rename took whatever was at the name: the good file.
func TestQuarantineKeepsABlobRepairedWhileHashed(t *testing.T) {
	ctx := context.Background()
	dir, qdir := t.TempDir(), t.TempDir()
	good := []byte("good bytes of the picture")
	key := name(good, ".png")
	must(t, os.WriteFile(filepath.Join(dir, key), []byte("bit-rotted bytes"), 0o600))
	old := time.Now().Add(-time.Hour)
	must(t, os.Chtimes(filepath.Join(dir, key), old, old))
	ls, err := store.OpenLocal(dir)
	must(t, err)
	defer ls.Close()
	rep, err := verify.Run(ctx, verify.Options{Store: ls})
	must(t, err)
	if len(rep.Corrupt) != 1 {
		t.Fatalf("%d corrupt, want 1", len(rep.Corrupt))
	}
	st := &repairedWhileHashed{LocalStore: ls, repair: func() {
		tmp := filepath.Join(dir, ".repair.tmp")
		must(t, os.WriteFile(tmp, good, 0o600))
		must(t, os.Rename(tmp, filepath.Join(dir, key)))
	}}
	q, err := store.OpenLocal(qdir)
	must(t, err)
	defer q.Close()
	l, err := storelock.Acquire(ctx, st, "test")
	must(t, err)
	defer l.Release(ctx)
	qr, err := verify.Quarantine(ctx, l, q, rep.Corrupt, time.Now())
	must(t, err)
	if len(qr.Moved) != 0 || len(qr.Kept) != 1 || !qr.Kept[0].Changed || qr.Kept[0].How != "rename" {
		t.Errorf("moved %+v, kept %+v; want it kept as changed, at the rename", qr.Moved, qr.Kept)
	}
	if b, err := os.ReadFile(filepath.Join(dir, key)); err != nil || !bytes.Equal(b, good) {
		t.Fatalf("the repaired blob in the store: %q, %v", b, err)
	}
}

// interruptedAtSecond is a local store whose run is interrupted (Ctrl-C)
// when quarantine opens the second blob.
type interruptedAtSecond struct {
	*store.LocalStore
	cancel func()
	opened map[string]bool
}

func (s *interruptedAtSecond) Drops() store.Features { return 0 }

func (s *interruptedAtSecond) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if s.opened[key] = true; len(s.opened) == 2 {
		s.cancel()
	}
	return s.LocalStore.Open(ctx, key)
}

// TestInterruptedQuarantineWritesItsManifest: Ctrl-C during a quarantine
// stops it after the blob in flight, and the manifest still records what was
// moved. Before, the run returned without one: blobs out of the store, and
// no record of where they came from.
func TestInterruptedQuarantineWritesItsManifest(t *testing.T) {
	dir, qdir := t.TempDir(), t.TempDir()
	for _, c := range []string{"a", "b", "c"} {
		must(t, os.WriteFile(filepath.Join(dir, name([]byte(c), ".png")), []byte("corrupt "+c), 0o600))
	}
	ls, err := store.OpenLocal(dir)
	must(t, err)
	defer ls.Close()
	rep, err := verify.Run(context.Background(), verify.Options{Store: ls})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &interruptedAtSecond{LocalStore: ls, cancel: cancel, opened: map[string]bool{}}
	q, err := store.OpenLocal(qdir)
	must(t, err)
	defer q.Close()
	l, err := storelock.Acquire(context.Background(), st, "test")
	must(t, err)
	defer l.Release(context.Background())
	qr, err := verify.Quarantine(ctx, l, q, rep.Corrupt, time.Now())
	if err == nil || ctx.Err() == nil {
		t.Fatalf("Quarantine = %v, want the interruption", err)
	}
	if len(qr.Moved) == 0 || len(qr.Moved) == 3 {
		t.Fatalf("moved %d of 3, want the run stopped partway", len(qr.Moved))
	}
	b, err := os.ReadFile(filepath.Join(qdir, qr.Manifest))
	if err != nil {
		t.Fatalf("no manifest after the interruption: %v", err)
	}
	for _, m := range qr.Moved {
		if !bytes.Contains(b, []byte(m.Key)) {
			t.Errorf("the manifest does not record %s, which was moved:\n%s", m.Key, b)
		}
	}
}

// savedAgainWhileCopied is a quarantine that is not a local folder (so the
// blob is copied, not renamed) during whose copy a writer saves the blob
// again in the store: resave runs once a copy has been written.
type savedAgainWhileCopied struct {
	store.Store
	resave func()
}

func (q *savedAgainWhileCopied) Put(ctx context.Context, key string, r io.Reader, opts store.PutOptions) error {
	err := q.Store.Put(ctx, key, r, opts)
	if err == nil && q.resave != nil {
		q.resave()
		q.resave = nil
	}
	return err
}

// TestQuarantineCopyKeepsABlobSavedAgain: on the copy path (a bucket
// quarantine here; a quarantine on another file system alike) a good copy
// saved over the corrupt blob while it is copied, or between its hash and
// the copy, stays in the store. The writer is an operator restoring the blob
// from a backup (cp -p, then mv: same size, same modification time as the
// bit-rotted file), which no description of the file tells from the blob
// that was copied. Before, the copy path deleted whatever held the key once
// the copy was proven: the restored blob was lost, and the quarantine held
// only the corrupt bytes.
func TestQuarantineCopyKeepsABlobSavedAgain(t *testing.T) {
	good := []byte("\x89PNG\r\n\x1a\n the good, complete bytes of a picture")
	bad := append([]byte(nil), good...)
	bad[20] ^= 0xff // bit rot in place: same size
	key := name(good, ".png")
	for _, tc := range []struct {
		name        string
		whileHashed bool // saved again between the hash and the copy, else during the copy
	}{
		{"during the copy", false},
		{"between the hash and the copy", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir, qdir := t.TempDir(), t.TempDir()
			p := filepath.Join(dir, key)
			must(t, os.WriteFile(p, bad, 0o600))
			mtime := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
			must(t, os.Chtimes(p, mtime, mtime))
			restore := func() {
				tmp := filepath.Join(dir, ".restore.tmp")
				must(t, os.WriteFile(tmp, good, 0o600))
				must(t, os.Chtimes(tmp, mtime, mtime))
				must(t, os.Rename(tmp, p))
			}
			ls, err := store.OpenLocal(dir)
			must(t, err)
			defer ls.Close()
			rep, err := verify.Run(ctx, verify.Options{Store: ls})
			must(t, err)
			if len(rep.Corrupt) != 1 {
				t.Fatalf("%d corrupt, want 1", len(rep.Corrupt))
			}
			qb, err := store.Open(ctx, "file://"+qdir)
			must(t, err)
			defer qb.Close()
			q := &savedAgainWhileCopied{Store: qb}
			var src store.Store = ls
			if tc.whileHashed {
				src = &repairedWhileHashed{LocalStore: ls, repair: restore}
			} else {
				q.resave = restore
			}
			l, err := storelock.Acquire(ctx, src, "test")
			must(t, err)
			defer l.Release(ctx)
			qr, err := verify.Quarantine(ctx, l, q, rep.Corrupt, time.Now())
			must(t, err)
			if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, good) {
				t.Fatalf("the blob restored in the store: %q, %v", b, err)
			}
			copied, cerr := os.ReadFile(filepath.Join(qdir, qr.Folder, key))
			if tc.whileHashed {
				if len(qr.Moved) != 0 || len(qr.Kept) != 1 || !qr.Kept[0].Changed || qr.Kept[0].How != "copy" {
					t.Errorf("moved %+v, kept %+v; want it kept as changed, at the copy", qr.Moved, qr.Kept)
				}
				if cerr == nil {
					t.Errorf("the quarantine holds a copy of a blob it kept: %q", copied)
				}
			} else {
				if len(qr.Moved) != 1 || len(qr.Kept) != 0 || qr.Moved[0].How != "copy" {
					t.Errorf("moved %+v, kept %+v; want the corrupt blob copied out", qr.Moved, qr.Kept)
				}
				if !bytes.Equal(copied, bad) {
					t.Errorf("the quarantine holds %q (%v), want the corrupt bytes", copied, cerr)
				}
			}
			// Nothing is left where the blob was set aside for the copy.
			must(t, ls.ListInternal(ctx, "trash/", func(e store.Entry) error {
				t.Errorf("left in the store's internal folder: %s", e.Key)
				return nil
			}))
		})
	}
}
