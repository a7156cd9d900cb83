package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
)

// refs are the precise references the scan resolved inside a store, by
// session unit and key: each (unit, store, key) once, with how often.
type refs struct {
	storeIdx map[string]int
	units    map[owner.Unit]int32
	unitList []owner.Unit
	pairs    map[refKey]*refVal
}

type refKey struct {
	unit  int32
	store int32
	key   string
}

type refVal struct {
	n int64
	// hint is the reference's text when it says an agent-runs owner
	// (agent-inputs/{user_id}/…); the attribution may use it.
	hint string
}

func newRefs(stores []scan.Target) *refs {
	r := &refs{storeIdx: map[string]int{}, units: map[owner.Unit]int32{}, pairs: map[refKey]*refVal{}}
	for i, t := range stores {
		if _, ok := r.storeIdx[t.Store.Location()]; !ok {
			r.storeIdx[t.Store.Location()] = i
		}
	}
	return r
}

// add is the scan's OnReference: called from one goroutine.
func (r *refs) add(f scan.Found) {
	if f.Status != ref.Inside {
		return
	}
	s, ok := r.storeIdx[f.Store]
	if !ok {
		return
	}
	u := owner.UnitOf(f.Place)
	ui, ok := r.units[u]
	if !ok {
		ui = int32(len(r.unitList))
		r.units[u] = ui
		r.unitList = append(r.unitList, u)
	}
	k := refKey{unit: ui, store: int32(s), key: f.Key}
	v := r.pairs[k]
	if v == nil {
		v = &refVal{}
		for _, t := range []string{f.Ref.Path, f.Ref.Raw} {
			if _, _, ok := owner.AgentRunsOwner(t); ok {
				v.hint = t
				break
			}
		}
		r.pairs[k] = v
	}
	v.n++
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
func attribute(attr *owner.Attributor, rf *refs, rets []*retain.Retention, maxListed int, rep *Report) *ownership {
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
	// In a stable order, so that the lists are the same from run to run.
	keys := make([]refKey, 0, len(rf.pairs))
	for k := range rf.pairs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b refKey) int {
		return cmp.Or(cmp.Compare(a.unit, b.unit), cmp.Compare(a.store, b.store), cmp.Compare(a.key, b.key))
	})
	for _, k := range keys {
		v := rf.pairs[k]
		var o int32
		if v.hint == "" && unitOwner[k.unit] != -2 {
			o = unitOwner[k.unit]
		} else {
			o = ownerOf(k.unit, v.hint)
			if v.hint == "" {
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
		r := rets[k.store]
		id, ok := r.Lookup(k.key)
		if !ok {
			continue // dangling, or not a regular blob of the listing
		}
		so := own.perStore[k.store]
		so.lastRef[int32(id)] = max(so.lastRef[int32(id)], unitTime[k.unit])
		ob := ownBlob{o, k.store, int32(id)}
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
