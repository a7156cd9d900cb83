package gc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// RunOptions configure Run: the policy, the stores it applies to, and
// whether to act on the plans.
type RunOptions struct {
	// Options is the policy and the sessions; its Store and Companion are
	// set per store from Stores and CompanionOf.
	Options
	Stores []store.Store
	// CompanionOf gives a store's companion rule (see Options.Companion), or
	// nil for none.
	CompanionOf func(store.Store) func(key string) (owner string, ok bool)
	Guards      Guards
	// Delete acts on the plans. Without it Run only plans, and still
	// refuses a store whose lock another run holds, as the real run would.
	Delete  bool
	NoTrash bool
	// Command is recorded in the store lock, for whoever finds it held.
	Command string
	// Progress, when set, gives the progress of one store's removals.
	Progress func(st store.Store, total int64) Progress
	// Split names the split a shard's run is part of, so that its trash
	// run says so (trash.Options.Split); "" for none.
	Split string
	// On a bucket, Delete marks the candidates and deletes the ones earlier
	// runs marked (see MarkReport) unless CopyToTrash asks for the copy
	// trash, which takes the blobs out of sight at once. Grace is how long a
	// blob stays marked before a run may delete it (0: DefaultGrace).
	CopyToTrash bool
	Grace       time.Duration
}

// Progress is told about each blob removed, and finished when a store is done.
type Progress interface {
	Add(int64)
	Finish()
}

// StoreReport is what Run did on one store.
type StoreReport struct {
	Store   string          `json:"store"`
	Plan    *Plan           `json:"plan"`
	Result  *trash.Result   `json:"result,omitempty"`
	Outcome outcome.Outcome `json:"outcome"`
	// Refused is the guard that refused the plan, Locked the run holding the
	// store's lock; Err what made the store's run incomplete.
	// Trash is the check of the trash against the sessions: the blobs put
	// back because a session names them (before the moves, and after them,
	// named during the run).
	Trash *TrashCheck `json:"trash_check,omitempty"`
	// PutBack counts the blobs this run moved and put back because the
	// check after the moves could not read every session.
	PutBack int64 `json:"put_back,omitempty"`
	// Marks is what a run on a bucket marked and deleted (deferred deletes).
	Marks *MarkReport `json:"marks,omitempty"`
	// DeletedRun names the record of a sweep's deletes without the trash
	// (Result.Deleted) on a bucket whose service keeps deleted objects
	// (DeleteRecovery): gc restore of it brings them back from the
	// service's versions. "" when none was kept.
	DeletedRun string `json:"deleted_run,omitempty"`
	// DeleteRecovery is what the bucket's service keeps of a blob the run
	// deletes (versioning, soft delete), asked once before anything is
	// removed; nil for a store that cannot say (a local one).
	DeleteRecovery *Recovery `json:"delete_recovery,omitempty"`
	// recovery is the service's own answer that DeleteRecovery reports:
	// the record of a run's deletes for good (trash.StartDeleted) is made
	// from it, not from the report's text, whose retention is rounded.
	recovery store.Recovery
	Refused  *RefusedError          `json:"-"`
	Locked   *storelock.LockedError `json:"-"`
	Err      error                  `json:"-"`
}

// Recovery is what a bucket's service keeps of a deleted object, as a
// report says it: [store.Recovery] with the retention in the report's
// duration format.
type Recovery struct {
	// Kind is one of store's Recovery… kinds: "none", "unknown",
	// "s3-versioning", "s3-versioning-suspended", "gcs-versioning",
	// "gcs-soft-delete", "azure-versioning", "azure-soft-delete".
	Kind string `json:"kind"`
	// Retention is how long a deleted blob is kept ("7d"), "" when until
	// someone or a rule the service did not report removes it, or nothing is
	// kept.
	Retention string `json:"retention,omitempty"`
	// Detail is what the service reported, or why it is not known.
	Detail string `json:"detail"`
}

