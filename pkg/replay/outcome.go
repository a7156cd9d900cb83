package replay

import (
	"context"
	"errors"

	"github.com/mediactl/mediactl/pkg/outcome"
)

// Outcome is what opening and reading one reference came to, for a caller
// that reports it (mediactl cat): a refusal (the Config does not allow the
// reference) is refused; bytes that do not hash to what they must are a
// finding; a cancelled context is an interruption; any other error (the
// object is missing, the service failed) is incomplete.
func Outcome(ctx context.Context, err error) outcome.Outcome {
	var refused *RefusedError
	switch {
	case err == nil:
		return outcome.OK
	case errors.As(err, &refused):
		return outcome.Refused
	case errors.Is(err, ErrDigestMismatch):
		return outcome.Found
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return outcome.Interrupted
	}
	return outcome.Incomplete
}
