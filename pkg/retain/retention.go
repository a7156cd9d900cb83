package retain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

// DefaultMinAge is the fence of the retention model when the operator gives
// none: a blob modified less than this long ago may belong to a session that
// is not saved yet, so no path removes it.
const DefaultMinAge = 24 * time.Hour

// NoMinAge as a minimum age (gc's Options.MinAge, migrate's) asks for no
// fence at all (the zero value means DefaultMinAge): for a store whose
// writers are all stopped.
const NoMinAge time.Duration = -1

// MarkOptions configure Mark.
type MarkOptions struct {
	// Jobs is passed to the session scan.
	Jobs int
	// Companion, when set, names the owner of a key that lives and dies with
	// another blob (a sidecar of an upload); see Retention.KeptID. An empty
	// owner with ok says the rule cannot tell: the retention is then
	// incomplete, since the key may be the sidecar of a blob in use.
	Companion func(key string) (owner string, ok bool)
	// CopiedTo are URL prefixes under which the store's blobs have proven
	// copies (migrate's destination). Text of the form prefix + key, a key of
	// this store ending where a name ends, names that key's copy, not the
	// blob of this store, and is left out of the marking; the text around it
	// still marks. Anything else after a prefix (a path with a ".." segment,
	// a key that goes on) is not such a name and still marks.
	CopiedTo []string

	// Stores, when given, make the scan resolve every precise reference
	// against them too (dangling references in Scan, Status and Key in
	// OnReference). Without them the scan only marks.
	Stores      []scan.Target
	OnReference func(scan.Found)
	// UnitPlaces is scan.Options.UnitPlaces.
	UnitPlaces bool
	MaxListed  int
	Progress   scan.Progress

	// Also, when set, sees every session string the rule sees, in the same
	// read: gc marks its trash with it (see gc.CheckTrash).
	Also func([]byte)

	// Shard, when sharded, keeps only that shard's blobs in the retention
	// (a companion goes with its owner's shard, so that the two are decided
	// together), and only references to them in the scan. Every session is
	// still read.
	Shard shard.Spec
	// AllReferences hands every reference to OnReference, and counts every
	// one in Scan, when sharded: the retention is still the shard's. A
	// shard's report attributes its blobs by the key each reference
	// resolves to in the listings, which the scan cannot tell, and counts
	// an owner's units over every reference.
	AllReferences bool
}

// Retention is the retention model's decision about every blob of a store:
// which of them the sessions keep. Mark makes it; gc's MakePlan, verify's
// orphan count and migrate's --delete-source read it.
type Retention struct {
	Store string
	// Started is when Mark began, before the listing: the fence of a decision
	// that uses this retention (see Young).
	Started time.Time

	Blobs int64 // regular blobs in the store (temporary leftovers excluded)
	Bytes int64 // their bytes
	// Kept counts the blobs the rule keeps (when sessions were read).
	Kept int64

	SessionsRead bool
	Scan         *scan.Report
	// Complete is false when the listing or a session could not be read in
	// full: nothing may then be removed on this decision.
	Complete  bool
	Problems  []string
	ListError string
	// Nested are folders of the store holding another store's internal
	// folder, with files in it or only empty folders; their contents are
	// listed as this store's blobs, so nothing may be removed on this
	// decision (see gc.NestedStoreError).
	Nested []string

	b *blobs
	// temporary holds the regular files of the listing whose names look
	// temporary (blobname.IsTemporary): not blobs of the retention, never
	// removed.
	temporary map[string]struct{}
	// owner maps a companion's id to its owner's id; group holds, by owner
	// id, whether its group is kept and its newest modification time. Both
	// are nil without companions.
	owner map[uint32]uint32
	group map[uint32]groupState
}

type groupState struct {
	kept   bool
	newest int64
}