// recoveryTimeout bounds the question to a bucket's service about what it
// keeps of deleted objects: an answer that does not come is "unknown", and
// the run goes on.
const recoveryTimeout = 30 * time.Second

// deleteRecovery asks st's service once what it keeps of a deleted blob,
// and returns it as a report says it and as the service said it; nil and
// the zero Recovery (which keeps nothing) when st cannot say (a local store).
func deleteRecovery(ctx context.Context, st store.Store) (*Recovery, store.Recovery) {
	rr, ok := store.AsRecoveryReporter(st)
	if !ok {
		return nil, store.Recovery{}
	}
	ctx, cancel := context.WithTimeout(ctx, recoveryTimeout)
	defer cancel()
	r := rr.DeleteRecovery(ctx)
	rep := &Recovery{Kind: r.Kind, Detail: r.Detail}
	if r.Retention > 0 {
		rep.Retention = retain.FormatAge(r.Retention)
	}
	return rep, r
}

// Report is what Run did.
type Report struct {
	DryRun  bool            `json:"dry_run"`
	Stores  []*StoreReport  `json:"stores"`
	Outcome outcome.Outcome `json:"outcome"`
}

// Done is the number of blobs removed, over all stores.
func (r *Report) Done() int64 {
	var n int64
	for _, s := range r.Stores {
		if s.Result != nil {
			n += s.Result.Trashed + s.Result.Deleted
		}
		if s.Marks != nil && s.Marks.Deleted != nil {
			n += s.Marks.Deleted.Deleted
		}
	}
	return n
}

