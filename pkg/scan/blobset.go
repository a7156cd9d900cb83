package scan

import (
	"context"
	"errors"
	"hash/maphash"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/store"
)

// blobKey identifies a flat content-addressed name compactly: its digest and
// the index of its extension in blobSet.exts. It holds no pointer, so the
// garbage collector never scans the map of a million of them.
type blobKey struct {
	digest blobname.Digest
	ext    uint16
}

// blobState is one byte per distinct blob: whether the store was asked about
// it, whether it is missing, and which of the first inlineSources sources refer
// to it. With a million distinct blobs the whole set stays near 85 MB.
type blobState uint8

const (
	stChecked blobState = 1 << iota
	stMissing
	srcShift      = 2
	inlineSources = 8 - srcShift
)

// setShards is how many parts the blob set is split into, each behind its own
// lock: the workers record their references themselves, and with this many
// parts two of them rarely want the same lock at once.
const setShards = 64

// blobSet is the set of distinct blobs the workers share: each reference is
// recorded by the worker that found it, and the first worker to record an
// inside key asks the store about it while it holds that key's shard, so every
// distinct key is asked about once and every later reference to it sees the
// answer.
type blobSet struct {
	ctx    context.Context
	stores []Target
	seed   maphash.Seed
	shards [setShards]setShard

	extMu sync.Mutex
	exts  map[string]uint16 // extension → its index in blobKey

	// where caches, for references inside several stores, which of them holds
	// the file (by the first store and key): index 0 is the first store.
	whereMu sync.Mutex
	where   map[located]int
}

type setShard struct {
	mu    sync.Mutex
	blobs flatTable
	other map[string]blobState
	wide  []map[string]struct{} // blobs referred to by source inlineSources+i
	_     [64]byte              // keeps two shards' locks off one cache line
}

func newBlobSet(ctx context.Context, stores []Target) *blobSet {
	s := &blobSet{ctx: ctx, stores: stores, seed: maphash.MakeSeed(), exts: map[string]uint16{}}
	for i := range s.shards {
		s.shards[i].other = map[string]blobState{}
	}
	return s
}

// recorded is what recording one reference found out.
type recorded struct {
	missing    bool     // the reference's blob is missing (it is dangling)
	newMissing bool     // and this reference's stat found that out
	statErr    *Problem // the store could not answer
}

// extIndex is the index of a content-addressed name's extension. Workers keep
// their own copy of the table in front of the shared one.
func (s *blobSet) extIndex(local map[string]uint16, ext string) (uint16, bool) {
	if i, ok := local[ext]; ok {
		return i, true
	}
	s.extMu.Lock()
	defer s.extMu.Unlock()
	i, ok := s.exts[ext]
	if !ok {
		if len(s.exts) >= 1<<16 {
			return 0, false
		}
		i = uint16(len(s.exts))
		s.exts[strings.Clone(ext)] = i
	}
	local[strings.Clone(ext)] = i
	return i, true
}

// blobID names the distinct blob a reference points at: a flat
// content-addressed name by its digest and extension (id ""), anything else by
// its text.
func (s *blobSet) blobID(local map[string]uint16, f *Found) (blobKey, string) {
	id := f.Key
	switch {
	case len(s.stores) == 0:
		if d, ext, ok := blobname.ParseBase(path.Base(f.Ref.Path)); ok {
			if i, ok := s.extIndex(local, ext); ok {
				return blobKey{d, i}, ""
			}
		}
		id = identity(f.Ref)
	case f.Status != ref.Inside:
		id = "?" + identity(f.Ref) // not a blob of any store: never the same as a store key
	case f.store > 0:
		id = strconv.Itoa(f.store) + ":" + id // keys of different stores are different blobs
	}
	if d, ext, ok := blobname.ParseBase(id); ok {
		if i, ok := s.extIndex(local, ext); ok {
			return blobKey{d, i}, ""
		}
	}
	return blobKey{}, id
}

// isFlat reports whether name is a content-addressed name without a folder.
func isFlat(name string) bool {
	_, _, ok := blobname.ParseBase(name)
	return ok
}

// identity names the blob a reference points at when there is no store to
// resolve it against: its content-addressed name where it has one.
func identity(r ref.Reference) string {
	if base := path.Base(r.Path); isFlat(base) {
		return base
	}
	switch r.Kind {
	case ref.BucketURL, ref.BucketPair:
		return r.Scheme + "://" + r.Bucket + "/" + r.Path
	}
	return path.Clean(r.Path)
}

func (s *blobSet) shard(k blobKey, id string) *setShard {
	if id == "" {
		return &s.shards[flatShard(k)]
	}
	return &s.shards[maphash.String(s.seed, id)%setShards]
}

