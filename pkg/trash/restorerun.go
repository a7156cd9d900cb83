package trash

import (
	"context"
	"errors"
	"slices"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// RestoreRun is what RunRestore did.
type RestoreRun struct {
	// Result is a trash run's restore; Unmarked, for a mark run (a bucket's
	// deferred deletes, whose blobs are still in the store), the blobs no
	// longer marked.
	Result   *RestoreResult
	MarkRun  bool
	Unmarked int64
	// Deleted is a deleted run's restore (a bucket's deletes for good,
	// brought back from the versions its service keeps); nil for the others.
	Deleted *DeletedRestore
	// PurgedIn, for a trash run of which a gc purge (interrupted) deleted a
	// part, names the deleted run that records that part: gc restore of it
	// brings those blobs back. The trash run's restore is then incomplete.
	PurgedIn string
	Outcome  outcome.Outcome
	// Locked is the lock another run holds: nothing was done.
	Locked *storelock.LockedError
}

// RunRestore is `gc restore` as one protocol: it takes st's lock (command
// is recorded in it), puts the run back — dropping a mark run's marks,
// bringing a deleted run's blobs back from the bucket's versions
// (RestoreDeleted), or moving a trash run's blobs back — and says what that
// came to: a blob kept in the trash or not overwritten (its key exists
// again), or no longer kept by the service, makes the run incomplete, an
// interrupt interrupted. A run that does not exist is a *NoRunError; an I/O
// error, or a service whose versions are not restored here, is returned with
// the outcome incomplete.
func RunRestore(ctx context.Context, st store.Store, command, run string) (*RestoreRun, error) {
	rr := &RestoreRun{Result: &RestoreResult{Run: run, Kept: []Skip{}}}
	err := storelock.Do(ctx, st, command, func(l *storelock.Lock) error {
		if isMarkRun(ctx, l.Store(), run) {
			rr.MarkRun = true
			n, err := Unmark(ctx, l, run)
			rr.Unmarked = n
			if err != nil {
				rr.Outcome = outcome.Incomplete
				return err
			}
			return nil
		}
		if isDeletedRun(ctx, l.Store(), run) {
			return restoreDeleted(ctx, l, run, rr)
		}
		res, err := Restore(ctx, l, run)
		if res != nil {
			rr.Result = res
		}
		var noRun *NoRunError
		switch {
		case errors.As(err, &noRun):
			noRun.DeletedIn = deletedIn(ctx, l.Store(), run)
			return err
		case err != nil && ctx.Err() != nil:
			rr.Outcome = outcome.Interrupted
			return nil
		case err != nil:
			rr.Outcome = outcome.Incomplete
			return err
		case len(rr.Result.Kept) > 0:
			rr.Outcome = outcome.Incomplete
		}
		if rr.PurgedIn = deletedIn(ctx, l.Store(), run); rr.PurgedIn != "" {
			rr.Outcome = outcome.Incomplete // a part of the run is elsewhere
		}
		return nil
	})
	if storelock.Refused(err, &rr.Locked, &rr.Outcome) {
		return rr, nil
	}
	return rr, err
}

// restoreDeleted is RunRestore of a deleted run.
func restoreDeleted(ctx context.Context, l *storelock.Lock, run string, rr *RestoreRun) error {
	res, err := RestoreDeleted(ctx, l, run)
	if res != nil {
		rr.Deleted = res
		rr.Result = &RestoreResult{Run: run, Restored: res.Restored, Bytes: res.Bytes, Kept: res.Kept, NotAttempted: res.NotAttempted}
	}
	var noRun *NoRunError
	switch {
	case errors.As(err, &noRun):
		return err
	case err != nil && ctx.Err() != nil:
		rr.Outcome = outcome.Interrupted
		return nil
	case err != nil:
		rr.Outcome = outcome.Incomplete
		return err
	case len(res.Kept) > 0 || len(res.NotRecoverable) > 0:
		rr.Outcome = outcome.Incomplete
	}
	return nil
}

// deletedIn names the deleted run that records the deletes of a mark run's
// blobs, or of a purged trash run's, "" when none does (or the records
// cannot be read).
func deletedIn(ctx context.Context, st store.Store, run string) string {
	runs, _ := Deleteds(ctx, st)
	for _, r := range runs {
		if slices.Contains(r.Header.Marks, run) || slices.Contains(r.Header.Trash, run) {
			return r.Run
		}
	}
	return ""
}
