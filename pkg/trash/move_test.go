package trash_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// TestTrashBlobs: listed blobs go to a trash run that Restore puts back; one
// that changed since it was described stays in the store.
func TestTrashBlobs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	list, old := writeABC(t, dir)
	// c.png is rewritten after it was described.
	must(t, os.WriteFile(filepath.Join(dir, "c.png"), []byte("new bytes of c"), 0o600))
	st, err := store.Open(ctx, dir)
	must(t, err)
	defer st.Close()
	res, err := trash.Move(ctx, locktest.Of(t, st), list, trash.Options{})
	must(t, err)
	if res.Trashed != 2 || len(res.Skipped) != 1 || res.Skipped[0].Key != "c.png" {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.png")); !os.IsNotExist(err) {
		t.Fatalf("a.png still in the store: %v", err)
	}
	rr, err := trash.Restore(ctx, locktest.Of(t, st), res.Run)
	must(t, err)
	if rr.Restored != 2 {
		t.Fatalf("restore %+v", rr)
	}
	for _, k := range []string{"a.png", "b.png"} {
		b, err := os.ReadFile(filepath.Join(dir, k))
		must(t, err)
		fi, _ := os.Stat(filepath.Join(dir, k))
		if string(b) != "bytes of "+k || !fi.ModTime().Equal(old) {
			t.Fatalf("%s restored as %q at %v", k, b, fi.ModTime())
		}
	}
}

