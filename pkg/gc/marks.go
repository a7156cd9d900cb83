package gc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// DefaultGrace is how long a blob stays marked on a bucket before a run may
// delete it (RunOptions.Grace).
const DefaultGrace = 24 * time.Hour

// MarkReport is what a run did with deferred deletes on a bucket: the blobs
// it marked, and the blobs marked by earlier runs that it deleted or let go.
type MarkReport struct {
	// Run names this run's marks ("" when it marked nothing).
	Run         string `json:"run,omitempty"`
	Marked      int64  `json:"marked"`
	MarkedBytes int64  `json:"marked_bytes"`
	// Pending counts candidates already marked by a run within the grace.
	Pending int64  `json:"pending"`
	Grace   string `json:"grace"`
	// Deleted is the delete of the blobs earlier runs marked, still
	// unreferenced, unchanged and past the grace; nil when none was due.
	Deleted *trash.Result `json:"deleted,omitempty"`
	// DeletedRun names the record of those deletes, kept where the
	// bucket's service keeps deleted objects (DeleteRecovery): gc restore
	// of it brings them back from the service's versions.
	DeletedRun string `json:"deleted_run,omitempty"`
	// Unmarked are marked blobs past the grace that stay, and why (named
	// again, changed, younger, or gone): their marks are dropped.
	Unmarked []trash.Skip `json:"unmarked"`
}

// marking reports whether a run on st defers its deletes: a bucket (not a
// local store, where the trash is a rename), with a policy that keeps
// referenced blobs and the sessions read, unless the copy trash or no trash
// was asked for.
func marking(st store.Store, opts RunOptions, keepsReferenced bool) bool {
	if _, local := store.AsBatchMover(st); local {
		return false
	}
	if _, bucket := st.(store.Bucket); !bucket {
		return false
	}
	return keepsReferenced && len(opts.Sessions) > 0 && !opts.NoTrash && !opts.CopyToTrash
}

// runMarks deletes the blobs earlier runs marked that are due — marked before
// the grace, still a candidate of this plan (unreferenced, old enough) and
// unchanged since they were marked, and named by no session saved since this
// run's read began (the sessions that changed are read again first) — and
// marks this plan's other candidates. Each delete follows a check of the
// blob, on condition of its ETag where the service enforces one.
func runMarks(ctx context.Context, lock *storelock.Lock, sr *StoreReport, plan *Plan, o Options, opts RunOptions, readStart time.Time) {
	grace := opts.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	mr := &MarkReport{Grace: retain.FormatAge(grace), Unmarked: []trash.Skip{}}
	sr.Marks = mr
	fail := func(err error) {
		sr.Outcome.Worsen(outcome.Incomplete)
		sr.Err = errors.Join(sr.Err, err)
	}
	runs, err := trash.Marks(ctx, lock.Store())
	if err != nil {
		fail(fmt.Errorf("gc: %w", err))
		return
	}
	cands := make(map[string]Candidate, plan.Candidates.Len())
	for c := range plan.Candidates.All() {
		cands[c.Key] = c
	}
	now := time.Now()
	pending := map[string]bool{}
	var due []trash.Item
	var dueRuns []string
	handled := map[string]bool{} // keys of due runs, decided once
	decided := map[string]bool{} // deleted, or kept because named: not marked anew
	for _, r := range runs {
		if r.Shard != plan.Shard {
			continue // another shard's (or the whole store's) run decides those
		}
		if !r.Time.Before(now.Add(-grace)) {
			for _, m := range r.Marks {
				pending[m.Key] = true
			}
			continue
		}
		dueRuns = append(dueRuns, r.Run)
		for _, m := range r.Marks {
			if handled[m.Key] {
				continue
			}
			handled[m.Key] = true
			c, ok := cands[m.Key]
			switch {
			case !ok:
				mr.Unmarked = append(mr.Unmarked, trash.Skip{Key: m.Key, Reason: "no longer a candidate (named by a session, modified, or gone since it was marked)"})
			case c.Size != m.Size || !sameSecond(c.ModTime, m.ModTime):
				mr.Unmarked = append(mr.Unmarked, trash.Skip{Key: m.Key, Reason: "changed since it was marked"})
			default:
				due = append(due, trash.Item(m))
				decided[m.Key] = true
			}
		}
	}
	if len(due) > 0 {
		named, err := namedSince(ctx, o, due, readStart.Add(-rereadMargin), opts.Jobs)
		if err != nil {
			fail(err)
			return // nothing deleted, no mark dropped: the next run tries again
		}
		var goes trash.List
		for _, it := range due {
			if named[it.Key] {
				mr.Unmarked = append(mr.Unmarked, trash.Skip{Key: it.Key, Reason: NamedDuringRun})
				continue
			}
			goes = append(goes, it)
		}
		if len(goes) > 0 {
			log, err := startDeletedLog(ctx, lock, sr.recovery, opts.Split, dueRuns, runClock())
			if err != nil {
				fail(err)
				return // nothing deleted, no mark dropped
			}
			res, err := trash.Move(ctx, lock, goes, trash.Options{NoTrash: true, Jobs: opts.Jobs, StoreBlobs: plan.Blobs, Split: opts.Split, Log: log})
			mr.Deleted = res
			run, ferr := log.Finish(ctx)
			mr.DeletedRun = run
			if ferr != nil {
				fail(fmt.Errorf("gc: %w", ferr))
			}
			switch {
			case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
				sr.Outcome.Worsen(outcome.Interrupted)
				return
			case err != nil:
				fail(err)
				return
			case res != nil && len(res.Failed) > 0:
				sr.Outcome.Worsen(outcome.Incomplete)
				return
			}
		}
	}
	for _, run := range dueRuns {
		if _, err := trash.Unmark(context.WithoutCancel(ctx), lock, run); err != nil {
			fail(fmt.Errorf("gc: drop the marks of run %s, done with: %w", run, err))
			return
		}
	}
	// This plan's other candidates are marked now.
	var fresh trash.List
	for c := range plan.Candidates.All() {
		if pending[c.Key] {
			mr.Pending++
			continue
		}
		if decided[c.Key] {
			continue // deleted, or kept as named, above; one changed is marked anew
		}
		fresh = append(fresh, trash.Item{Key: c.Key, Size: c.Size, ModTime: c.ModTime})
	}
	if len(fresh) == 0 || ctx.Err() != nil {
		return
	}
	// Named as the deleted run above would be when both start in one
	// second: MarkItems then takes the next free one (a name names one run).
	res, err := trash.MarkItems(ctx, lock, fresh, runClock(), opts.Split)
	if err != nil {
		fail(err)
		return
	}
	mr.Run, mr.Marked, mr.MarkedBytes = res.Run, res.Marked, res.Bytes
}

