package forget

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// ck is a candidate: a key of one of the stores.
type ck struct {
	s   int
	key string
}

// run is one forget run's state.
type run struct {
	opts      Options
	rep       *Report
	stores    []scan.Target
	locks     []*storelock.Lock
	rets      []*retain.Retention
	companion []func(string) (string, bool)
	started   time.Time

	cands map[ck]*Blob
	// groups are the candidates by their group (an upload and its
	// sidecars; a blob and its migrated copies): kept together, erased
	// together. groupOf is each member's group.
	groups  map[ck][]ck
	groupOf map[ck]ck
	// skip are the forgotten owners' units, which the later reads leave
	// out while prints says they are as the first read saw them.
	skip   map[owner.Unit]bool
	prints *fingerprints
	// moved is, per store, this run's trash run.
	moved map[int]string

	// dests are the buckets migrate's journals copied the stores to; a
	// copy in dests[d] is the candidate ck{len(stores)+d, key}.
	dests []*dest
	// copyOf is the store's candidate a copy candidate is the copy of.
	copyOf map[ck]ck
	// tdirs are Options.TrashDirs, each opened for its store.
	tdirs []*trashDir
	// ownIDs are the migrations whose journals the run read: their records
	// in a bucket are its own.
	ownIDs map[string]bool
}

// phaseHook, set by tests, is called where a live runtime may save a
// session: "read" (the first read is over), "decided" (the second read is
// over), "moved" (the blobs are in the trash run), "reread".
var phaseHook func(string)

func phase(p string) {
	if phaseHook != nil {
		phaseHook(p)
	}
}

// Run forgets the owners: see the package comment. It returns an error only
// for invalid options (a folder of TrashDirs that holds no trash of the
// stores: *TrashDirError) and for a session source that cannot be scanned at all;
// everything else is in the report, whose Outcome says how it ended:
// Found when an owner is unknown (nothing removed), Refused when a store is
// locked, Incomplete when something could not be read (nothing removed) or
// removed, Interrupted.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if opts.MaxListed <= 0 {
		opts.MaxListed = 10000
	}
	ids := slices.Clone(opts.Owners)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	r := &run{opts: opts, started: time.Now(), moved: map[int]string{},
		rep: &Report{Owners: ids, Unknown: []string{}, DryRun: !opts.Delete, Started: now.UTC(), Stores: []string{},
			Erased: []Blob{}, Kept: []Kept{}, Problems: []string{}, Complete: true}}
	r.stores = slices.Clone(opts.Stores)
	for i, t := range r.stores {
		if t.Resolver == nil {
			r.stores[i].Resolver = scan.NewResolver(t.Store, nil)
		}
		r.rep.Stores = append(r.rep.Stores, t.Store.Location())
	}
	defer func() {
		if ctx.Err() != nil {
			r.rep.Interrupted = true
		}
		r.rep.Finished = time.Now().UTC()
		r.rep.Outcome = r.rep.outcome()
	}()
	r.locks = make([]*storelock.Lock, len(r.stores))
	defer func() {
		for _, l := range r.locks {
			if l != nil {
				if err := l.Release(context.WithoutCancel(ctx)); err != nil {
					r.fail(fmt.Sprintf("forget: %v", err))
				}
			}
		}
	}()
	if !r.lock(ctx) {
		return r.rep, nil
	}
	if err := r.openTrashDirs(); err != nil {
		return nil, err
	}
	defer r.closeTrashDirs()
	defer func() {
		for _, d := range r.dests {
			d.st.Close()
		}
	}()
	err := r.do(ctx)
	return r.rep, err
}

func (rep *Report) outcome() outcome.Outcome {
	switch {
	case rep.Interrupted:
		return outcome.Interrupted
	case rep.Refused != "":
		return outcome.Refused
	case !rep.Complete:
		return outcome.Incomplete
	case len(rep.Unknown) > 0:
		return outcome.Found
	}
	return outcome.OK
}

func (r *run) fail(problems ...string) {
	r.rep.Complete = false
	for _, p := range problems {
		if len(r.rep.Problems) < r.opts.MaxListed {
			r.rep.Problems = append(r.rep.Problems, p)
		}
	}
}