// TestMoveInterruptedMidBatch: a signal in the middle of a local store's
// batch sweep stops it at the next blob; the blobs not reached are counted as
// not attempted, none is listed as failed, and every blob is in the store or
// in the trash run.
func TestMoveInterruptedMidBatch(t *testing.T) {
	dir := t.TempDir()
	const n = 20000
	list := writeOldBlobs(t, dir, n)
	st, err := store.OpenLocal(dir)
	must(t, err)
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := time.Now()
	runDir := filepath.Join(dir, store.InternalDir, trash.Dir, trash.RunID(now))
	go func() {
		// Cancel as soon as the sweep has started moving.
		for ctx.Err() == nil {
			if es, _ := os.ReadDir(runDir); len(es) > 1 { // beyond the run's record
				cancel()
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	res, err := trash.Move(ctx, locktest.Of(t, st), list, trash.Options{Now: now})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Move = %v, want the context's error (moved %d)", err, res.Trashed)
	}
	if len(res.Failed) != 0 || res.Trashed == 0 || res.NotAttempted == 0 || res.Trashed+res.NotAttempted+int64(len(res.Skipped)) != n {
		t.Fatalf("trashed %d, not attempted %d, skipped %d, failed %d", res.Trashed, res.NotAttempted, len(res.Skipped), len(res.Failed))
	}
	inStore, _ := os.ReadDir(dir)
	inTrash, _ := os.ReadDir(runDir)
	// The store also holds .mediactl; the run folder its manifest and record.
	if len(inStore)-1+len(inTrash)-2 != n || int64(len(inTrash)-2) != res.Trashed {
		t.Fatalf("%d in the store, %d in the trash, %d trashed", len(inStore)-1, len(inTrash)-2, res.Trashed)
	}
}

// TestNoTrashInterruptedMidBatch: a sweep without the trash stopped while it
// moves still deletes what it had moved out of the store (nothing is left in
// its stage run), and leaves the rest in the store, untouched.
func TestNoTrashInterruptedMidBatch(t *testing.T) {
	dir := t.TempDir()
	const n = 20000
	list := writeOldBlobs(t, dir, n)
	st, err := store.OpenLocal(dir)
	must(t, err)
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	trashDir := filepath.Join(dir, store.InternalDir, trash.Dir)
	go func() {
		// Cancel as soon as the sweep has started moving.
		for ctx.Err() == nil {
			if es, _ := os.ReadDir(trashDir); len(es) > 0 {
				// The stage run holds more than its record: moving.
				if in, _ := os.ReadDir(filepath.Join(trashDir, es[0].Name())); len(in) > 1 {
					cancel()
					return
				}
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	res, err := trash.Move(ctx, locktest.Of(t, st), list, trash.Options{NoTrash: true})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Move = %v, want the context's error (deleted %d)", err, res.Deleted)
	}
	if len(res.Failed) != 0 || res.Trashed != 0 || res.Run != "" || res.Deleted == 0 || res.NotAttempted == 0 || res.Deleted+res.NotAttempted+int64(len(res.Skipped)) != n {
		t.Fatalf("deleted %d, trashed %d (run %q), not attempted %d, skipped %d, failed %d", res.Deleted, res.Trashed, res.Run, res.NotAttempted, len(res.Skipped), len(res.Failed))
	}
	inStore, _ := os.ReadDir(dir)
	if int64(len(inStore)-1) != n-res.Deleted {
		t.Fatalf("%d in the store, %d deleted of %d", len(inStore)-1, res.Deleted, n)
	}
	if runs, err := trash.Runs(context.Background(), st); err != nil || len(runs) != 0 {
		t.Fatalf("runs left: %v, %v", runs, err)
	}
}

// TestWithDirDeclaresItsFeatures: the trash-directory wrapper offers the
// internal folder, routed, and not the store's batch move, which would move
// into the store's own internal folder instead of the trash directory.
func TestWithDirDeclaresItsFeatures(t *testing.T) {
	st, err := store.OpenLocal(t.TempDir())
	must(t, err)
	defer st.Close()
	td, err := store.OpenLocal(t.TempDir())
	must(t, err)
	defer td.Close()
	w := trash.WithDir(st, td)
	if got := store.FeaturesOf(w); got != store.FeatureInternal {
		t.Fatalf("FeaturesOf(WithDir) = %v, want Internal only", got)
	}
	if _, ok := store.AsBatchMover(w); ok {
		t.Fatal("the wrapper offers a batch move into the store's own trash")
	}
}

// writeOldBlobs writes n content-addressed blobs into dir, an hour old, and
// describes them as a plan would.
func writeOldBlobs(t *testing.T, dir string, n int) trash.List {
	t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	var list trash.List
	for i := range n {
		content := fmt.Sprintf("blob %d", i)
		k := name(content)
		p := filepath.Join(dir, k)
		must(t, os.WriteFile(p, []byte(content), 0o600))
		must(t, os.Chtimes(p, old, old))
		list = append(list, trash.Item{Key: k, Size: int64(len(content)), ModTime: old})
	}
	return list
}

// writeABC writes a.png, b.png and c.png into dir, each "bytes of" its name
// and dated old, and describes them.
func writeABC(t *testing.T, dir string) (list trash.List, old time.Time) {
	t.Helper()
	old = time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, k := range []string{"a.png", "b.png", "c.png"} {
		must(t, os.WriteFile(filepath.Join(dir, k), []byte("bytes of "+k), 0o600))
		must(t, os.Chtimes(filepath.Join(dir, k), old, old))
		list = append(list, trash.Item{Key: k, Size: int64(len("bytes of " + k)), ModTime: old})
	}
	return list, old
}

// TestRunOfTheSameNameIsNotShared: a run named as one that already holds
// files (another process with the same id in the same second: pid 1 in two
// containers) takes the next second's name, with the trash and without it;
// the earlier run's files stay as they were and are not counted.
func TestRunOfTheSameNameIsNotShared(t *testing.T) {
	for _, noTrash := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-trash=%v", noTrash), func(t *testing.T) {
			dir := t.TempDir()
			list, _ := writeABC(t, dir)
			now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
			taken := trash.RunID(now)
			if noTrash {
				taken += "-no-trash"
			}
			earlier := filepath.Join(dir, store.InternalDir, trash.Dir, taken, "x.png")
			must(t, os.MkdirAll(filepath.Dir(earlier), 0o700))
			must(t, os.WriteFile(earlier, []byte("the earlier run's"), 0o600))
			st, err := store.OpenLocal(dir)
			must(t, err)
			defer st.Close()
			res, err := trash.Move(context.Background(), locktest.Of(t, st), list, trash.Options{NoTrash: noTrash, Now: now})
			must(t, err)
			if res.Trashed+res.Deleted != 3 || len(res.Skipped)+len(res.Failed) != 0 {
				t.Fatalf("result %+v", res)
			}
			if !noTrash && res.Run != trash.RunID(now.Add(time.Second)) {
				t.Errorf("run %q; want the next second's, %q", res.Run, trash.RunID(now.Add(time.Second)))
			}
			if b, err := os.ReadFile(earlier); err != nil || string(b) != "the earlier run's" {
				t.Errorf("the earlier run's file: %q, %v", b, err)
			}
		})
	}
}

// TestBesidesInterruption: what a report shows of an interrupted Move's
// error is everything but the interruption, and nothing when that is all.
func TestBesidesInterruption(t *testing.T) {
	ctxErr := context.Canceled
	manifest := errors.New("trash: write manifest R/.manifest.jsonl: no space left on device")
	left := fmt.Errorf("trash: moves into trash run R failed after the blobs were moved (%w); first: %w", trash.ErrLeftInRun, errors.New("sync a: input/output error"))
	for _, c := range []struct {
		err, want error
	}{
		{nil, nil},
		{ctxErr, nil},
		{errors.Join(ctxErr, manifest), manifest},
		{errors.Join(ctxErr, manifest, left), errors.Join(manifest, left)},
		{left, left},
	} {
		got := trash.BesidesInterruption(c.err, ctxErr)
		if fmt.Sprint(got) != fmt.Sprint(c.want) || (c.want != nil) != (got != nil) {
			t.Errorf("BesidesInterruption(%v) = %v, want %v", c.err, got, c.want)
		}
		if got != nil && errors.Is(got, ctxErr) {
			t.Errorf("BesidesInterruption(%v) = %v still says the run was interrupted", c.err, got)
		}
	}
	if got := trash.BesidesInterruption(manifest, nil); got != manifest {
		t.Errorf("without an interruption: %v, want the error as it is", got)
	}
}

// plantedBeforeMove is a local store on which another process puts a file
// at a blob's place in the trash run just before the sweep moves it there.
type plantedBeforeMove struct {
	*store.LocalStore
	t        *testing.T
	dir, key string
}

// Drops nothing: every feature of the local store is the wrapper's.
func (p *plantedBeforeMove) Drops() store.Features { return 0 }

func (p *plantedBeforeMove) MoveManyToInternal(ctx context.Context, moves []store.InternalMove) []error {
	for _, m := range moves {
		if m.Key == p.key {
			at := filepath.Join(p.dir, store.InternalDir, filepath.FromSlash(m.Name))
			must(p.t, os.MkdirAll(filepath.Dir(at), 0o700))
			must(p.t, os.WriteFile(at, []byte("planted"), 0o600))
		}
	}
	return p.LocalStore.MoveManyToInternal(ctx, moves)
}

// TestMoveIntoAnOccupiedPlace: a blob whose place in the trash run is taken
// (a move never replaces) stays in the store and is reported failed, not
// trashed: before, the file found at its place counted it as in the run.
func TestMoveIntoAnOccupiedPlace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	list, _ := writeABC(t, dir)
	ls, err := store.OpenLocal(dir)
	must(t, err)
	defer ls.Close()
	st := &plantedBeforeMove{LocalStore: ls, t: t, dir: dir, key: "b.png"}
	res, err := trash.Move(ctx, locktest.Of(t, st), list, trash.Options{})
	if res.Trashed != 2 || len(res.Failed) != 1 || res.Failed[0].Key != "b.png" {
		t.Fatalf("trashed %d, failed %v (%v); want a.png and c.png trashed and b.png failed", res.Trashed, res.Failed, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b.png")); err != nil || string(b) != "bytes of b.png" {
		t.Fatalf("b.png in the store: %q, %v", b, err)
	}
}

// TestBlobNamedAsTheManifest: a blob at the store's top named as a run's
// manifest stays in the store: in the run, the manifest would overwrite it,
// and a restore would not bring it back. Before, gc reported it moved and its
// bytes were gone.
func TestBlobNamedAsTheManifest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	list, old := writeABC(t, dir)
	must(t, os.WriteFile(filepath.Join(dir, ".manifest.jsonl"), []byte(`{"user":"notes"}`), 0o600))
	must(t, os.Chtimes(filepath.Join(dir, ".manifest.jsonl"), old, old))
	list = append(list, trash.Item{Key: ".manifest.jsonl", Size: int64(len(`{"user":"notes"}`)), ModTime: old})
	st, err := store.Open(ctx, dir)
	must(t, err)
	defer st.Close()
	res, err := trash.Move(ctx, locktest.Of(t, st), list, trash.Options{})
	must(t, err)
	if res.Trashed != 3 || len(res.Skipped) != 1 || res.Skipped[0].Key != ".manifest.jsonl" {
		t.Fatalf("trashed %d, skipped %v; want the three others trashed and this one kept", res.Trashed, res.Skipped)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".manifest.jsonl")); err != nil || string(b) != `{"user":"notes"}` {
		t.Fatalf("the blob: %q, %v", b, err)
	}
	rr, err := trash.Restore(ctx, locktest.Of(t, st), res.Run)
	must(t, err)
	if rr.Restored != 3 {
		t.Errorf("restored %d, want 3", rr.Restored)
	}
}
