package owner

import (
	"path"
	"slices"
	"strings"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
)

// References are the precise references a read of the sessions found, by
// session unit, in the order found. Add is a scan's OnReference (called
// from one goroutine). report and forget attribute them to owners once the
// read is done.
//
// A unit's reference is kept once per run of equal ones (a tool call
// reading the file its message holds names it twice in a row), not once per
// unit: a table of every distinct (unit, reference) costs a map of millions
// of strings on a dense store, while what is made of the pairs — owners'
// counts, the blobs they name — adds the Ns up and counts each blob once
// anyway.
type References struct {
	index map[Unit]int32 // units found without a tag
	// byTag indexes Units by a row's tag (sessions.Item.Tag), plus one: a
	// database's rows are found again by their number, not their name.
	byTag []int32
	// Units are the units with references, in the order first seen; a
	// Pair's Unit indexes it.
	Units []Unit
	// Tags are the units' tags (Found.Tag), 0 for none: what an
	// [Attributor] asks for with a unit.
	Tags []int64
	// pairs are the (unit, reference) pairs, in chunks of pairChunk: a
	// dense store has millions, which a growing slice would copy over and
	// over.
	pairs [][]Pair
	n     int
	// last is the unit of the previous reference: a document's references
	// come one after another.
	last    Unit
	lastTag int64
	lastIdx int32
}

// Pair is one reference of one unit.
type Pair struct {
	// Unit indexes References.Units.
	Unit int32
	Ref  ref.Reference
	// N is how often the unit holds it, one after another.
	N int64
	// Owner is free for the caller (forget notes the unit's owner here).
	Owner string
}

// NewReferences returns an empty table.
func NewReferences() *References {
	return &References{index: map[Unit]int32{}, lastIdx: -1}
}

// Add records a reference a scan found. The reference is the scan's own
// copy (a Found outlives the call): the pair shares its strings.
func (r *References) Add(f scan.Found) {
	ui := r.unit(f)
	if r.n > 0 {
		if p := r.Pair(r.n - 1); p.Unit == ui && p.Ref == f.Ref {
			p.N++
			return
		}
	}
	if r.n%pairChunk == 0 {
		r.pairs = append(r.pairs, make([]Pair, 0, pairChunk))
	}
	c := &r.pairs[len(r.pairs)-1]
	*c = append(*c, Pair{Unit: ui, Ref: f.Ref, N: 1})
	r.n++
}

const pairChunk = 4096

// unit is the index in Units of the unit f was found in, added when new.
func (r *References) unit(f scan.Found) int32 {
	if t := f.Tag; t > 0 {
		if r.lastIdx >= 0 && t == r.lastTag {
			return r.lastIdx
		}
		if t >= int64(len(r.byTag)) {
			r.byTag = slices.Grow(r.byTag, int(t)+1-len(r.byTag))[:int(t)+1]
		}
		ui := r.byTag[t] - 1
		if ui < 0 {
			ui = r.add(UnitOf(f.Place), t)
			r.byTag[t] = ui + 1
		}
		r.last, r.lastTag, r.lastIdx = Unit{}, t, ui
		return ui
	}
	u := UnitOf(f.Place)
	if r.lastIdx >= 0 && r.lastTag == 0 && u == r.last {
		return r.lastIdx
	}
	ui, ok := r.index[u]
	if !ok {
		ui = r.add(u, 0)
		r.index[u] = ui
	}
	r.last, r.lastTag, r.lastIdx = u, 0, ui
	return ui
}

func (r *References) add(u Unit, tag int64) int32 {
	r.Units = append(r.Units, u)
	r.Tags = append(r.Tags, tag)
	return int32(len(r.Units) - 1)
}

// Len is the number of pairs.
func (r *References) Len() int { return r.n }

// Pair is pair i, 0 <= i < Len(), in the order found.
func (r *References) Pair(i int) *Pair { return &r.pairs[i/pairChunk][i%pairChunk] }

// Has reports whether unit u, found with tag (0 for none), holds a
// reference.
func (r *References) Has(u Unit, tag int64) bool {
	if tag > 0 {
		return tag < int64(len(r.byTag)) && r.byTag[tag] > 0
	}
	_, ok := r.index[u]
	return ok
}

// Hint is the text of a reference that carries its own owner (an
// agent-inputs/{user_id}/{thread_id}/uploads/ key), or "".
//
// The text is the reference as the resolver reads it, never as it is
// spelled: the path cleaned as [ref.Resolver] cleans it (so that
// ".../agent-inputs/alice/t1/uploads/../../../bob/t2/uploads/g.png" is
// bob's, the key it resolves to), decoded from a file URI's escapes, and
// for a bucket URL prefixed with its bucket ("s3://agent-inputs/u1/…"). A
// reference the resolver reads as no key of that spelling gives none: a
// bucket key it refuses (a traversal), and a relative path, which is read
// against the stores' folders and the base directories, not as written.
func Hint(x ref.Reference) string {
	var t string
	switch x.Kind {
	case ref.AbsPath, ref.FileURI:
		if !strings.HasPrefix(x.Path, "/") {
			return ""
		}
		t = path.Clean(x.Path)
	case ref.BucketURL, ref.BucketPair:
		t = path.Clean("/" + x.Path)[1:]
		if t != x.Path && strings.Contains(x.Path, "..") {
			return "" // a traversal: the resolver follows none
		}
	default:
		return ""
	}
	if _, _, ok := AgentRunsOwner(t); ok {
		return t
	}
	if x.Kind == ref.BucketURL && x.Bucket == "agent-inputs" {
		// A bucket named agent-inputs: s3://agent-inputs/{user_id}/….
		t = x.Scheme + "://" + x.Bucket + "/" + t
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
