package trash

import (
	"context"
	"errors"

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
	Outcome  outcome.Outcome
	// Locked is the lock another run holds: nothing was done.
	Locked *storelock.LockedError
}

// RunRestore is `gc restore` as one protocol: it takes st's lock (command
// is recorded in it), puts the run back — dropping a mark run's marks, or
// moving a trash run's blobs back — and says what that came to: a blob kept
// in the trash (its key exists again) makes the run incomplete, an
// interrupt interrupted. A run that does not exist is a *NoRunError; an I/O
// error is returned with the outcome incomplete.
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
		res, err := Restore(ctx, l, run)
		if res != nil {
			rr.Result = res
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
		case len(rr.Result.Kept) > 0:
			rr.Outcome = outcome.Incomplete
		}
		return nil
	})
	if storelock.Refused(err, &rr.Locked, &rr.Outcome) {
		return rr, nil
	}
	return rr, err
}
