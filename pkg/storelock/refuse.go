package storelock

import (
	"errors"

	"github.com/mediactl/mediactl/pkg/outcome"
)

// Refused is the one lock-and-refuse rule of every operation: when err
// (from Acquire, AcquireShard, Check, CheckShard, Do or DoShard) is another
// run holding the lock, it records that run in *locked, makes *o refused,
// and reports true — the operation then did nothing and returns its report,
// not an error. Any other err is left to the caller.
func Refused(err error, locked **LockedError, o *outcome.Outcome) bool {
	if !errors.As(err, locked) {
		return false
	}
	o.Worsen(outcome.Refused)
	return true
}