// Mark lists st and reads every session, marking each blob that some session
// string names under the retention rule (see the package comment). Without
// sessions it only lists. It returns an error only for invalid arguments or
// a source that cannot be scanned at all; what could not be read is in
// Problems and makes the retention incomplete.
func Mark(ctx context.Context, st store.Store, srcs []sessions.Source, opts MarkOptions) (*Retention, error) {
	if st == nil {
		return nil, errors.New("retain: no store")
	}
	r := &Retention{Store: st.Location(), Started: time.Now(), Complete: true, Problems: []string{}}
	// The index keeps the keys, compactly; per blob the retention adds its
	// size and time.
	r.b = &blobs{idx: NewIndex()}
	// A key-order listing asks about each key before it holds the name: a
	// shard keeps its own blobs, and every key inside a nested store's
	// folder, which must refuse the run on every shard alike.
	keep := func(key string) bool {
		return strings.Contains(key, "/"+store.InternalDir+"/") || InShard(opts.Shard, key, opts.Companion)
	}
	list := func(ctx context.Context, prefix string, fn func(store.Entry) error) error {
		return store.ListSelected(ctx, st, prefix, keep, fn)
	}
	if ul, ok := store.AsUnorderedLister(st); ok {
		list = ul.ListUnordered // order does not matter to the marking; memory does
	}
	// Another store's internal folder is one whether or not it holds a file:
	// after a restore of its only run, a purge, or a run that moved nothing,
	// it holds only empty folders, and its blobs are that store's all the same.
	listCtx := store.WithInternalFolders(ctx, func(key string) {
		r.nested(strings.TrimSuffix(key, "/"+store.InternalDir))
	})
	var companions []companionPair
	unknownOwners := 0
	longestKey := 0
	err := list(listCtx, "", func(e store.Entry) error {
		// Symlinks and other non-regular files are never removed; temporary
		// leftovers of writers in progress neither.
		if i := strings.Index(e.Key, "/"+store.InternalDir+"/"); i >= 0 {
			r.nested(e.Key[:i])
		}
		if !e.Regular() {
			return nil
		}
		if !InShard(opts.Shard, e.Key, opts.Companion) {
			return nil
		}
		if blobname.IsTemporary(e.Key) {
			// Noted (they are few), so that Keeps says why such a key stays.
			if r.temporary == nil {
				r.temporary = map[string]struct{}{}
			}
			r.temporary[strings.Clone(e.Key)] = struct{}{}
			return nil
		}
		id := r.b.add(e.Key, e.Size, e.ModTime)
		longestKey = max(longestKey, len(e.Key))
		if opts.Companion != nil {
			switch owner, ok := opts.Companion(e.Key); {
			case ok && owner == "":
				unknownOwners++
				if unknownOwners == 1 {
					r.Complete = false
					r.Problems = append(r.Problems, fmt.Sprintf("%s: cannot tell whether it is the sidecar of an upload in use (its folder could not be listed)", e.Key))
				}
			case ok && owner != e.Key:
				companions = append(companions, companionPair{uint32(id), owner})
			}
		}
		r.Blobs++
		r.Bytes += e.Size
		return nil
	})
	if err != nil {
		r.Complete = false
		r.ListError = err.Error()
		r.Problems = append(r.Problems, fmt.Sprintf("listing %s: %v", r.Store, err))
	}
	if unknownOwners > 1 {
		r.Problems = append(r.Problems, fmt.Sprintf("and %d more keys whose upload could not be told", unknownOwners-1))
	}
	if len(companions) > 0 {
		r.linkCompanions(companions)
	}
	if len(srcs) > 0 {
		text := r.b.idx.Mark
		if prefixes := nonEmpty(opts.CopiedTo); len(prefixes) > 0 {
			text = markOutside(r.b.idx.Mark, copyNames{prefixes: prefixes, longest: longestKey, isKey: func(k string) bool {
				_, ok := r.b.idx.Lookup(k)
				return ok
			}})
		}
		if also := opts.Also; also != nil {
			own := text
			text = func(s []byte) { own(s); also(s) }
		}
		refShard := opts.Shard
		if opts.AllReferences {
			refShard = shard.Spec{}
		}
		sr, err := scan.Run(ctx, scan.Options{
			Sources:     srcs,
			Stores:      opts.Stores,
			Jobs:        opts.Jobs,
			MaxListed:   opts.MaxListed,
			OnReference: opts.OnReference,
			UnitPlaces:  opts.UnitPlaces,
			Progress:    opts.Progress,
			Text:        text,
			// Only the marks matter without stores: no distinct-blob set.
			CountOnly: len(opts.Stores) == 0,
			Shard:     refShard,
		})
		if err != nil {
			return nil, fmt.Errorf("retain: %w", err)
		}
		r.Scan, r.SessionsRead = sr, true
		if !sr.Complete || sr.Interrupted {
			r.Complete = false
			r.Problems = append(r.Problems, sr.ProblemLines()...)
		}
		if r.group != nil {
			r.settleGroups()
		}
		for id := range r.b.idx.Len() {
			if r.KeptID(id) {
				r.Kept++
			}
		}
	}
	if ctx.Err() != nil {
		r.Complete = false
		r.Problems = append(r.Problems, "interrupted while reading the store and the sessions")
	}
	return r, nil
}

