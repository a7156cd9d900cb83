package report

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
)

// refs are the precise references the scan found, by session unit: each
// (unit, reference) once, with how often. They are resolved once the
// stores' listings are in (see attribute): a reference inside a store whose
// listing lacks its key dangles, so no key is stat'ed.
type refs struct {
	units    map[owner.Unit]int32
	unitList []owner.Unit
	pairs    map[refKey]*refVal
	// last is the unit of the previous reference: a document's references
	// come one after another.
	last    owner.Unit
	lastIdx int32
}

type refKey struct {
	unit int32
	text string // the reference's fields, joined
}

type refVal struct {
	n int64
	r ref.Reference
}

func newRefs() *refs {
	return &refs{units: map[owner.Unit]int32{}, pairs: map[refKey]*refVal{}, lastIdx: -1}
}

// add is the scan's OnReference: called from one goroutine.
func (r *refs) add(f scan.Found) {
	u := owner.UnitOf(f.Place)
	ui := r.lastIdx
	if ui < 0 || u != r.last {
		var ok bool
		if ui, ok = r.units[u]; !ok {
			ui = int32(len(r.unitList))
			r.units[u] = ui
			r.unitList = append(r.unitList, u)
		}
		r.last, r.lastIdx = u, ui
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

// resolve places a reference as scan does: in the first store it resolves
// inside, or — when it is inside several (an alias of a moved folder) — in
// the first whose listing holds the key. ok is false when it is inside no
// store; id is -1 when no listing holds it (a dangling reference).
func resolve(stores []scan.Target, rets []*retain.Retention, x ref.Reference) (store int32, key string, id int, ok bool) {
	store, id = -1, -1
	for i, t := range stores {
		st, k := t.Resolver.Resolve(x)
		if st != ref.Inside {
			continue
		}
		if store < 0 {
			store, key = int32(i), k
		}
		if n, found := rets[i].Lookup(k); found {
			return int32(i), k, n, true
		}
	}
	return store, key, -1, store >= 0
}

// shared marks a blob more than one owner names, in storeOwn.owners.
const shared = -1

// storeOwn is what the attribution says about one store's blobs.
type storeOwn struct {
	// owners maps a referenced blob's id to its one owner (0 for
	// unattributed units) or shared.
	owners map[int32]int32
	// lastRef is a blob's newest referencing unit's time (Unix ns).
	lastRef map[int32]int64
	shared  Count
}

type ownership struct {
	perStore []*storeOwn
}

// attribute gives every reference an owner and adds up each owner's blobs.
func attribute(attr *owner.Attributor, rf *refs, stores []scan.Target, rets []*retain.Retention, maxListed int, rep *Report) *ownership {
	own := &ownership{}
	for range rets {
		own.perStore = append(own.perStore, &storeOwn{owners: map[int32]int32{}, lastRef: map[int32]int64{}})
	}
	ownerIdx := map[string]int32{}
	stats := []*OwnerStats{{}} // 0: unattributed
	last := []int64{0}
	unitOwner := make([]int32, len(rf.unitList))
	for i := range unitOwner {
		unitOwner[i] = -2 // not yet known
	}
	unitTime := make([]int64, len(rf.unitList))
	ownerOf := func(ui int32, hint string) int32 {
		o := attr.Owner(rf.unitList[ui], hint)
		if !o.Known() {
			return 0
		}
		idx, ok := ownerIdx[o.ID]
		if !ok {
			idx = int32(len(stats))
			ownerIdx[o.ID] = idx
			stats = append(stats, &OwnerStats{ID: o.ID, Agent: o.Agent})
			last = append(last, 0)
		} else if stats[idx].Agent == "" {
			stats[idx].Agent = o.Agent
		}
		return idx
	}
	type ownBlob struct {
		owner, store, id int32
	}
	seen := map[ownBlob]bool{}
	unitSeen := map[[2]int32]bool{}
	missing := map[[2]string]bool{}
	for k, v := range rf.pairs {
		sIdx, key, id, inside := resolve(stores, rets, v.r)
		if !inside {
			continue // outside every store: no blob of theirs
		}
		if id < 0 {
			rep.Totals.DanglingReferences += v.n
			if m := [2]string{strconv.Itoa(int(sIdx)), key}; !missing[m] {
				missing[m] = true
				rep.Totals.DanglingBlobs++
			}
		}
		hint := ""
		for _, t := range []string{v.r.Path, v.r.Raw} {
			if _, _, ok := owner.AgentRunsOwner(t); ok {
				hint = t
				break
			}
		}
		var o int32
		if hint == "" && unitOwner[k.unit] != -2 {
			o = unitOwner[k.unit]
		} else {
			o = ownerOf(k.unit, hint)
			if hint == "" {
				unitOwner[k.unit] = o
			}
		}
		if unitTime[k.unit] == 0 {
			unitTime[k.unit] = -1
			if t, ok := attr.Time(rf.unitList[k.unit]); ok {
				unitTime[k.unit] = t.UnixNano()
			}
		}
		st := stats[o]
		st.References += v.n
		if !unitSeen[[2]int32{o, k.unit}] {
			unitSeen[[2]int32{o, k.unit}] = true
			st.Units++
			if o == 0 && len(rep.Unattributed.UnitList) < maxListed {
				rep.Unattributed.UnitList = append(rep.Unattributed.UnitList, rf.unitList[k.unit])
			} else if o == 0 {
				rep.Truncated = true
			}
		}
		last[o] = max(last[o], unitTime[k.unit])
		if id < 0 {
			continue // dangling
		}
		r := rets[sIdx]
		so := own.perStore[sIdx]
		so.lastRef[int32(id)] = max(so.lastRef[int32(id)], unitTime[k.unit])
		ob := ownBlob{o, sIdx, int32(id)}
		if seen[ob] {
			continue
		}
		seen[ob] = true
		st.Referenced.add(r.Size(id))
		switch prev, ok := so.owners[int32(id)]; {
		case !ok:
			so.owners[int32(id)] = o
		case prev != o:
			so.owners[int32(id)] = shared
		}
	}
	// An owner is as recent as its newest unit, with references or not (a
	// coffer conversation's own row).
	attr.Units(func(u owner.Unit) {
		o := attr.Owner(u, "")
		if !o.Known() {
			return
		}
		if idx, ok := ownerIdx[o.ID]; ok {
			if t, ok := attr.Time(u); ok {
				last[idx] = max(last[idx], t.UnixNano())
			}
		}
	})
	for s, so := range own.perStore {
		r := rets[s]
		for id, o := range so.owners {
			size := r.Size(int(id))
			switch {
			case o == shared:
				so.shared.add(size)
			case o == 0:
				rep.Unattributed.Exclusive.add(size)
			default:
				stats[o].Exclusive.add(size)
			}
		}
		for id := range r.Len() {
			if _, ok := so.owners[int32(id)]; !ok && r.KeptID(id) {
				rep.Unattributed.TextOnly.add(r.Size(id))
				rep.Unattributed.Exclusive.add(r.Size(id))
			}
		}
	}
	u := stats[0]
	rep.Unattributed.Units, rep.Unattributed.References, rep.Unattributed.Referenced = u.Units, u.References, u.Referenced
	for i, st := range stats[1:] {
		if t := last[i+1]; t > 0 {
			tt := time.Unix(0, t).UTC()
			st.LastActivity = &tt
		}
		rep.Owners = append(rep.Owners, st)
	}
	slices.SortFunc(rep.Owners, func(a, b *OwnerStats) int {
		return cmp.Or(cmp.Compare(b.Referenced.Bytes, a.Referenced.Bytes), cmp.Compare(b.Exclusive.Bytes, a.Exclusive.Bytes), cmp.Compare(a.ID, b.ID))
	})
	rep.OwnerCount = len(rep.Owners)
	slices.SortFunc(rep.Unattributed.UnitList, func(a, b owner.Unit) int { return cmp.Compare(a.String(), b.String()) })
	return own
}
