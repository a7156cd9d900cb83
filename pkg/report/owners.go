package report

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
)

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
func attribute(attr *owner.Attributor, rf *owner.References, stores []scan.Target, rets []*retain.Retention, maxListed int, rep *Report) *ownership {
	own := &ownership{}
	for range rets {
		own.perStore = append(own.perStore, &storeOwn{owners: map[int32]int32{}, lastRef: map[int32]int64{}})
	}
	ownerIdx := map[string]int32{}
	stats := []*OwnerStats{{}} // 0: unattributed
	last := []int64{0}
	unitOwner := make([]int32, len(rf.Units))
	for i := range unitOwner {
		unitOwner[i] = -2 // not yet known
	}
	unitTime := make([]int64, len(rf.Units))
	ownerOf := func(ui int32, hint string) int32 {
		o := attr.Owner(rf.Units[ui], hint)
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
	for k, v := range rf.Pairs {
		s, key, id, inside := owner.Resolve(stores, rets, v.Ref)
		sIdx := int32(s)
		if !inside {
			continue // outside every store: no blob of theirs
		}
		if id < 0 {
			rep.Totals.DanglingReferences += v.N
			if m := [2]string{strconv.Itoa(int(sIdx)), key}; !missing[m] {
				missing[m] = true
				rep.Totals.DanglingBlobs++
			}
		}
		hint := owner.Hint(v.Ref)
		var o int32
		if hint == "" && unitOwner[k.Unit] != -2 {
			o = unitOwner[k.Unit]
		} else {
			o = ownerOf(k.Unit, hint)
			if hint == "" {
				unitOwner[k.Unit] = o
			}
		}
		if unitTime[k.Unit] == 0 {
			unitTime[k.Unit] = -1
			if t, ok := attr.Time(rf.Units[k.Unit]); ok {
				unitTime[k.Unit] = t.UnixNano()
			}
		}
		st := stats[o]
		st.References += v.N
		if !unitSeen[[2]int32{o, k.Unit}] {
			unitSeen[[2]int32{o, k.Unit}] = true
			st.Units++
			if o == 0 && len(rep.Unattributed.UnitList) < maxListed {
				rep.Unattributed.UnitList = append(rep.Unattributed.UnitList, rf.Units[k.Unit])
			} else if o == 0 {
				rep.Truncated = true
			}
		}
		last[o] = max(last[o], unitTime[k.Unit])
		if id < 0 {
			continue // dangling
		}
		r := rets[sIdx]
		so := own.perStore[sIdx]
		so.lastRef[int32(id)] = max(so.lastRef[int32(id)], unitTime[k.Unit])
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
