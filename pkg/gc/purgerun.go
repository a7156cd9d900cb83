package gc

import (
	"context"
	"errors"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// PurgeRun is what RunPurge did.
type PurgeRun struct {
	*PurgeReport
	Outcome outcome.Outcome
	// Locked is the lock another run holds: nothing was done.
	Locked *storelock.LockedError
	// Refused says why nothing was purged although the lock was taken: the
	// sessions could not all be read, so which trashed blob a session names
	// is unknown.
	Refused string
	// DeleteRecovery is what the bucket's service keeps of what the purge
	// deletes (nil for a local store), as gc reports it.
	DeleteRecovery *Recovery
}

// RunPurge is `gc purge` as one protocol: it takes st's lock (command is
// recorded in it), runs purge and says what that came to. An I/O error is
// returned with the outcome incomplete.
func RunPurge(ctx context.Context, st store.Store, command string, opts PurgeOptions) (*PurgeRun, error) {
	pr := &PurgeRun{PurgeReport: &PurgeReport{}}
	err := storelock.Do(ctx, st, command, func(l *storelock.Lock) error {
		pr.DeleteRecovery, opts.recovery = deleteRecovery(ctx, l.Store())
		rep, err := purge(ctx, l, opts)
		if rep != nil {
			pr.PurgeReport = rep
		}
		switch {
		case err != nil && ctx.Err() != nil:
			pr.Outcome = outcome.Interrupted
		case errors.Is(err, ErrTrashCheckIncomplete):
			pr.Outcome, pr.Refused = outcome.Incomplete, err.Error()
		case err != nil:
			pr.Outcome = outcome.Incomplete
			return err
		}
		return nil
	})
	if storelock.Refused(err, &pr.Locked, &pr.Outcome) {
		return pr, nil
	}
	return pr, err
}
