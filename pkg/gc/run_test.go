package gc_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

func (f *fixture) run(ctx context.Context, t *testing.T, o gc.RunOptions) *gc.Report {
	t.Helper()
	if len(o.Stores) == 0 {
		o.Stores = []store.Store{f.st}
	}
	o.Sessions = []sessions.Source{f.src}
	o.Guards.MaxDeletePercent = 100
	rep, err := gc.Run(ctx, o)
	must(t, err)
	return rep
}

// cancelAfter is a progress that cancels the run after n blobs, as a SIGTERM
// in the middle of a sweep would.
type cancelAfter struct {
	n      int64
	done   atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Add(n int64) {
	if c.done.Add(n) >= c.n {
		c.cancel()
	}
}
func (c *cancelAfter) Finish() {}

// TestRunInterruptedSweep: a sweep stopped midway says interrupted, lists no
// blob as failed (the ones not reached are counted, not listed), releases
// the lock although its context is cancelled, and the same run again
// finishes the job.
func TestRunInterruptedSweep(t *testing.T) {
	f := newFixture(t)
	kept := f.blob(t, "kept", 48*time.Hour)
	for i := range 300 {
		f.blob(t, "old "+strings.Repeat("x", i), 48*time.Hour)
	}
	f.session(t, "s.json", kept)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := &cancelAfter{n: 40, cancel: cancel}
	// One blob at a time (the store's batch move hidden), so that the
	// progress sees each move; trash's own test interrupts a batch.
	oneByOne := struct {
		store.Store
		store.Internal
	}{f.st, f.st.(store.Internal)}
	rep := f.run(ctx, t, gc.RunOptions{Stores: []store.Store{oneByOne}, Delete: true, Progress: func(store.Store, int64) gc.Progress { return stop }})
	s := rep.Stores[0]
	if rep.Outcome != outcome.Interrupted || s.Outcome != outcome.Interrupted {
		t.Fatalf("outcome %v / %v, want interrupted", rep.Outcome, s.Outcome)
	}
	res := s.Result
	if len(res.Failed) != 0 || res.Trashed < 40 || res.Trashed+res.NotAttempted+int64(len(res.Skipped)) != 300 || res.NotAttempted == 0 {
		t.Fatalf("trashed %d, not attempted %d, failed %v", res.Trashed, res.NotAttempted, res.Failed)
	}
	if err := storelock.Check(context.Background(), f.st); err != nil {
		t.Fatalf("the lock was left behind: %v", err)
	}
	again := f.run(context.Background(), t, gc.RunOptions{Delete: true})
	if again.Outcome != outcome.OK || again.Stores[0].Result.Trashed != res.NotAttempted {
		t.Fatalf("rerun: %v, %+v", again.Outcome, again.Stores[0].Result)
	}
	if _, err := os.Stat(filepath.Join(f.inbound, kept)); err != nil {
		t.Fatalf("the referenced blob: %v", err)
	}
}

// moveFailsThenInterrupt is a local store whose batch move fails after its
// renames, as when the folder's sync fails (every blob of the batch is in
// the run all the same), and is interrupted right then, as by a Ctrl-C.
type moveFailsThenInterrupt struct {
	*store.LocalStore
	cancel func()
	// movesSucceed: the moves succeed, and only the interruption and the
	// manifest's write fail.
	movesSucceed bool
}

func (s moveFailsThenInterrupt) MoveManyToInternal(ctx context.Context, moves []store.InternalMove) []error {
	errs := s.LocalStore.MoveManyToInternal(ctx, moves)
	for i, err := range errs {
		if err == nil && !s.movesSucceed {
			errs[i] = errors.New("sync " + filepath.Dir(moves[i].Key) + ": input/output error")
		}
	}
	s.cancel()
	return errs
}

// Drops declares that the wrapper keeps every capability of the store.
func (moveFailsThenInterrupt) Drops() store.Features { return 0 }

// PutInternal fails for the trash runs' manifests, as a full disk would.
func (s moveFailsThenInterrupt) PutInternal(ctx context.Context, name string, r io.Reader, opts store.PutOptions) error {
	if strings.HasSuffix(name, ".manifest.jsonl") {
		return errors.New("write: no space left on device")
	}
	return s.LocalStore.PutInternal(ctx, name, r, opts)
}

// TestRunInterruptedSaysWhyBlobsAreInARun: a sweep interrupted while its
// moves failed after their renames reports the interruption and also the
// run the blobs are in and why (trash.ErrLeftInRun), without the trash and
// with it, as an uninterrupted sweep does, and every other error of the
// sweep (here its manifest could not be written); not only the counts.
func TestRunInterruptedSaysWhyBlobsAreInARun(t *testing.T) {
	for _, c := range []struct {
		name          string
		noTrash       bool
		movesSucceed  bool // only the manifest's write fails: nothing is left in a run
		wantLeftInRun bool
	}{
		{"trash", false, false, true},
		{"no-trash", true, false, true},
		{"trash, moves succeed", false, true, false},
	} {
		f := newFixture(t)
		kept := f.blob(t, "kept", 48*time.Hour)
		for i := range 20 {
			f.blob(t, "old "+strings.Repeat("x", i), 48*time.Hour)
		}
		f.session(t, "s.json", kept)
		ctx, cancel := context.WithCancel(context.Background())
		st := moveFailsThenInterrupt{LocalStore: f.st.(*store.LocalStore), cancel: cancel, movesSucceed: c.movesSucceed}
		rep := f.run(ctx, t, gc.RunOptions{Stores: []store.Store{st}, Delete: true, NoTrash: c.noTrash})
		cancel()
		s := rep.Stores[0]
		if rep.Outcome != outcome.Interrupted {
			t.Fatalf("%s: outcome %v (%v), want interrupted", c.name, rep.Outcome, s.Err)
		}
		if s.Result == nil || s.Result.Run == "" || s.Result.Trashed == 0 {
			t.Fatalf("%s: result %+v, want the blobs counted in a run", c.name, s.Result)
		}
		if c.movesSucceed && s.Result.Trashed != 20 {
			t.Fatalf("%s: %d blobs trashed, want 20", c.name, s.Result.Trashed)
		}
		if s.Err == nil {
			t.Fatalf("%s: the report carries no error", c.name)
		}
		if c.wantLeftInRun && (!errors.Is(s.Err, trash.ErrLeftInRun) || !strings.Contains(s.Err.Error(), s.Result.Run) || !strings.Contains(s.Err.Error(), "input/output error")) {
			t.Fatalf("%s: report error %v, want why the blobs are in run %s", c.name, s.Err, s.Result.Run)
		}
		if !strings.Contains(s.Err.Error(), "write manifest") || !strings.Contains(s.Err.Error(), "no space left on device") {
			t.Errorf("%s: report error %q does not say the manifest could not be written", c.name, s.Err)
		}
		if strings.Contains(s.Err.Error(), context.Canceled.Error()) {
			t.Errorf("%s: report error %q repeats the interruption", c.name, s.Err)
		}
		if _, err := os.Stat(filepath.Join(f.inbound, kept)); err != nil {
			t.Fatalf("%s: the referenced blob: %v", c.name, err)
		}
	}
}

// TestRunDryRunReportsLock: a dry run refuses a locked store as --delete
// would, and still shows its plan.
func TestRunDryRunReportsLock(t *testing.T) {
	f := newFixture(t)
	kept := f.blob(t, "kept", 48*time.Hour)
	f.blob(t, "old", 48*time.Hour)
	f.session(t, "s.json", kept)
	l, err := storelock.Acquire(context.Background(), f.st, "other run")
	must(t, err)
	defer l.Release(context.Background())
	for _, del := range []bool{false, true} {
		rep := f.run(context.Background(), t, gc.RunOptions{Delete: del})
		s := rep.Stores[0]
		if rep.Outcome != outcome.Refused || s.Locked == nil || s.Locked.Holder.Command != "other run" {
			t.Fatalf("delete %v: outcome %v, locked %v", del, rep.Outcome, s.Locked)
		}
		if !del && (s.Plan == nil || s.Plan.Candidates.Len() != 1) {
			t.Fatalf("the dry run's plan: %+v", s.Plan)
		}
		if del && s.Result != nil {
			t.Fatalf("a locked store was swept: %+v", s.Result)
		}
	}
}

// TestRunNestedStore: a store that holds another store (its .mediactl folder
// with a trash run in it) is refused before anything moves: that store's
// trash would be swept as blobs.
func TestRunNestedStore(t *testing.T) {
	f := newFixture(t)
	kept := f.blob(t, "kept", 48*time.Hour)
	f.session(t, "s.json", kept)
	nested := filepath.Join(f.inbound, "old-pod", store.InternalDir, trash.Dir, "20261101T000000Z-1")
	must(t, os.MkdirAll(nested, 0o700))
	trashed := filepath.Join(nested, name("in the other trash"))
	must(t, os.WriteFile(trashed, []byte("in the other trash"), 0o600))
	old := time.Now().Add(-72 * time.Hour)
	must(t, os.Chtimes(trashed, old, old))
	_, err := gc.Run(context.Background(), gc.RunOptions{Options: gc.Options{Sessions: []sessions.Source{f.src}}, Stores: []store.Store{f.st}, Delete: true, Guards: gc.Guards{MaxDeletePercent: 100}})
	var ne *gc.NestedStoreError
	if !errors.As(err, &ne) || len(ne.Nested) != 1 || ne.Nested[0] != "old-pod" {
		t.Fatalf("Run = %v, want a NestedStoreError naming old-pod", err)
	}
	if _, err := os.Stat(trashed); err != nil {
		t.Fatalf("the other store's trash was touched: %v", err)
	}
	if err := storelock.Check(context.Background(), f.st); err != nil {
		t.Fatalf("the lock was left behind: %v", err)
	}
}

// TestRunNestedStoreEveryShard: each shard of a split refuses a store that
// holds another store, whichever shard the nested store's files belong to,
// also on a file:// bucket, whose key-order listing drops another shard's
// keys before it holds them.
func TestRunNestedStoreEveryShard(t *testing.T) {
	for _, scheme := range []string{"local", "file"} {
		f := newFixture(t)
		kept := f.blob(t, "kept", 48*time.Hour)
		f.blob(t, "old", 48*time.Hour)
		f.session(t, "s.json", kept)
		nested := filepath.Join(f.inbound, "old-pod", store.InternalDir, trash.Dir, "20261101T000000Z-1")
		must(t, os.MkdirAll(nested, 0o700))
		trashed := filepath.Join(nested, name("in the other trash"))
		must(t, os.WriteFile(trashed, []byte("in the other trash"), 0o600))
		st := f.st
		if scheme == "file" {
			var err error
			st, err = store.Open(context.Background(), "file://"+filepath.ToSlash(f.inbound))
			must(t, err)
			defer st.Close()
		}
		for k := range 3 {
			s := shard.Spec{K: k, N: 3}
			_, err := gc.Run(context.Background(), gc.RunOptions{Options: gc.Options{Sessions: []sessions.Source{f.src}, Shard: s}, Stores: []store.Store{st}, Delete: true, Guards: gc.Guards{MaxDeletePercent: 100}})
			var ne *gc.NestedStoreError
			if !errors.As(err, &ne) || len(ne.Nested) != 1 || ne.Nested[0] != "old-pod" {
				t.Errorf("%s, shard %s: Run = %v, want a NestedStoreError naming old-pod", scheme, s, err)
			}
		}
		if _, err := os.Stat(trashed); err != nil {
			t.Fatalf("%s: the other store's trash was touched: %v", scheme, err)
		}
	}
}

// TestRunNoReferencesPerStore: sessions that name blobs of one store say
// nothing of a second store they name none of: that one is refused.
func TestRunNoReferencesPerStore(t *testing.T) {
	a, b := newFixture(t), newFixture(t)
	kept := a.blob(t, "kept", 48*time.Hour)
	a.blob(t, "old a", 48*time.Hour)
	b.blob(t, "old b", 48*time.Hour)
	a.session(t, "s.json", kept)
	rep, err := gc.Run(context.Background(), gc.RunOptions{
		Options: gc.Options{Sessions: []sessions.Source{a.src}},
		Stores:  []store.Store{a.st, b.st},
		Delete:  true,
		Guards:  gc.Guards{MaxDeletePercent: 100},
	})
	must(t, err)
	ra, rb := rep.Stores[0], rep.Stores[1]
	if ra.Outcome != outcome.OK || ra.Result == nil || ra.Result.Trashed != 1 {
		t.Fatalf("store a: %v %+v", ra.Outcome, ra.Result)
	}
	if rb.Outcome != outcome.Refused || rb.Refused == nil || rb.Refused.Guard != gc.NoReferences || rb.Result != nil {
		t.Fatalf("store b: %v %+v", rb.Outcome, rb.Refused)
	}
	if rep.Outcome != outcome.Refused {
		t.Fatalf("run outcome %v", rep.Outcome)
	}
}

// TestRunUnusableTrash: a trash that is a symbolic link fails the run
// (incomplete), never reads as blobs kept.
func TestRunUnusableTrash(t *testing.T) {
	f := newFixture(t)
	kept := f.blob(t, "kept", 48*time.Hour)
	old := f.blob(t, "old", 48*time.Hour)
	f.session(t, "s.json", kept)
	victim := filepath.Join(f.root, "victim")
	must(t, os.MkdirAll(victim, 0o700))
	must(t, os.MkdirAll(filepath.Join(f.inbound, store.InternalDir), 0o700))
	must(t, os.Symlink(victim, filepath.Join(f.inbound, store.InternalDir, trash.Dir)))
	rep := f.run(context.Background(), t, gc.RunOptions{Delete: true})
	s := rep.Stores[0]
	if s.Outcome != outcome.Incomplete || !errors.Is(s.Err, trash.ErrUnusable) || len(s.Result.Skipped) != 0 {
		t.Fatalf("outcome %v, err %v, skipped %v", s.Outcome, s.Err, s.Result.Skipped)
	}
	if _, err := os.Stat(filepath.Join(f.inbound, old)); err != nil {
		t.Fatalf("the candidate left the store: %v", err)
	}
	if es, _ := os.ReadDir(victim); len(es) != 0 {
		t.Fatalf("the victim folder got %d entries", len(es))
	}
}