// Run is gc: for each store, in turn, it takes the store's lock (with
// Delete), plans, applies the guards and, when they pass, executes the plan;
// then it releases the lock, also when the run was interrupted. A store
// whose lock is held, whose plan a guard refuses or whose sessions could not
// all be read is reported as such, and the next store is done all the same.
// Run returns an error only for invalid options and for a store that holds
// another store (a *NestedStoreError): no store is touched after that.
func Run(ctx context.Context, opts RunOptions) (*Report, error) {
	if len(opts.Stores) == 0 {
		return nil, errors.New("gc: no store")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Command == "" {
		opts.Command = "gc"
	}
	rep := &Report{DryRun: !opts.Delete, Stores: []*StoreReport{}}
	for _, st := range opts.Stores {
		sr, err := runStore(ctx, st, opts)
		if sr != nil {
			rep.Stores = append(rep.Stores, sr)
			rep.Outcome.Worsen(sr.Outcome)
		}
		if err != nil {
			return rep, err
		}
		if ctx.Err() != nil {
			rep.Outcome.Worsen(outcome.Interrupted)
			break
		}
	}
	return rep, nil
}

func runStore(ctx context.Context, st store.Store, opts RunOptions) (_ *StoreReport, err error) {
	sr := &StoreReport{Store: st.Location()}
	var lock *storelock.Lock
	if opts.Delete {
		lock, err = storelock.AcquireShard(ctx, st, opts.Command, opts.Shard)
	} else {
		err = storelock.CheckShard(ctx, st, opts.Shard)
	}
	switch {
	case storelock.Refused(err, &sr.Locked, &sr.Outcome):
		if opts.Delete {
			return sr, nil
		}
	case err != nil:
		sr.Outcome, sr.Err = outcome.Incomplete, err
		return sr, nil
	}
	if lock != nil {
		defer func() {
			if rerr := lock.Release(ctx); rerr != nil && sr.Err == nil {
				sr.Err = fmt.Errorf("gc: %w", rerr)
				sr.Outcome.Worsen(outcome.Incomplete)
			}
		}()
	}

	// What a delete for good means on this store, said before anything is
	// deleted: a bucket with versioning or soft delete still keeps it.
	sr.DeleteRecovery, sr.recovery = deleteRecovery(ctx, st)

	o := opts.Options
	o.Store = st
	if opts.CompanionOf != nil {
		o.Companion = opts.CompanionOf(st)
	}
	// What a removing run reads the sessions for anyway also checks the
	// trash: a blob that a session began to name after the run that trashed
	// it comes back before anything else is removed.
	readStart := time.Now()
	keepsReferenced := o.Policy == "" || o.Policy == Refcount || o.KeepReferenced
	checkTrash := opts.Delete && keepsReferenced && len(o.Sessions) > 0
	if checkTrash {
		if o.trash, err = loadTrash(ctx, st, o.Shard, o.Companion); err != nil {
			sr.Outcome, sr.Err = outcome.Incomplete, fmt.Errorf("gc: %w", err)
			return sr, nil
		}
	}
	plan, err := MakePlan(ctx, o)
	if err != nil {
		return nil, err
	}
	sr.Plan = plan
	if ctx.Err() != nil {
		sr.Outcome.Worsen(outcome.Interrupted)
		return sr, nil
	}
	phase("planned")
	var nested *NestedStoreError
	switch err := plan.Check(opts.Guards); {
	case errors.As(err, &nested):
		return sr, err
	case errors.As(err, &sr.Refused):
		sr.Outcome.Worsen(outcome.Refused)
	case errors.Is(err, ErrIncomplete):
		sr.Outcome.Worsen(outcome.Incomplete)
		sr.Err = err
	case err != nil:
		return sr, err
	}
	if o.trash != nil && plan.Complete {
		// The plan's read was complete, so its marks on the trash are too.
		c, err := o.trash.restoreNamed(ctx, lock, "")
		sr.Trash = c
		if err != nil {
			sr.Outcome.Worsen(outcome.Incomplete)
			sr.Err = err
			return sr, nil
		}
	}
	if opts.Delete && sr.Outcome == outcome.OK && marking(st, opts, keepsReferenced) {
		runMarks(ctx, lock, sr, plan, o, opts, readStart)
		return sr, nil
	}
	if !opts.Delete || sr.Outcome != outcome.OK || plan.Candidates.Len() == 0 {
		return sr, nil
	}

	var bar Progress
	if opts.Progress != nil {
		bar = opts.Progress(st, int64(plan.Candidates.Len()))
	}
	// Without the trash, never a delete before the sessions were read again:
	// on a local store the blobs are moved aside (a rename) and deleted
	// after the check; on a bucket, where moving aside is a copy, the
	// sessions that changed are read again first, and what they name stays.
	_, local := store.AsBatchMover(st)
	deferred := opts.NoTrash && checkTrash && local
	eo := ExecOptions{NoTrash: opts.NoTrash, Jobs: opts.Jobs, Split: opts.Split, Deferred: deferred}
	if bar != nil {
		eo.Progress = bar
	}
	if opts.NoTrash && checkTrash && !local {
		items := make([]trash.Item, 0, plan.Candidates.Len())
		for c := range plan.Candidates.All() {
			items = append(items, trash.Item{Key: c.Key})
		}
		named, err := namedSince(ctx, o, items, readStart.Add(-rereadMargin), opts.Jobs)
		if err != nil {
			sr.Outcome.Worsen(outcome.Incomplete)
			sr.Err = err
			return sr, nil
		}
		eo.Keep = func(key string) bool { return named[key] }
	}
	if _, bucket := store.AsBatchRemover(st); opts.NoTrash && bucket && !local {
		// A bucket's deletes for good, recorded as the marks' deletes are
		// where the service keeps what is deleted.
		if eo.Log, err = startDeletedLog(ctx, lock, sr.recovery, opts.Split, nil, runClock()); err != nil {
			sr.Outcome.Worsen(outcome.Incomplete)
			sr.Err = err
			return sr, nil // nothing deleted
		}
	}
	res, err := plan.Execute(ctx, lock, eo)
	if bar != nil {
		bar.Finish()
	}
	sr.Result = res
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		sr.Outcome.Worsen(outcome.Interrupted)
		// What else went wrong (blobs left in a run, and which; a manifest
		// not written) is reported as for a run that was not interrupted.
		sr.Err = trash.BesidesInterruption(err, ctx.Err())
	case err != nil:
		// The trash or the store failed: a failure of the run, whatever it
		// says about the blobs.
		sr.Outcome.Worsen(outcome.Incomplete)
		sr.Err = err
	case len(res.Failed) > 0:
		sr.Outcome.Worsen(outcome.Incomplete)
	}
	run, ferr := eo.Log.Finish(ctx)
	sr.DeletedRun = run
	if ferr != nil {
		sr.Outcome.Worsen(outcome.Incomplete)
		sr.Err = errors.Join(sr.Err, fmt.Errorf("gc: %w", ferr))
	}
	phase("moved")
	if checkTrash && res != nil && res.Run != "" && res.Trashed > 0 && ctx.Err() == nil {
		reconcile(ctx, lock, sr, o, opts.Jobs, deferred, readStart.Add(-rereadMargin))
	}
	return sr, nil
}

