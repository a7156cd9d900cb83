package replay_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/replay"
)

// What a read came to: a refusal refused, altered bytes a finding, a cancel
// an interruption, anything else incomplete.
func TestOutcome(t *testing.T) {
	r := newReplayer(t, replay.Config{Roots: []string{t.TempDir()}})
	_, _, refusedErr := r.Open(ctx, "/etc/passwd")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want outcome.Outcome
	}{
		{ctx, nil, outcome.OK},
		{ctx, refusedErr, outcome.Refused},
		{ctx, fmt.Errorf("read: %w", replay.ErrDigestMismatch), outcome.Found},
		{cancelled, errors.New("read: connection reset"), outcome.Interrupted},
		{ctx, errors.New("no such object"), outcome.Incomplete},
	} {
		if got := replay.Outcome(c.ctx, c.err); got != c.want {
			t.Errorf("Outcome(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}
