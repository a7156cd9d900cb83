package forget

import (
	"context"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
)

// refs are the precise references of the first read, by session unit: each
// (unit, reference) once, with how often.
type refs struct {
	units    map[owner.Unit]int32
	unitList []owner.Unit
	pairs    map[refKey]*refVal
}

type refKey struct {
	unit int32
	text string
}

type refVal struct {
	n     int64
	r     ref.Reference
	owner string // set after the read
}

func newRefs() *refs {
	return &refs{units: map[owner.Unit]int32{}, pairs: map[refKey]*refVal{}}
}

// add is the scan's OnReference (one goroutine).
func (r *refs) add(f scan.Found) {
	u := owner.UnitOf(f.Place)
	ui, ok := r.units[u]
	if !ok {
		ui = int32(len(r.unitList))
		r.units[u] = ui
		r.unitList = append(r.unitList, u)
	}
	x := f.Ref
	k := refKey{unit: ui, text: x.Raw + "\x00" + x.Path + "\x00" + x.Scheme + "\x00" + x.Bucket + "\x00" + string(rune('0'+x.Kind))}
	v := r.pairs[k]
	if v == nil {
		v = &refVal{r: x}
		r.pairs[k] = v
	}
	v.n++
}

// hint is the text of a reference that may carry its own owner (an
// agent-inputs/{user_id}/… key), as report attributes it.
func hint(x ref.Reference) string {
	for _, t := range []string{x.Path, x.Raw} {
		if _, _, ok := owner.AgentRunsOwner(t); ok {
			return t
		}
	}
	return ""
}

// resolve places a reference as scan and report do: the first store it
// resolves inside, or the first of several whose listing holds the key. id
// is -1 when no listing holds it.
func resolve(stores []scan.Target, rets []*retain.Retention, x ref.Reference) (s int, key string, id int, inside bool) {
	s, id = -1, -1
	for i, t := range stores {
		st, k := t.Resolver.Resolve(x)
		if st != ref.Inside {
			continue
		}
		if s < 0 {
			s, key = i, k
		}
		if n, found := rets[i].Lookup(k); found {
			return i, k, n, true
		}
	}
	return s, key, -1, s >= 0
}

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
