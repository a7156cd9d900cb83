package forget

import (
	"context"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
)

// eachInside calls fn for every store a reference resolves inside, with
// its key there: a reference that keeps a blob keeps it in every store it
// may name.
func eachInside(stores []scan.Target, x ref.Reference, fn func(s int, key string)) {
	for i, t := range stores {
		if st, k := t.Resolver.Resolve(x); st == ref.Inside {
			fn(i, k)
		}
	}
}

// without is a source read with the forgotten owners' units left out.
type without struct {
	sessions.Source
	skip map[owner.Unit]bool
}

func (w *without) Walk(ctx context.Context, fn func(sessions.Item) error) (sessions.Counts, error) {
	return w.Source.Walk(ctx, func(it sessions.Item) error {
		if it.Err == nil && w.skip[owner.UnitOf(it.Place)] {
			return nil
		}
		return fn(it)
	})
}

// Close leaves the source open: it belongs to the caller.
func (w *without) Close() error { return nil }