// lock takes every store's lock (a dry run only looks at them).
func (r *run) lock(ctx context.Context) bool {
	for i, t := range r.stores {
		var err error
		if r.opts.Delete {
			r.locks[i], err = storelock.Acquire(ctx, t.Store, "forget")
		} else {
			err = storelock.Check(ctx, t.Store)
		}
		var le *storelock.LockedError
		switch {
		case errors.As(err, &le):
			r.rep.Refused = le.Error()
			return false
		case err != nil:
			r.fail(fmt.Sprintf("forget: %v", err))
			return false
		}
	}
	return true
}

func (r *run) do(ctx context.Context) error {
	// 1. The listings, then every session through the attribution.
	r.rets = make([]*retain.Retention, len(r.stores))
	r.companion = make([]func(string) (string, bool), len(r.stores))
	for i, t := range r.stores {
		mo := retain.MarkOptions{}
		if r.opts.Companion != nil {
			r.companion[i] = r.opts.Companion(t.Store)
			mo.Companion = r.companion[i]
		}
		ret, err := retain.Mark(ctx, t.Store, nil, mo)
		if err != nil {
			return fmt.Errorf("forget: %w", err)
		}
		r.rets[i] = ret
		if !ret.Complete {
			r.fail(ret.Problems...)
		}
		if len(ret.Nested) > 0 {
			r.fail(fmt.Sprintf("%s holds another store's internal folder in %v: its blobs would be taken for this store's", ret.Store, ret.Nested))
		}
	}
	if !r.rep.Complete || ctx.Err() != nil {
		return nil
	}
	r.ownIDs = map[string]bool{}
	r.loadDests(ctx)
	attr := owner.NewAttributor(r.opts.Rule)
	forgotten := map[string]bool{}
	for _, id := range r.rep.Owners {
		forgotten[id] = true
	}
	attr.Track(func(id string) bool { return forgotten[id] })
	rf := owner.NewReferences()
	wrapped := make([]sessions.Source, len(r.opts.Sources))
	r.prints = newFingerprints()
	for i, s := range r.opts.Sources {
		wrapped[i] = attr.Wrap(&recording{Source: s, f: r.prints})
	}
	sr, err := scan.Run(ctx, scan.Options{Sources: wrapped, Jobs: r.opts.Jobs, MaxListed: r.opts.MaxListed, OnReference: rf.Add, UnitPlaces: true, CountOnly: true})
	if err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	if p := sr.Shortfall(); len(p) > 0 {
		r.fail(p...)
		return nil
	}
	phase("read")

	// 2. Who owns what; the forgotten units; the candidates.
	known := map[string]bool{}
	type ownerSet struct {
		all     bool // every owner seen is forgotten
		unknown bool // a reference no owner could be given
	}
	unitOwn := make([]ownerSet, len(rf.Units))
	for i := range unitOwn {
		unitOwn[i].all = true
	}
	for i := range rf.Len() {
		v := rf.Pair(i)
		o := attr.Owner(rf.Units[v.Unit], rf.Tags[v.Unit], owner.Hint(v.Ref)).ID
		v.Owner = o
		if o == "" {
			unitOwn[v.Unit].unknown = true
			continue
		}
		known[o] = true
		if !forgotten[o] {
			unitOwn[v.Unit].all = false
		}
	}
	r.skip = map[owner.Unit]bool{}
	for id := range forgotten {
		if attr.Seen(id) {
			known[id] = true
		}
	}
	attr.Tracked(func(u owner.Unit, tag int64) {
		if !rf.Has(u, tag) {
			r.skip[u] = true // a unit of theirs without references
		}
	})
	for _, id := range r.rep.Owners {
		if !known[id] {
			r.rep.Unknown = append(r.rep.Unknown, id)
		}
	}
	if len(r.rep.Unknown) > 0 {
		return nil
	}
	for i, u := range rf.Units {
		if o := unitOwn[i]; o.all && !o.unknown {
			r.skip[u] = true
		}
	}
	r.rep.Units = int64(len(r.skip))

	r.cands = map[ck]*Blob{}
	dangling := map[ck]int64{}
	namedByOthers := map[ck]bool{}
	for i := range rf.Len() {
		v := rf.Pair(i)
		s, key, id, inside := owner.Resolve(r.stores, r.rets, v.Ref)
		if !inside {
			r.eachInDest(v.Ref, func(c ck) {
				if !forgotten[v.Owner] {
					namedByOthers[c] = true
					return
				}
				p, from, ok := r.destOf(c).proof(c.key)
				if !ok {
					return // no copy this migration proved: not the owner's
				}
				r.copyCand(c, p, from).References += v.N
				// Its source, if it is still in the store or its trash,
				// goes (and stays) with it.
				src := ck{from, c.key}
				if r.cands[src] != nil {
					return
				}
				if n, ok := r.rets[from].Lookup(c.key); ok {
					ret := r.rets[from]
					r.cands[src] = &Blob{Store: ret.Store, Key: c.key, Size: ret.Size(n), inStore: true, id: n, mod: ret.ModTime(n), at: src}
				} else if _, ok := dangling[src]; !ok {
					dangling[src] = 0
				}
			})
			continue
		}
		c := ck{s, key}
		if !forgotten[v.Owner] {
			namedByOthers[c] = true
			continue
		}
		if id < 0 {
			dangling[c] += v.N
			continue
		}
		b := r.cands[c]
		if b == nil {
			ret := r.rets[s]
			b = &Blob{Store: ret.Store, Key: key, Size: ret.Size(id), inStore: true, id: id, mod: ret.ModTime(id), at: c}
			r.cands[c] = b
		}
		b.References += v.N
	}
	r.addCompanions()
	if err := r.addTrashed(ctx, dangling); err != nil {
		r.fail(fmt.Sprintf("forget: %v", err))
		return nil
	}
	for _, n := range dangling {
		r.rep.AlreadyDangling += n
	}
	r.linkCopies()

	// 3. Every unit but the forgotten ones, read again: what they name under
	// the retention rule, or by a precise reference, stays.
	keep, ok := r.named(ctx, r.opts.Sources, r.cands, namedByOthers)
	if !ok {
		return nil
	}
	r.keepShared(ctx, keep)
	phase("decided")
	erase := r.statCopies(ctx, r.decide(keep))
	if !r.opts.Delete {
		for _, b := range erase {
			if _, linked := r.copyOf[b.at]; linked {
				continue // said with its source
			}
			if n, ok := blobname.Parse(b.Key); ok && !r.isCopy(b.at) {
				b.SHA256 = n.Digest.String()
			}
			r.erased(b)
		}
		r.sortKept()
		return nil
	}
	return r.erase(ctx, erase)
}