// flatShard is the shard of a flat content-addressed name.
func flatShard(k blobKey) uint {
	return (uint(k.digest[0]) | uint(k.digest[1])<<8) % setShards
}

// flatBatch is the flat content-addressed names a worker found in an item,
// to be recorded together when no store is asked about them (see
// recordFlat): there is no answer a reference waits for then.
type flatBatch struct {
	keys   []blobKey
	sorted []blobKey // keys by shard, reused
	hashes []uint64  // of one shard's keys, reused
	seen   bool      // what reading their slots ahead read, kept so it is read
}

// maxFlatBatch bounds a batch: a large session is recorded in parts.
const maxFlatBatch = 4096

// recordFlat records that source refers to each name in b and empties it.
// The names are taken shard by shard, each shard's lock once: one lock per
// reference was a line of memory passed between the CPUs' caches every
// time, and the lookups made one after another in a shard let the
// processor wait for their cache misses at once.
func (s *blobSet) recordFlat(source int, b *flatBatch) {
	if len(b.keys) == 0 {
		return
	}
	var start [setShards + 1]int32
	for _, k := range b.keys {
		start[flatShard(k)+1]++
	}
	for i := 1; i <= setShards; i++ {
		start[i] += start[i-1]
	}
	b.sorted = slices.Grow(b.sorted[:0], len(b.keys))[:len(b.keys)]
	next := start
	for _, k := range b.keys {
		i := flatShard(k)
		b.sorted[next[i]] = k
		next[i]++
	}
	for i := range setShards {
		part := b.sorted[start[i]:start[i+1]]
		if len(part) == 0 {
			continue
		}
		hashes := slices.Grow(b.hashes[:0], len(part))[:len(part)]
		for j, k := range part {
			hashes[j] = flatHash(s.seed, k)
		}
		sh := &s.shards[i]
		sh.mu.Lock()
		// Read the first slot of every name before looking any up: the
		// reads do not wait for one another, so their misses overlap.
		var seen bool
		if mask := uint64(len(sh.blobs.slots) - 1); len(sh.blobs.slots) > 0 {
			for _, h := range hashes {
				seen = seen != sh.blobs.slots[h&mask].used
			}
		}
		b.seen = seen
		for j, k := range part {
			sh.markFlat(s.seed, hashes[j], k, source)
		}
		sh.mu.Unlock()
		b.hashes = hashes
	}
	b.keys = b.keys[:0]
}

// markFlat records, with sh's lock held, that source refers to k, a flat
// content-addressed name no store is asked about.
func (sh *setShard) markFlat(seed maphash.Seed, h uint64, k blobKey, source int) {
	slot, had := sh.blobs.slotHashed(seed, h, k)
	st := slot.st
	sh.markSource(&st, source, k, "")
	switch {
	case had && st == slot.st:
		// Most references name a blob already seen from this source; not
		// writing keeps the slot's line shared between the CPUs' caches.
	case !had:
		slot.key, slot.used = k, true
		sh.blobs.n++
		fallthrough
	default:
		slot.st = st
	}
}

// record notes that source refers to f's blob (k or id, as blobID names it)
// and, for an inside reference whose key nobody asked the store about yet,
// asks.
func (s *blobSet) record(k blobKey, id string, source int, f *Found) recorded {
	sh := s.shard(k, id)
	sh.mu.Lock()
	var st blobState
	var had bool
	var slot *flatSlot
	if id == "" {
		slot, had = sh.blobs.slot(s.seed, k)
		st = slot.st
	} else {
		st, had = sh.other[id]
	}
	old := st
	sh.markSource(&st, source, k, id)
	var o recorded
	if len(s.stores) > 0 && f.Status == ref.Inside {
		o = s.check(f, &st)
	}
	switch {
	case had && st == old:
		// Most references name a blob already seen from this source.
	case id == "":
		if !had {
			slot.key, slot.used = k, true
			sh.blobs.n++
		}
		slot.st = st
	default:
		if !had {
			id = strings.Clone(id) // not a part of the reference's text, which it would keep
		}
		sh.other[id] = st
	}
	sh.mu.Unlock()
	return o
}

// check asks the store about f's key unless that was done.
func (s *blobSet) check(f *Found, st *blobState) recorded {
	if *st&stChecked == 0 {
		_, err := s.stores[f.store].Store.Stat(s.ctx, f.Key)
		switch {
		case err == nil:
			*st |= stChecked
		case errors.Is(err, store.ErrNotExist):
			*st |= stChecked | stMissing
			return recorded{missing: true, newMissing: true}
		default:
			// Neither present nor provably missing: the scan is incomplete,
			// and the next reference to the key asks again.
			return recorded{statErr: &Problem{Place: ref.Place{Source: f.Store, Document: strings.Clone(f.Key), Offset: -1}, Err: err.Error()}}
		}
	}
	return recorded{missing: *st&stMissing != 0}
}

