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

// without is a source read with the forgotten owners' units left out, each
// only while it is as the first read saw it (fingerprints says why).
type without struct {
	sessions.Source
	skip   map[owner.Unit]bool
	prints *fingerprints
}

func (w *without) Walk(ctx context.Context, fn func(sessions.Item) error) (sessions.Counts, error) {
	return w.Source.Walk(ctx, func(it sessions.Item) error {
		if it.Err == nil && w.unchanged(it) {
			return nil
		}
		return fn(it)
	})
}

// unchanged reports whether it is a unit left out, as the first read saw
// it. A document is read for that here, once more, in full; one that
// cannot be is handed on, to fail where every read fails.
func (w *without) unchanged(it sessions.Item) bool {
	u := owner.UnitOf(it.Place)
	if !w.skip[u] {
		return false
	}
	name := w.prints.name(u)
	if it.Open == nil {
		return w.prints.same(name, w.prints.row(it.Values))
	}
	print, err := w.prints.document(it.Open)
	return err == nil && w.prints.same(name, print)
}

// Close leaves the source open: it belongs to the caller.
func (w *without) Close() error { return nil }
