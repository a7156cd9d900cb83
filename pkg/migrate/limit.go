package migrate

import (
	"context"
	"math"

	"golang.org/x/time/rate"
)

// limiter spreads reads over time so that all jobs together stay under a byte
// rate (--bwlimit). It lets a burst of one second through, so that short
// blobs are not each delayed. Waiting ends when the context is cancelled: an
// interrupted migration stops at once, not when the rate would allow.
type limiter struct {
	l *rate.Limiter // nil: unlimited
}

func newLimiter(bytesPerSecond int64) *limiter {
	if bytesPerSecond <= 0 {
		return nil
	}
	burst := int(min(bytesPerSecond, math.MaxInt32))
	return &limiter{l: rate.NewLimiter(rate.Limit(bytesPerSecond), burst)}
}

// wait blocks until n more bytes fit under the rate, or ctx is done.
func (l *limiter) wait(ctx context.Context, n int) error {
	if l == nil {
		return nil
	}
	for n > 0 {
		step := min(n, l.l.Burst())
		if err := l.l.WaitN(ctx, step); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		n -= step
	}
	return nil
}