// join puts a and b in one group.
func (r *run) join(a, b ck) {
	ga, inA := r.groupOf[a]
	gb, inB := r.groupOf[b]
	switch {
	case inA && inB:
		if ga == gb {
			return
		}
		for _, m := range r.groups[gb] {
			r.groupOf[m] = ga
		}
		r.groups[ga] = append(r.groups[ga], r.groups[gb]...)
		delete(r.groups, gb)
	case inA:
		r.groups[ga] = append(r.groups[ga], b)
		r.groupOf[b] = ga
	case inB:
		r.groups[gb] = append(r.groups[gb], a)
		r.groupOf[a] = gb
	default:
		// A group of its own, whose name no companion group has.
		g := ck{-1 - a.s, a.key}
		r.groups[g] = []ck{a, b}
		r.groupOf[a], r.groupOf[b] = g, g
	}
}

// keep lists b in the report as kept, for why.
func (r *run) keep(b *Blob, why string) {
	r.rep.Kept = append(r.rep.Kept, Kept{Store: b.Store, Key: b.Key, Size: b.Size, Reason: why, Bucket: b.Bucket})
}

func (r *run) sortKept() {
	slices.SortFunc(r.rep.Kept, func(a, b Kept) int {
		return cmp.Or(cmp.Compare(a.Store, b.Store), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Bucket, b.Bucket))
	})
}

// addCompanions adds to the candidates the other members of their groups
// (coffer's sidecars), and records the groups.
func (r *run) addCompanions() {
	r.groups = map[ck][]ck{}
	r.groupOf = map[ck]ck{}
	for s, comp := range r.companion {
		if comp == nil {
			continue
		}
		groupOf := func(key string) string {
			if o, ok := comp(key); ok && o != "" {
				return o
			}
			return key
		}
		want := map[string]bool{}
		for c, b := range r.cands {
			if c.s == s && b.inStore {
				want[groupOf(c.key)] = true
			}
		}
		if len(want) == 0 {
			continue
		}
		ret := r.rets[s]
		for id := range ret.Len() {
			key := ret.Key(id)
			g := groupOf(key)
			if !want[g] {
				continue
			}
			c := ck{s, key}
			if r.cands[c] == nil {
				r.cands[c] = &Blob{Store: ret.Store, Key: key, Size: ret.Size(id), inStore: true, id: id, mod: ret.ModTime(id), at: c}
			}
			gk := ck{s, g}
			r.groups[gk] = append(r.groups[gk], c)
			r.groupOf[c] = gk
		}
	}
}

