package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/target"
	"github.com/mediactl/mediactl/pkg/trash"
)

// StoresOptions verify several stores in turn, and quarantine what is
// corrupt in each.
type StoresOptions struct {
	Stores []store.Store
	// Each gives the options of one store's run (Store is set by RunStores;
	// KeepCorrupt too, with a quarantine).
	Each func(st store.Store) Options
	// Quarantine, when set, receives every corrupt blob of each store, moved
	// there under the store's lock (see quarantine).
	Quarantine store.Store
	// Strict makes unverifiable blobs a finding (Report.Outcome).
	Strict bool
	// Command is recorded in the store lock a quarantine takes.
	Command string
	// Started, when set, is called before each store's run; the progress it
	// returns is told about bytes hashed and finished after the run.
	Started func(st store.Store) StoreProgress
	// Finished, when set, is called after each store's run.
	Finished func(StoreRun)
}

// StoreProgress is a progress a store's run reports to.
type StoreProgress interface {
	Add(int64)
	Finish()
}

// StoreRun is one store's verify and quarantine.
type StoreRun struct {
	Report     *Report
	Quarantine *QuarantineReport
	// Locked is the lock another run held, so nothing was quarantined.
	Locked *storelock.LockedError
	// QuarantineErr is what stopped the quarantine partway ("" if nothing).
	QuarantineErr string
	Outcome       outcome.Outcome
}

// RunStores verifies each store (stopping after an interrupt) and
// quarantines its corrupt blobs, and says what each store and the whole run
// came to: a quarantine refused by the lock is a refusal, one whose
// destination failed is incomplete (the destination failed, not the blobs).
// An error is a run that could not start (bad options).
func RunStores(ctx context.Context, opts StoresOptions) ([]StoreRun, outcome.Outcome, error) {
	var runs []StoreRun
	o := outcome.OK
	for _, st := range opts.Stores {
		if o == outcome.Interrupted {
			break
		}
		vo := opts.Each(st)
		vo.Store = st
		vo.KeepCorrupt = opts.Quarantine != nil // every corrupt blob, listed or not
		var bar StoreProgress
		if opts.Started != nil {
			bar = opts.Started(st)
			vo.Progress = bar
		}
		rep, err := Run(ctx, vo)
		if bar != nil {
			bar.Finish()
		}
		if err != nil {
			return runs, o, err
		}
		sr := StoreRun{Report: rep, Outcome: rep.Outcome(opts.Strict)}
		if opts.Quarantine != nil && len(rep.AllCorrupt) > 0 && !rep.Interrupted {
			quarantineStore(ctx, &sr, st, vo.Shard, opts)
		}
		o.Worsen(sr.Outcome)
		runs = append(runs, sr)
		if opts.Finished != nil {
			opts.Finished(sr)
		}
	}
	return runs, o, nil
}

// quarantineStore moves a store's corrupt blobs out, holding the store's
// lock (its shard's, for a sharded run).
func quarantineStore(ctx context.Context, sr *StoreRun, st store.Store, sh shard.Spec, opts StoresOptions) {
	command := opts.Command
	if command == "" {
		command = "verify --quarantine"
	}
	err := storelock.DoShard(ctx, st, command, sh, func(l *storelock.Lock) (err error) {
		sr.Quarantine, err = quarantine(ctx, l, opts.Quarantine, sr.Report.AllCorrupt, time.Now())
		return err
	})
	switch {
	case storelock.Refused(err, &sr.Locked, &sr.Outcome):
		return
	case err != nil && ctx.Err() != nil:
		sr.Outcome.Worsen(outcome.Interrupted)
	case err != nil:
		sr.QuarantineErr = fmt.Sprintf("quarantine into %s: %v", opts.Quarantine.Location(), err)
		sr.Outcome.Worsen(outcome.Incomplete)
	}
	if sr.Quarantine != nil && sr.Quarantine.Failed() > 0 {
		sr.Outcome.Worsen(outcome.Incomplete)
	}
}

// QuarantineOverlapError is OpenQuarantine's refusal of a destination
// inside a store, or holding one: its contents would be listed as blobs.
type QuarantineOverlapError struct {
	Quarantine, Store string
}

func (e *QuarantineOverlapError) Error() string {
	return fmt.Sprintf("the quarantine %s is inside the store %s, or holds it: its contents would be listed as blobs", e.Quarantine, e.Store)
}

// OpenQuarantine opens the quarantine destination spec — a local folder
// (made 0700 when missing) or a bucket URL — refusing one that lies inside
// a store or holds one: a local folder with trash.CheckDir's rules (its
// error is returned as it is), any destination with target.Overlap (a
// *QuarantineOverlapError).
func OpenQuarantine(ctx context.Context, spec string, stores []store.Store) (store.Store, error) {
	if !strings.Contains(spec, "://") {
		abs, err := filepath.Abs(spec)
		if err != nil {
			return nil, fmt.Errorf("quarantine %s: %w", spec, err)
		}
		for _, st := range stores {
			if l, ok := st.(store.Local); ok {
				if err := trash.CheckDir(l.Dir(), abs); err != nil {
					return nil, err
				}
			}
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return nil, fmt.Errorf("quarantine %s: %w", spec, err)
		}
		spec = abs
	}
	q, err := store.Open(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("quarantine %s: %w", store.Redact(spec), err)
	}
	for _, st := range stores {
		if target.Overlap(q, st) {
			q.Close()
			return nil, &QuarantineOverlapError{Quarantine: store.Redact(spec), Store: st.Location()}
		}
	}
	return q, nil
}
