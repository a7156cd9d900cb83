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