// reconcile reads the sessions again after a run's moves and puts back every
// blob a session saved meanwhile names: the runtime kept working while the
// run read, planned and moved (a content-addressed writer re-uses a blob it
// finds present without writing it). Should the sessions not all be read,
// every blob the run moved goes back and the run is incomplete. A sweep
// without the trash (deferred) deletes its run only after that.
func reconcile(ctx context.Context, lock *storelock.Lock, sr *StoreReport, o Options, jobs int, deferred bool, since time.Time) {
	res := sr.Result
	c, err := CheckTrash(ctx, lock, TrashCheckOptions{Sessions: o.Sessions, Jobs: jobs, Companion: o.Companion, Shard: o.Shard, Run: res.Run, ChangedSince: since})
	if c != nil {
		if sr.Trash == nil {
			sr.Trash = c
		} else {
			sr.Trash.Merge(c)
		}
		for _, r := range c.Restored {
			if r.Run == res.Run {
				res.Trashed--
				res.Bytes -= r.Size
			}
		}
	}
	if err == nil && !c.Complete {
		err = fmt.Errorf("%w: %s", ErrTrashCheckIncomplete, strings.Join(c.Problems, "; "))
	}
	if err != nil {
		// Unsure: everything this run moved goes back.
		sr.Outcome.Worsen(outcome.Incomplete)
		sr.Err = errors.Join(sr.Err, err)
		back, rerr := trash.Restore(context.WithoutCancel(ctx), lock, res.Run)
		if back != nil {
			sr.PutBack = back.Restored
			res.Trashed -= back.Restored
			res.Bytes -= back.Bytes
		}
		if rerr != nil {
			sr.Err = errors.Join(sr.Err, fmt.Errorf("gc: put back trash run %s: %w", res.Run, rerr))
		}
		return
	}
	if !deferred {
		return
	}
	purged, err := trash.PurgeRun(context.WithoutCancel(ctx), lock, res.Run)
	if purged != nil && len(purged.Runs) > 0 {
		res.Deleted += purged.Blobs
		res.Trashed -= purged.Blobs
	}
	if err != nil {
		sr.Outcome.Worsen(outcome.Incomplete)
		sr.Err = errors.Join(sr.Err, fmt.Errorf("gc: delete the blobs moved aside into %s: %w (%w)", res.Run, err, trash.ErrLeftInRun))
		return
	}
	if res.Trashed == 0 {
		res.Run = ""
	}
}

// phaseHook, set by tests, is called at the boundaries of a store's run
// ("planned": the sessions were read; "moved": the sweep is over; "reread":
// the check after the moves read the sessions again), where a live runtime
// may save a session at any moment.
var phaseHook func(phase string)

func phase(p string) {
	if phaseHook != nil {
		phaseHook(p)
	}
}