// InShard reports whether the blob key belongs to shard s, where a
// companion (see MarkOptions.Companion) belongs to its owner's shard: the two
// are kept or removed together, so one shard must decide both. gc and
// verify split a store by it; migrate copies each blob on its own and splits
// by the key alone.
func InShard(s shard.Spec, key string, companion func(key string) (owner string, ok bool)) bool {
	if !s.Sharded() {
		return true
	}
	if companion != nil {
		if owner, ok := companion(key); ok && owner != "" {
			key = owner
		}
	}
	return s.Owns(key)
}

type companionPair struct {
	id    uint32
	owner string
}

// linkCompanions groups each companion with its owner, when the owner is a
// blob of the store and not a companion itself; any other companion follows
// the rule on its own.
func (r *Retention) linkCompanions(pairs []companionPair) {
	isCompanion := make(map[uint32]bool, len(pairs))
	for _, p := range pairs {
		isCompanion[p.id] = true
	}
	for _, p := range pairs {
		o, ok := r.b.idx.Lookup(p.owner)
		if !ok || isCompanion[uint32(o)] {
			continue
		}
		if r.owner == nil {
			r.owner, r.group = map[uint32]uint32{}, map[uint32]groupState{}
		}
		r.owner[p.id] = uint32(o)
		r.group[uint32(o)] = groupState{}
	}
}

// settleGroups decides each group once the marks are in: it is kept when any
// member is marked, and it is as young as its newest member.
func (r *Retention) settleGroups() {
	for o := range r.group {
		r.group[o] = groupState{kept: r.b.idx.Referenced(int(o)), newest: r.b.mtimes.At(int(o))}
	}
	for c, o := range r.owner {
		g := r.group[o]
		g.kept = g.kept || r.b.idx.Referenced(int(c))
		g.newest = max(g.newest, r.b.mtimes.At(int(c)))
		r.group[o] = g
	}
}

// nested records a folder that holds another store's internal folder (a
// few are enough to name the mistake).
func (r *Retention) nested(dir string) {
	if len(r.Nested) < 10 && !slices.Contains(r.Nested, dir) {
		r.Nested = append(r.Nested, dir)
	}
}

// Len is the number of blobs; ids are 0 … Len()-1.
func (r *Retention) Len() int { return r.b.idx.Len() }

// Index is the marked index of the store's blobs.
func (r *Retention) Index() *Index { return r.b.idx }

// Key, Size and ModTime describe blob id as the listing saw it.
func (r *Retention) Key(id int) string             { return r.b.idx.Key(id) }
func (r *Retention) Size(id int) int64             { return r.b.size(id) }
func (r *Retention) ModTime(id int) time.Time      { return time.Unix(0, r.b.mtimes.At(id)) }
func (r *Retention) Lookup(key string) (int, bool) { return r.b.idx.Lookup(key) }

// CompareByTime orders blobs i and j oldest first, then by key: the order in
// which gc lists its candidates. It compares the times as the retention
// holds them, so that a sort of millions of ids builds no time.Time per
// comparison.
func (r *Retention) CompareByTime(i, j int) int {
	if c := cmp.Compare(r.b.mtimes.At(i), r.b.mtimes.At(j)); c != 0 {
		return c
	}
	return r.b.idx.CompareKeys(i, j)
}

// SortByTime sorts ids in CompareByTime's order; bits of flags in an id
// are the caller's (gc's "referenced"), not part of the blob's id, and kept.
// It sorts the times beside the ids, so that a comparison reads no chunk of
// the retention but on a tie (which CompareByTime decides): a sort of
// millions of ids through CompareByTime spends most of its time fetching
// them.
func (r *Retention) SortByTime(ids []uint32, flags uint32) {
	type entry struct {
		t int64
		x uint32
	}
	es := make([]entry, len(ids))
	for i, x := range ids {
		es[i] = entry{r.b.mtimes.At(int(x &^ flags)), x}
	}
	slices.SortFunc(es, func(a, b entry) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return r.CompareByTime(int(a.x&^flags), int(b.x&^flags)) // a tie: by key
	})
	for i, e := range es {
		ids[i] = e.x
	}
}