// addTrashed finds the candidates (and the blobs the forgotten owners name
// that are gone from the store) in every trash run, the store's own and
// those in the trash folder outside it, and in the marks.
func (r *run) addTrashed(ctx context.Context, dangling map[ck]int64) error {
	for s, t := range r.stores {
		for _, place := range r.trashes(s) {
			err := trash.EachTrashed(ctx, place.st, func(_ trash.RunRecord, tb trash.Trashed) error {
				c := ck{s, tb.Key}
				b := r.cands[c]
				if b == nil {
					n, ok := dangling[c]
					if !ok {
						return nil
					}
					b = &Blob{Store: t.Store.Location(), Key: tb.Key, Size: tb.Size, References: n, at: c}
					r.cands[c] = b
					delete(dangling, c)
				}
				if at := (runAt{tb.Run, place.td}); !slices.Contains(b.runs, at) {
					b.runs = append(b.runs, at)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		marks, err := trash.Marks(ctx, t.Store)
		if err != nil {
			return err
		}
		for _, m := range marks {
			for _, x := range m.Marks {
				if b := r.cands[ck{s, x.Key}]; b != nil && !slices.Contains(b.Marked, m.Run) {
					b.Marked = append(b.Marked, m.Run)
				}
			}
		}
	}
	return nil
}

// named reads srcs, less the forgotten units, and says which of cands a
// unit names (under the retention rule, or by a precise reference into a
// store), with why; also names the ones in also. ok is false when the read
// was not complete: the run then stops, and the report says why.
func (r *run) named(ctx context.Context, srcs []sessions.Source, cands map[ck]*Blob, also map[ck]bool) (map[ck]string, bool) {
	idx := make([]*retain.Index, len(r.stores)+len(r.dests))
	ids := map[ck]int{}
	for i := range idx {
		idx[i] = retain.NewIndex()
	}
	for c := range cands {
		ids[c] = idx[c.s].Add(c.key)
	}
	precise := map[ck]bool{}
	for c := range also {
		precise[c] = true
	}
	filtered := make([]sessions.Source, len(srcs))
	for i, s := range srcs {
		filtered[i] = &without{Source: s, skip: r.skip, prints: r.prints}
	}
	text := func(s []byte) {
		for _, x := range idx {
			if x.Len() > 0 {
				x.Mark(s)
			}
		}
	}
	onRef := func(f scan.Found) {
		eachInside(r.stores, f.Ref, func(s int, key string) {
			if _, ok := cands[ck{s, key}]; ok {
				precise[ck{s, key}] = true
			}
		})
		r.eachInDest(f.Ref, func(c ck) {
			if _, ok := cands[c]; ok {
				precise[c] = true
			}
		})
	}
	sr, err := scan.Run(ctx, scan.Options{Sources: filtered, Jobs: r.opts.Jobs, MaxListed: r.opts.MaxListed, Text: text, OnReference: onRef, CountOnly: true})
	if err != nil {
		r.fail(fmt.Sprintf("forget: %v", err))
		return nil, false
	}
	if p := sr.Shortfall(); len(p) > 0 || ctx.Err() != nil {
		r.fail(p...)
		return nil, false
	}
	out := map[ck]string{}
	for c, id := range ids {
		switch {
		case precise[c]:
			out[c] = KeptNamedPrecisely
		case idx[c.s].Referenced(id):
			out[c] = KeptNamedByRule
		}
	}
	return out, true
}

// decide applies keep (a reason per kept candidate) with the groups, lists
// the kept in the report and returns the rest, sorted.
func (r *run) decide(keep map[ck]string) []*Blob {
	r.spread(keep, r.cands, KeptCompanion)
	var erase []*Blob
	for c, b := range r.cands {
		if why := keep[c]; why != "" {
			if why != keptWithSource {
				r.keep(b, why)
			}
			continue
		}
		erase = append(erase, b)
	}
	r.sortKept()
	slices.SortFunc(erase, func(a, b *Blob) int { return cmp.Or(cmp.Compare(a.Store, b.Store), cmp.Compare(a.Key, b.Key)) })
	return erase
}

// spread keeps with every kept member of a group (among in) the rest of
// it: a copy whose source stays goes unsaid (keptWithSource), a blob kept
// only for its copy is KeptWithCopy, the rest companion.
func (r *run) spread(keep map[ck]string, in map[ck]*Blob, companion string) {
	for _, members := range r.groups {
		var kept []ck
		for _, c := range members {
			if _, ok := in[c]; ok && keep[c] != "" {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			continue
		}
		copyOnly := !slices.ContainsFunc(kept, func(c ck) bool { return !r.isCopy(c) })
		for _, c := range members {
			if _, ok := in[c]; !ok {
				continue
			}
			src, linked := r.copyOf[c]
			switch {
			case linked && slices.Contains(kept, src):
				keep[c] = keptWithSource
			case keep[c] != "":
			case linked:
				keep[c] = keptWithSource
			case copyOnly:
				keep[c] = KeptWithCopy
			default:
				keep[c] = companion
			}
		}
	}
}

// erased lists b in the report.
func (r *run) erased(b *Blob) {
	if b.Where == nil {
		b.Where = []string{}
	}
	if r.rep.DryRun {
		if b.inStore {
			b.Where = append(b.Where, "store")
		}
		for _, run := range b.runs {
			b.Where = append(b.Where, run.String())
		}
		b.Where = append(b.Where, b.copies...)
	}
	r.rep.Erased = append(r.rep.Erased, *b)
	r.rep.ErasedBytes += b.Size
	r.rep.Dangling += b.References
}

// erase moves the store's candidates into a trash run per store, reads
// again what changed since the run began, puts back what a unit saved
// meanwhile names, and deletes the rest for good: the trash runs, then the
// copies in the buckets (a copy cannot be put back, so none is deleted
// before that read).
func (r *run) erase(ctx context.Context, erase []*Blob) error {
	for _, b := range erase {
		if !r.isCopy(b.at) {
			b.SHA256 = r.digest(ctx, b)
		}
	}
	byStore := map[int][]*Blob{}
	index := map[ck]*Blob{}
	for _, b := range erase {
		index[b.at] = b
		if b.inStore {
			byStore[b.at.s] = append(byStore[b.at.s], b)
		}
	}
	// 4. Into a trash run, each blob checked again right before it goes.
	movedOut := map[ck]bool{}
	for s := range r.stores {
		blobs := byStore[s]
		if len(blobs) == 0 {
			continue
		}
		items := make(trash.List, len(blobs))
		for i, b := range blobs {
			items[i] = trash.Item{Key: b.Key, Size: b.Size, ModTime: b.mod}
		}
		res, err := trash.Move(ctx, r.moveLock(s), items, trash.Options{Command: "forget", Cutoff: r.started, StoreBlobs: r.rets[s].Blobs, Jobs: r.opts.Jobs})
		if res != nil && res.Run != "" {
			r.moved[s] = res.Run
			r.rep.Runs = append(r.rep.Runs, res.Run)
		}
		if res != nil {
			for _, k := range res.Skipped {
				b := index[ck{s, k.Key}]
				r.keep(b, KeptChanged+": "+k.Reason)
				b.inStore = false
			}
			for _, k := range res.Failed {
				b := index[ck{s, k.Key}]
				r.keep(b, "could not be removed: "+k.Reason)
				b.inStore = false
				r.fail(fmt.Sprintf("%s: could not be removed: %s", k.Key, k.Reason))
			}
		}
		if err != nil || ctx.Err() != nil || res == nil || res.NotAttempted > 0 {
			if err != nil {
				r.fail(fmt.Sprintf("forget: %v", err))
			}
			r.putBackAll(ctx, "the moves did not all complete")
			return nil
		}
		for _, b := range blobs {
			if b.inStore {
				movedOut[b.at] = true
			}
		}
	}
	phase("moved")

	// 5. What changed since the run began, read again: a unit saved
	// meanwhile that names a blob puts it back, and keeps a copy.
	pending := map[ck]*Blob{}
	for c, b := range index {
		if movedOut[c] || len(b.runs) > 0 || r.isCopy(c) {
			pending[c] = b
		}
	}
	since := r.started.Add(-gc.RereadMargin)
	changed := make([]sessions.Source, len(r.opts.Sources))
	for i, s := range r.opts.Sources {
		changed[i] = sessions.ChangedSince(s, since)
	}
	// Units created since the first read are no one's to forget: they are
	// read, so a new session of the forgotten owner keeps its blob too.
	named, ok := r.named(ctx, changed, pending, nil)
	phase("reread")
	if !ok {
		r.putBackAll(ctx, "the sessions could not all be read again after the moves")
		return nil
	}
	for c := range named {
		named[c] = KeptNamedDuringRun
		if r.isCopy(c) {
			named[c] = KeptCopyNamedDuringRun
		}
	}
	r.spread(named, pending, KeptCompanion)
	back := map[int][]string{}
	for c, why := range named {
		b := pending[c]
		if why != keptWithSource {
			r.keep(b, why)
		}
		if movedOut[c] {
			back[c.s] = append(back[c.s], c.key)
		}
		delete(pending, c)
	}
	for s, keys := range back {
		slices.Sort(keys)
		if _, err := trash.RestoreKeys(context.WithoutCancel(ctx), r.moveLock(s), r.moved[s], keys); err != nil {
			r.fail(fmt.Sprintf("forget: put back from %s: %v", r.moved[s], err))
			r.putBackAll(ctx, "a blob named during the run could not be put back")
			return nil
		}
	}

	// 6. For good: this run's trash runs, then the candidates in older
	// trash runs, then the copies. A purge is a delete, made after the
	// read above.
	dctx := context.WithoutCancel(ctx)
	failed := map[ck]bool{}
	for s, run := range r.moved {
		if _, err := trash.PurgeRun(dctx, r.moveLock(s), run); err != nil {
			r.fail(fmt.Sprintf("forget: delete trash run %s: %v (its blobs are left in it: run forget again)", run, err))
			for c := range pending {
				if c.s == s && movedOut[c] {
					failed[c] = true
				}
			}
		}
	}
	type runOf struct {
		s  int
		at runAt
	}
	older := map[runOf][]string{}
	for c, b := range pending {
		for _, at := range b.runs {
			older[runOf{c.s, at}] = append(older[runOf{c.s, at}], c.key)
		}
	}
	for ro, keys := range older {
		slices.Sort(keys)
		if _, err := trash.PurgeKeys(dctx, r.runLock(ro.s, ro.at), ro.at.name, keys); err != nil {
			r.fail(fmt.Sprintf("forget: delete from %s: %v", ro.at, err))
			for _, k := range keys {
				failed[ck{ro.s, k}] = true
			}
		}
	}
	skipped := map[ck]bool{}
	r.deleteCopies(dctx, pending, failed, skipped)
	at := time.Now().UTC()
	var out []*Blob
	for c, b := range pending {
		if _, linked := r.copyOf[c]; linked || skipped[c] {
			continue // said with its source, or kept
		}
		b.Where = []string{}
		if movedOut[c] {
			b.Where = append(b.Where, "store")
		}
		for _, run := range b.runs {
			b.Where = append(b.Where, run.String())
		}
		b.Where = append(b.Where, b.copies...)
		if !failed[c] {
			b.RemovedAt = &at
		}
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *Blob) int { return cmp.Or(cmp.Compare(a.Store, b.Store), cmp.Compare(a.Key, b.Key)) })
	for _, b := range out {
		r.erased(b)
	}
	r.sortKept()
	return nil
}

// putBackAll puts every blob this run moved back into its store: the run
// could not make sure that no unit names them.
func (r *run) putBackAll(ctx context.Context, why string) {
	if len(r.moved) > 0 {
		r.fail("forget: " + why + ": everything this run moved was put back, nothing was deleted")
	}
	for s, run := range r.moved {
		res, err := trash.Restore(context.WithoutCancel(ctx), r.moveLock(s), run)
		if res != nil {
			r.rep.PutBack += res.Restored
		}
		if err != nil {
			r.fail(fmt.Sprintf("forget: put back trash run %s: %v (mediactl gc restore puts it back)", run, err))
		}
	}
	r.moved = map[int]string{}
}

// digest is the sha256 of b's content: its name's for a content-addressed
// name, else hashed from the store (or its first trash run).
func (r *run) digest(ctx context.Context, b *Blob) string {
	if n, ok := blobname.Parse(b.Key); ok {
		return n.Digest.String()
	}
	s := b.at.s
	var (
		rc  io.ReadCloser
		err error
	)
	switch {
	case b.inStore:
		rc, err = r.stores[s].Store.Open(ctx, b.Key)
	case len(b.runs) > 0:
		st := r.stores[s].Store
		if td := b.runs[0].td; td != nil {
			st = td.st
		}
		in, ok := store.AsInternal(st)
		if !ok {
			return ""
		}
		rc, err = in.OpenInternal(ctx, trash.Dir+"/"+b.runs[0].name+"/"+b.Key)
	default:
		return ""
	}
	if err != nil {
		return ""
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