// namedSince reads the sessions that changed since t and reports which of
// the items' keys they name; an incomplete read is an error.
func namedSince(ctx context.Context, o Options, items []trash.Item, t time.Time, jobs int) (map[string]bool, error) {
	idx := retain.NewIndex()
	for _, it := range items {
		idx.Add(it.Key)
	}
	sr, err := scan.Run(ctx, scan.Options{Sources: changedSources(o.Sessions, t), Jobs: jobs, Text: idx.Mark, CountOnly: true})
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	if problems := sr.Shortfall(); len(problems) > 0 || ctx.Err() != nil {
		if ctx.Err() != nil {
			problems = append(problems, "interrupted while reading the sessions")
		}
		return nil, fmt.Errorf("%w: %s", ErrTrashCheckIncomplete, strings.Join(problems, "; "))
	}
	named := map[string]bool{}
	for i, it := range items {
		if idx.Referenced(i) {
			named[it.Key] = true
		}
	}
	return named, nil
}

// sameSecond compares a bucket listing's times, which may differ below a
// second between two listings of one write.
func sameSecond(a, b time.Time) bool {
	d := a.Sub(b)
	return d > -time.Second && d < time.Second
}

// runClock names the runs a gc run starts on a bucket (its mark run, its
// deleted run): the time they start at.
var runClock = time.Now

// startDeletedLog starts the record of a run's deletes for good where the
// bucket's service keeps deleted objects (r, as the run asked it), so that
// gc restore can bring them back from its versions; nil where it keeps
// nothing, or is not known to. now names it.
func startDeletedLog(ctx context.Context, lock *storelock.Lock, r store.Recovery, split string, marks []string, now time.Time) (*trash.DeletedLog, error) {
	if !r.Keeps() {
		return nil, nil
	}
	log, err := trash.StartDeleted(ctx, lock, trash.DeletedOptions{Now: now, Split: split, Recovery: r, Marks: marks})
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	return log, nil
}
