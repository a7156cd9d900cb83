package owner

import (
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
)

// References are the precise references a read of the sessions found, by
// session unit: each (unit, reference) once, with how often. Add is a
// scan's OnReference (called from one goroutine). report and forget
// attribute them to owners once the read is done.
type References struct {
	index map[Unit]int32
	// Units are the units with references, in the order first seen; a
	// Pair's Unit indexes it.
	Units []Unit
	// Pairs are the distinct (unit, reference) pairs.
	Pairs map[PairKey]*Pair
	// last is the unit of the previous reference: a document's references
	// come one after another.
	last    Unit
	lastIdx int32
}

// PairKey identifies a (unit, reference) pair.
type PairKey struct {
	Unit int32
	ref  ref.Reference
}

// Pair is one reference of one unit.
type Pair struct {
	Ref ref.Reference
	// N is how often the unit holds it.
	N int64
	// Owner is free for the caller (forget notes the unit's owner here).
	Owner string
}

// NewReferences returns an empty table.
func NewReferences() *References {
	return &References{index: map[Unit]int32{}, Pairs: map[PairKey]*Pair{}, lastIdx: -1}
}

// Add records a reference a scan found.
func (r *References) Add(f scan.Found) {
	u := UnitOf(f.Place)
	ui := r.lastIdx
	if ui < 0 || u != r.last {
		var ok bool
		if ui, ok = r.index[u]; !ok {
			ui = int32(len(r.Units))
			r.index[u] = ui
			r.Units = append(r.Units, u)
		}
		r.last, r.lastIdx = u, ui
	}
	// The reference is the scan's own copy (Found outlives the call): the
	// key shares its strings.
	k := PairKey{Unit: ui, ref: f.Ref}
	p := r.Pairs[k]
	if p == nil {
		p = &Pair{Ref: f.Ref}
		r.Pairs[k] = p
	}
	p.N++
}

// Has reports whether unit u holds a reference.
func (r *References) Has(u Unit) bool {
	_, ok := r.index[u]
	return ok
}

// Hint is the text of a reference that carries its own owner (an
// agent-inputs/{user_id}/{thread_id}/uploads/ key), or "".
func Hint(x ref.Reference) string {
	for _, t := range []string{x.Path, x.Raw} {
		if _, _, ok := AgentRunsOwner(t); ok {
			return t
		}
	}
	return ""
}

// Resolve places a reference as scan does: in the first store it resolves
// inside, or — when it is inside several (an alias of a moved folder) — in
// the first whose listing (rets) holds the key. inside is false when it is
// inside no store; id is -1 when no listing holds it (a dangling reference).
func Resolve(stores []scan.Target, rets []*retain.Retention, x ref.Reference) (store int, key string, id int, inside bool) {
	store, id = -1, -1
	for i, t := range stores {
		st, k := t.Resolver.Resolve(x)
		if st != ref.Inside {
			continue
		}
		if store < 0 {
			store, key = i, k
		}
		if n, found := rets[i].Lookup(k); found {
			return i, k, n, true
		}
	}
	return store, key, -1, store >= 0
}