// KeptID reports whether the retention rule keeps blob id: a session names
// it, or it is in a group (an owner and its companions) of which a session
// names a member. It is false for every blob when no session was read.
func (r *Retention) KeptID(id int) bool {
	if !r.SessionsRead {
		return false
	}
	if g, ok := r.groupOf(id); ok {
		return g.kept
	}
	return r.b.idx.Referenced(id)
}

// groupOf is the group (an owner and its companions) that blob id belongs
// to, if it belongs to one.
func (r *Retention) groupOf(id int) (groupState, bool) {
	if r.group == nil {
		return groupState{}, false
	}
	o, ok := r.owner[uint32(id)]
	if !ok {
		o = uint32(id)
	}
	g, ok := r.group[o]
	return g, ok
}

// newest is the modification time, in Unix nanoseconds, that the fence
// compares for blob id: a group's newest member's.
func (r *Retention) newest(id int) int64 {
	if g, ok := r.groupOf(id); ok {
		return g.newest
	}
	return r.b.mtimes.At(id)
}

// Young reports whether blob id (or a member of its group) was modified at
// or after cutoff: such a blob may belong to a session not saved yet, and no
// path removes it.
func (r *Retention) Young(id int, cutoff time.Time) bool {
	return r.newest(id) >= cutoff.UnixNano()
}

// Temporary reports whether key is a regular file of the listing whose name
// looks temporary (blobname.IsTemporary): no blob of the retention, never
// removed, but there.
func (r *Retention) Temporary(key string) bool {
	_, ok := r.temporary[key]
	return ok
}

// Keeps is the decision for one key, for a path that removes blobs it chose
// by other means (migrate's --delete-source): why the retention model keeps
// the blob, or "" when it may go. A key not in the listing is kept: the model
// knows nothing about it. cutoff is the fence (Started minus the minimum age).
func (r *Retention) Keeps(key string, cutoff time.Time) Reason {
	id, ok := r.b.idx.Lookup(key)
	switch {
	case !ok:
		if _, tmp := r.temporary[key]; tmp {
			return KeptTemporary
		}
		return KeptUnlisted
	case r.KeptID(id):
		return KeptReferenced
	case r.Young(id, cutoff):
		return KeptYoung
	}
	return ""
}

// Reason says why the retention model keeps a blob.
type Reason string

const (
	KeptReferenced Reason = "referenced by the retention rule"
	KeptYoung      Reason = "younger than the minimum age"
	KeptTemporary  Reason = "a temporary-looking name (never removed)"
	KeptUnlisted   Reason = "not a regular blob of the store's listing"
)

// TakeOldest is a size cap's choice among removable blobs: ids, sorted
// oldest first (CompareByTime), are taken in order until the store, size
// bytes now, is at most maxSize; it returns the ids taken, in the order of
// ids, and the store's size after them. An owner is always taken with its
// companions (they are removable exactly when it is) and a companion never
// without its owner, which is why the choice is the retention's: only it
// knows the groups. Without groups the result shares ids' array.
//
// flags are bits of an id that are not part of the blob's id (gc marks the
// referenced candidates of an age plan with one); they are kept as they are.
func (r *Retention) TakeOldest(ids []uint32, flags uint32, size, maxSize int64) (taken []uint32, sizeAfter int64) {
	if r.owner == nil {
		n := 0
		for _, id := range ids {
			if size <= maxSize {
				break
			}
			size -= r.b.size(int(id &^ flags))
			n++
		}
		return slices.Clip(ids[:n]), size
	}
	members := map[uint32][]uint32{}
	for c, o := range r.owner {
		members[o] = append(members[o], c)
	}
	isCandidate := make(map[uint32]uint32, len(r.owner))
	for _, id := range ids {
		if _, ok := r.owner[id&^flags]; ok {
			isCandidate[id&^flags] = id
		}
	}
	for _, id := range ids {
		if size <= maxSize {
			break
		}
		n := id &^ flags
		if _, ok := r.owner[n]; ok {
			continue // taken with its owner
		}
		taken = append(taken, id)
		size -= r.b.size(int(n))
		for _, c := range members[n] {
			if cid, ok := isCandidate[c]; ok {
				taken = append(taken, cid)
				size -= r.b.size(int(c))
			}
		}
	}
	pos := make(map[uint32]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	slices.SortFunc(taken, func(x, y uint32) int { return cmp.Compare(pos[x], pos[y]) })
	return slices.Clip(taken), size
}
