package report

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
)

// Owner values of storeOwn.owners besides an owner's index (0 for
// unattributed units).
const (
	shared  = -1 // more than one owner names the blob
	noOwner = -2 // no precise reference names it
)

// storeOwn is what the attribution says about one store's blobs, by blob id.
type storeOwn struct {
	// owners holds a blob's one owner, shared or noOwner.
	owners []int32
	// lastRef is a blob's newest referencing unit's time (Unix ns), 0 when
	// none is known.
	lastRef []int64
	shared  Count
}

type ownership struct {
	perStore []*storeOwn
}

// placed is one (unit, reference) pair resolved against the stores.
type placed struct {
	pair  *owner.Pair
	unit  int32
	store int32 // -1: inside no store
	id    int32 // -1: dangling
	key   string
	hint  string
}

// holding is one owner naming one blob, for the pass that counts each
// (owner, blob) once.
type holding struct {
	store, id, owner int32
	time             int64
}

// attribute gives every reference an owner and adds up each owner's blobs.
//
// It resolves the pairs in parallel, then walks them once for the per-owner
// and per-unit counts, and counts each (owner, blob) once by sorting the
// holdings rather than through a map: a dense store has as many pairs as
// references, and maps of them cost more than the session read.
//
// With inShard (a shard's report), the listings hold the shard's blobs only:
// a reference to one of them counts as everywhere else, a dangling one only
// when inShard says its key is the shard's, and any other reference (to
// another shard's blob) counts only towards its unit: an owner's units and
// last activity are the whole store's in every shard.
func attribute(attr *owner.Attributor, rf *owner.References, stores []scan.Target, rets []*retain.Retention, inShard func(store int32, key string) bool, maxListed int, rep *Report) *ownership {
	own := &ownership{}
	for _, r := range rets {
		so := &storeOwn{owners: make([]int32, r.Len()), lastRef: make([]int64, r.Len())}
		for i := range so.owners {
			so.owners[i] = noOwner
		}
		own.perStore = append(own.perStore, so)
	}

	ownerIdx := map[string]int32{}
	stats := []*OwnerStats{{}} // 0: unattributed
	last := []int64{0}
	const unknown = -3
	// unitOwner is the owner of a unit's references without a hint;
	// countedOwner the first owner the unit was counted for.
	unitOwner := make([]int32, len(rf.Units))
	countedOwner := make([]int32, len(rf.Units))
	for i := range unitOwner {
		unitOwner[i], countedOwner[i] = unknown, unknown
	}
	unitTime := make([]int64, len(rf.Units))
	ownerOf := func(ui int32, hint string) int32 {
		o := attr.Owner(rf.Units[ui], rf.Tags[ui], hint)
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
	// A unit's references with hints (agent-inputs/{user_id}/… keys) may
	// belong to several owners: such a unit counts once for each.
	alsoCounted := map[[2]int32]bool{}
	missing := map[struct {
		store int32
		key   string
	}]bool{}
	holdings := make([]holding, 0, rf.Len())
	// The pairs are resolved a block at a time: a database of millions of
	// rows has millions of pairs, whose resolutions need not all be held.
	ps := make([]placed, 0, min(rf.Len(), resolveBlock))
	for from := 0; from < rf.Len(); from += resolveBlock {
		ps = resolvePairs(rf, from, min(from+resolveBlock, rf.Len()), stores, rets, ps[:0])
		for i := range ps {
			p := &ps[i]
			if p.store < 0 {
				continue // outside every store: no blob of theirs
			}
			n := p.pair.N
			theirs := p.id < 0 && inShard != nil && !inShard(p.store, p.key) // another shard's
			// A file whose name looks temporary is no blob of the listing, but
			// it is there: coffer saves a user's notes.tmp as <uuid>.tmp.
			there := p.id < 0 && rets[p.store].Temporary(p.key)
			if p.id < 0 && !theirs && !there {
				rep.Totals.DanglingReferences += n
				m := struct {
					store int32
					key   string
				}{p.store, p.key}
				if !missing[m] {
					missing[m] = true
					rep.Totals.DanglingBlobs++
				}
			}
			var o int32
			if p.hint == "" {
				if unitOwner[p.unit] == unknown {
					unitOwner[p.unit] = ownerOf(p.unit, "")
				}
				o = unitOwner[p.unit]
			} else {
				o = ownerOf(p.unit, p.hint)
			}
			if unitTime[p.unit] == 0 {
				unitTime[p.unit] = -1
				if t, ok := attr.Time(rf.Units[p.unit], rf.Tags[p.unit]); ok {
					unitTime[p.unit] = t.UnixNano()
				}
			}
			st := stats[o]
			if !theirs {
				st.References += n
			}
			first := false
			switch c := countedOwner[p.unit]; {
			case c == unknown:
				countedOwner[p.unit], first = o, true
			case c != o:
				if k := [2]int32{o, p.unit}; !alsoCounted[k] {
					alsoCounted[k], first = true, true
				}
			}
			if first {
				st.Units++
				if o == 0 && len(rep.Unattributed.UnitList) < maxListed {
					rep.Unattributed.UnitList = append(rep.Unattributed.UnitList, rf.Units[p.unit])
				} else if o == 0 {
					rep.Truncated = true
				}
			}
			last[o] = max(last[o], unitTime[p.unit])
			if p.id >= 0 {
				holdings = append(holdings, holding{store: p.store, id: p.id, owner: o, time: unitTime[p.unit]})
			}
		}
	}
	// Each (owner, blob) once: sorted, the holdings of one blob are
	// together, and each owner's once.
	slices.SortFunc(holdings, func(a, b holding) int {
		return cmp.Or(cmp.Compare(a.store, b.store), cmp.Compare(a.id, b.id), cmp.Compare(a.owner, b.owner))
	})
	for i, h := range holdings {
		so := own.perStore[h.store]
		so.lastRef[h.id] = max(so.lastRef[h.id], h.time)
		if i > 0 {
			if prev := holdings[i-1]; prev.store == h.store && prev.id == h.id && prev.owner == h.owner {
				continue // the same owner again
			}
		}
		stats[h.owner].Referenced.add(rets[h.store].Size(int(h.id)))
		switch prev := so.owners[h.id]; {
		case prev == noOwner:
			so.owners[h.id] = h.owner
		case prev != h.owner:
			so.owners[h.id] = shared
		}
	}
	// An owner is as recent as its newest unit, with references or not (a
	// coffer conversation's own row).
	for i, st := range stats[1:] {
		if t, ok := attr.Latest(st.ID); ok {
			last[i+1] = max(last[i+1], t.UnixNano())
		}
	}
	for s, so := range own.perStore {
		r := rets[s]
		for id, o := range so.owners {
			size := r.Size(id)
			switch {
			case o == noOwner:
				if r.KeptID(id) {
					rep.Unattributed.TextOnly.add(size)
					rep.Unattributed.Exclusive.add(size)
				}
			case o == shared:
				so.shared.add(size)
			case o == 0:
				rep.Unattributed.Exclusive.add(size)
			default:
				stats[o].Exclusive.add(size)
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

// resolveBlock is how many pairs attribute resolves at a time (a variable
// for the test that makes it small).
var resolveBlock = 1 << 16

// resolvePairs places pairs from to to-1 in their stores, in parallel, into
// ps: resolving is most of the attribution's work, and the resolvers and
// listings are safe to read from several goroutines.
func resolvePairs(rf *owner.References, from, to int, stores []scan.Target, rets []*retain.Retention, ps []placed) []placed {
	for i := from; i < to; i++ {
		p := rf.Pair(i)
		ps = append(ps, placed{pair: p, unit: p.Unit})
	}
	workers := min(runtime.GOMAXPROCS(0), max(1, len(ps)/4096))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ps); i += workers {
				p := &ps[i]
				s, key, id, inside := owner.Resolve(stores, rets, p.pair.Ref)
				p.store, p.id = int32(s), int32(id)
				if !inside {
					p.store = -1
				}
				if id < 0 {
					p.key = key
				}
				p.hint = owner.Hint(p.pair.Ref)
			}
		}()
	}
	wg.Wait()
	return ps
}