// markSource records that source refers to a blob: in the blob's state byte
// for the first sources, in a set of its own for the rest (rare: more than six
// --sessions).
func (sh *setShard) markSource(st *blobState, source int, k blobKey, id string) {
	if source < inlineSources {
		*st |= 1 << (srcShift + source)
		return
	}
	for len(sh.wide) <= source-inlineSources {
		sh.wide = append(sh.wide, map[string]struct{}{})
	}
	if id == "" {
		id = string(k.digest[:]) + string([]byte{byte(k.ext), byte(k.ext >> 8)})
	}
	sh.wide[source-inlineSources][strings.Clone(id)] = struct{}{}
}

// locate picks, for a reference inside several stores, the first that holds
// its file; when none does it stays in the first, where it is dangling. A store
// that cannot answer is picked too: check reports it, and the scan is
// incomplete.
func (s *blobSet) locate(f *Found) {
	cands := append([]located{{f.store, f.Key}}, f.alts...)
	first := cands[0]
	s.whereMu.Lock()
	pick, known := s.where[first]
	s.whereMu.Unlock()
	if !known {
		pick = 0
		failed := false
		for i, l := range cands {
			_, err := s.stores[l.store].Store.Stat(s.ctx, l.key)
			if errors.Is(err, store.ErrNotExist) {
				continue
			}
			pick, failed = i, err != nil
			break
		}
		if !failed {
			s.whereMu.Lock()
			if s.where == nil {
				s.where = map[located]int{}
			}
			s.where[located{first.store, strings.Clone(first.key)}] = pick // the key may be a view of the reference
			s.whereMu.Unlock()
		}
	}
	l := cands[pick]
	f.store, f.Key, f.Store, f.alts = l.store, l.key, s.stores[l.store].Store.Location(), nil
}

// distinct counts the distinct blobs of every source and in all.
func (s *blobSet) distinct(sources int) (perSource []int64, total int64) {
	perSource = make([]int64, sources)
	for i := range s.shards {
		sh := &s.shards[i]
		total += int64(sh.blobs.n + len(sh.other))
		for src := range perSource {
			if src >= inlineSources {
				if src-inlineSources < len(sh.wide) {
					perSource[src] += int64(len(sh.wide[src-inlineSources]))
				}
				continue
			}
			bit := blobState(1) << (srcShift + src)
			for _, sl := range sh.blobs.slots {
				if sl.used && sl.st&bit != 0 {
					perSource[src]++
				}
			}
			for _, st := range sh.other {
				if st&bit != 0 {
					perSource[src]++
				}
			}
		}
	}
	return perSource, total
}

// flatTable is the set of a shard's flat content-addressed names with their
// states: open addressing with linear probing in one slice, so that finding
// a name costs one cache miss where a map costs two (the set outgrows the
// caches; finding is most of a reference's cost). A probe starts at a seeded
// hash of the name: names are untrusted, and a run of names chosen to
// collide must cost no more than any other.
type flatTable struct {
	slots []flatSlot
	n     int // slots used
}

type flatSlot struct {
	key  blobKey
	st   blobState
	used bool
}

// slot returns k's slot and true, or the free slot where k belongs and false;
// the caller fills a free slot and counts it in n before the next call.
func (t *flatTable) slot(seed maphash.Seed, k blobKey) (*flatSlot, bool) {
	return t.slotHashed(seed, flatHash(seed, k), k)
}

// slotHashed is slot given k's flatHash.
func (t *flatTable) slotHashed(seed maphash.Seed, h uint64, k blobKey) (*flatSlot, bool) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow(seed)
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			return s, false
		}
		if s.key == k {
			return s, true
		}
	}
}

// grow doubles the table (from 64 slots), keeping it at most three quarters full.
func (t *flatTable) grow(seed maphash.Seed) {
	old := t.slots
	t.slots = make([]flatSlot, max(64, 2*len(old)))
	// Fresh memory is only mapped when first touched. Touched by a probe's
	// read, a page is mapped to the kernel's shared page of zeros, and the
	// first write then faults again and flushes both CPUs' address caches;
	// writing every page first costs one fault per page and no flush.
	clear(t.slots)
	mask := uint64(len(t.slots) - 1)
	for _, o := range old {
		if !o.used {
			continue
		}
		i := flatHash(seed, o.key) & mask
		for t.slots[i].used {
			i = (i + 1) & mask
		}
		t.slots[i] = o
	}
}

func flatHash(seed maphash.Seed, k blobKey) uint64 {
	return maphash.Bytes(seed, k.digest[:]) ^ uint64(k.ext)*0x9e3779b97f4a7c15
}
