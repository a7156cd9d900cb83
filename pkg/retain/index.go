package retain

import (
	"bytes"
	"encoding/hex"
	"hash/maphash"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/chunked"
)

// Index holds the blobs of a store and marks those that some session string
// names under the retention rule (see the package comment and
// docs/retention.md): by the hex digits of a content-addressed digest or of a
// name's long hex part anywhere, or by the letters and digits of any other
// name's stem, in order.
//
// Add every blob first, then call Mark from any number of goroutines. The first
// call of Mark, Lookup or Referenced freezes the index: Add panics after it.
//
// The index is compact, since a store may hold millions of blobs: a blob with a
// content-addressed name ("<sha256 hex><ext>", see package blobname) costs its
// 32-byte digest and a 4-byte id of its folder and extension, and its key is
// only rendered on demand (Key, AppendKey); other keys are kept as strings. The
// lookup tables are open-addressed arrays of 32-bit ids, built once when the
// index freezes, and the marks are a bitset: about 42 bytes per
// content-addressed blob in all.
type Index struct {
	n       int
	digests chunked.Array[blobname.Digest] // by id; zero for other names
	names   chunked.Array[uint32]          // by id: a kind, or otherName|i for others[i]
	kinds   []kind
	kindIDs map[kind]uint32
	others  []string // keys without a content-addressed name

	freezeOnce sync.Once
	frozen     atomic.Bool
	seed       maphash.Seed
	hashSeed   uint64   // of hashFolded
	marks      []uint32 // bitset by id, set atomically
	// byDigest: open addressing over content-addressed ids (id+1; 0 is empty),
	// one slot per distinct digest; later ids with the same digest (another
	// folder or extension) are in moreDigest under the first.
	byDigest   []uint32
	moreDigest map[uint32][]uint32

	// Names with a hex part (see hexPart), one group per distinct part;
	// byHead finds them by the part's first minHexPart digits.
	byHead groupTable
	parts  []group
	// Other names, one group per distinct skeleton (see skeletonsOf);
	// byAnchor finds them by their anchor (see chooseAnchors).
	skels      []group
	skelWords  [][]string // by skeleton: its words, folded
	skelAnchor []int32    // by skeleton: the index of its anchor word
	byAnchor   groupTable
	anchorLens []uint64 // bitset of the anchors' lengths
	// numberNames says a skeleton has a word, or a name a hex part, of
	// digits alone, which a number may spell (see markNumbers).
	numberNames bool
	maxAnchor   int
	// done says, by group, that all its blobs are marked (parts first,
	// then skeletons): later matches skip the work.
	done []uint32
	// always are blobs whose names leave nothing to look for (a stem of
	// only non-ASCII characters): the first session string keeps them.
	always     []uint32
	alwaysOnce sync.Once

	lookupOnce sync.Once
	otherIDs   map[string]int32 // built on the first Lookup of another key
}

// group is one thing the rule looks for (a hex part, a skeleton) and the
// blobs it keeps.
type group struct {
	key string // the hex part, or the anchor word; folded
	ids []uint32
}

// kind is the folder and extension of a content-addressed key:
// key = dir + hex(digest) + ext.
type kind struct{ dir, ext string }

const (
	otherName = 1 << 31
	// maxBlobs keeps ids, and id<<1|1 + 1 in a token entry, within 32 bits.
	maxBlobs = 1<<31 - 1
)

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{kindIDs: map[kind]uint32{}}
}

// Add registers a blob by its store key and returns its id (0, 1, 2, …).
func (x *Index) Add(key string) int {
	if x.frozen.Load() {
		panic("ref: Index.Add after Mark, Lookup or Referenced")
	}
	id := x.n
	if id >= maxBlobs {
		panic("ref: Index holds at most 2^31-1 blobs")
	}
	// A content-addressed name is kept as its digest and the id of its folder
	// and extension. Any other key is kept as it is, with the digest of its
	// base name when that is content-addressed (it is marked by digest then).
	n, ca := blobname.Parse(path.Base(key))
	name := uint32(otherName)
	if dir, ok := compactDir(key); ca && ok {
		k := kind{dir, n.Ext}
		kid, seen := x.kindIDs[k]
		if !seen && len(x.kinds) < otherName {
			// Copies: the key may share the memory of a larger buffer.
			k = kind{strings.Clone(dir), strings.Clone(n.Ext)}
			kid, seen = uint32(len(x.kinds)), true
			x.kinds = append(x.kinds, k)
			x.kindIDs[k] = kid
		}
		if seen {
			name = kid
		}
	}
	if name == otherName {
		name |= uint32(len(x.others))
		x.others = append(x.others, key)
	}
	x.digests.Add(n.Digest) // zero when not content-addressed
	x.names.Add(name)
	x.n++
	return id
}

// compactDir returns the folder of key when key is that folder and its base
// name (no trailing slash): key renders back from the two.
func compactDir(key string) (string, bool) {
	i := strings.LastIndexByte(key, '/') + 1
	if i == len(key) {
		return "", false
	}
	return key[:i], true
}

// Len is the number of blobs added.
func (x *Index) Len() int { return x.n }

// Key returns the key of blob id.
func (x *Index) Key(id int) string {
	if s, ok := x.other(id); ok {
		return s
	}
	var buf [512]byte
	return string(x.AppendKey(buf[:0], id))
}

// AppendKey appends the key of blob id to dst.
func (x *Index) AppendKey(dst []byte, id int) []byte {
	if s, ok := x.other(id); ok {
		return append(dst, s...)
	}
	k := x.kinds[x.names.At(id)]
	d := x.digests.At(id)
	dst = append(dst, k.dir...)
	dst = hex.AppendEncode(dst, d[:])
	return append(dst, k.ext...)
}

// CompareKeys compares the keys of blobs a and b as strings.Compare would.
func (x *Index) CompareKeys(a, b int) int {
	na, nb := x.names.At(a), x.names.At(b)
	if na&otherName == 0 && nb&otherName == 0 && x.kinds[na].dir == x.kinds[nb].dir {
		// The same folder, then 64 lower-case hex digits, whose order is
		// their digests' byte order, then the extension.
		da, db := x.digests.At(a), x.digests.At(b)
		if c := bytes.Compare(da[:], db[:]); c != 0 {
			return c
		}
		return strings.Compare(x.kinds[na].ext, x.kinds[nb].ext)
	}
	var ba, bb [256]byte
	return bytes.Compare(x.AppendKey(ba[:0], a), x.AppendKey(bb[:0], b))
}

func (x *Index) other(id int) (string, bool) {
	if n := x.names.At(id); n&otherName != 0 {
		return x.others[n&^otherName], true
	}
	return "", false
}

// Lookup returns the id of the blob added with key.
func (x *Index) Lookup(key string) (int, bool) {
	x.freeze()
	n, ca := blobname.Parse(path.Base(key))
	if dir, ok := compactDir(key); ca && ok {
		kid, ok := x.kindIDs[kind{dir, n.Ext}]
		if ok {
			found := -1
			x.eachWithDigest(&n.Digest, func(id uint32) {
				if found < 0 && x.names.At(int(id)) == kid {
					found = int(id)
				}
			})
			if found >= 0 {
				return found, true
			}
		}
		// Not added as a content-addressed key: perhaps as another (more
		// folder and extension pairs than ids for them).
	}
	x.lookupOnce.Do(func() {
		x.otherIDs = make(map[string]int32, len(x.others))
		for id := range x.n {
			if s, ok := x.other(id); ok {
				if _, dup := x.otherIDs[s]; !dup {
					x.otherIDs[s] = int32(id)
				}
			}
		}
	})
	id, ok := x.otherIDs[key]
	return int(id), ok
}

// Referenced reports whether blob id was marked.
func (x *Index) Referenced(id int) bool {
	x.freeze()
	return atomic.LoadUint32(&x.marks[id>>5])&(1<<(id&31)) != 0
}

func (x *Index) mark(id uint32) {
	w, bit := &x.marks[id>>5], uint32(1)<<(id&31)
	if atomic.LoadUint32(w)&bit == 0 {
		atomic.OrUint32(w, bit)
	}
}

// freeze builds the lookup tables, once every blob is added.
func (x *Index) freeze() {
	x.freezeOnce.Do(x.build)
}

func (x *Index) build() {
	x.seed = maphash.MakeSeed()
	x.hashSeed = maphash.Comparable(x.seed, 0)
	x.marks = make([]uint32, (x.n+31)/32)
	nDigests := 0
	partOf := map[string]int{}
	skelOf := map[string]int{}
	for id := range x.n {
		s, ok := x.other(id)
		if !ok {
			nDigests++
			continue
		}
		name := path.Base(s)
		if _, ca := blobname.Parse(name); ca {
			nDigests++
			continue
		}
		if part := hexPart(name); part != "" {
			k, seen := partOf[part]
			if !seen {
				k = len(x.parts)
				partOf[part] = k
				x.parts = append(x.parts, group{key: part})
				x.numberNames = x.numberNames || hasDigitWord(part)
			}
			x.parts[k].ids = append(x.parts[k].ids, uint32(id))
			continue
		}
		skels := skeletonsOf(name)
		if len(skels) == 0 {
			x.always = append(x.always, uint32(id))
			continue
		}
		for _, words := range skels {
			sk := strings.Join(words, "/")
			k, seen := skelOf[sk]
			if !seen {
				k = len(x.skels)
				skelOf[sk] = k
				x.skels = append(x.skels, group{})
				x.skelWords = append(x.skelWords, words)
				x.numberNames = x.numberNames || hasDigitWord(words...)
			}
			if ids := x.skels[k].ids; len(ids) == 0 || ids[len(ids)-1] != uint32(id) {
				x.skels[k].ids = append(ids, uint32(id))
			}
		}
	}
	x.chooseAnchors()
	if nDigests > 0 {
		x.byDigest = make([]uint32, tableSize(nDigests))
		for id := range x.n {
			if x.isDigestName(id) {
				x.insertDigest(uint32(id))
			}
		}
	}
	x.byHead = newGroupTable(len(x.parts), func(k int) string { return x.parts[k].key[:minHexPart] }, func(k string) uint64 { return hashFolded(x.hashSeed, k) })
	x.byAnchor = newGroupTable(len(x.skels), func(k int) string { return x.skels[k].key }, func(k string) uint64 { return hashFolded(x.hashSeed, k) })
	for _, g := range x.skels {
		x.maxAnchor = max(x.maxAnchor, len(g.key))
	}
	x.anchorLens = make([]uint64, x.maxAnchor>>6+1)
	for _, g := range x.skels {
		x.anchorLens[len(g.key)>>6] |= 1 << (len(g.key) & 63)
	}
	x.done = make([]uint32, (len(x.parts)+len(x.skels)+31)/32)
	x.frozen.Store(true)
}

// chooseAnchors picks the word each skeleton is looked up by: the one fewest
// skeletons share (then the longest), so that a word every upload's name
// has ("scan", "invoice", "img") does not chain all of them behind one
// table entry, each to be checked wherever prose says that word.
func (x *Index) chooseAnchors() {
	shared := map[string]int32{}
	for _, words := range x.skelWords {
		for i, w := range words {
			if !slices.Contains(words[:i], w) {
				shared[w]++
			}
		}
	}
	x.skelAnchor = make([]int32, len(x.skels))
	for k, words := range x.skelWords {
		a := 0
		for i, w := range words {
			if n, best := shared[w], shared[words[a]]; n < best || n == best && len(w) > len(words[a]) {
				a = i
			}
		}
		x.skelAnchor[k] = int32(a)
		x.skels[k].key = words[a]
	}
}

// isDigestName reports whether blob id is matched by its digest: a
// content-addressed base name (whose digest may be zero).
func (x *Index) isDigestName(id int) bool {
	s, ok := x.other(id)
	if !ok {
		return true
	}
	_, ca := blobname.Parse(path.Base(s))
	return ca
}

// tableSize gives n entries a load of at most 2/3.
func tableSize(n int) int { return n + n/2 + 1 }

// slot maps a hash onto a table of size n.
func slot(h uint64, n int) int { return int((h >> 32) * uint64(n) >> 32) }

func (x *Index) insertDigest(id uint32) {
	d := x.digests.At(int(id))
	i := slot(maphash.Bytes(x.seed, d[:]), len(x.byDigest))
	for {
		e := x.byDigest[i]
		if e == 0 {
			x.byDigest[i] = id + 1
			return
		}
		if x.digests.At(int(e-1)) == d {
			if x.moreDigest == nil {
				x.moreDigest = map[uint32][]uint32{}
			}
			x.moreDigest[e-1] = append(x.moreDigest[e-1], id)
			return
		}
		if i++; i == len(x.byDigest) {
			i = 0
		}
	}
}

// eachWithDigest calls fn with every content-addressed blob of digest d.
func (x *Index) eachWithDigest(d *blobname.Digest, fn func(uint32)) {
	if len(x.byDigest) == 0 {
		return
	}
	i := slot(maphash.Bytes(x.seed, d[:]), len(x.byDigest))
	for {
		e := x.byDigest[i]
		if e == 0 {
			return
		}
		if x.digests.At(int(e-1)) == *d {
			fn(e - 1)
			for _, id := range x.moreDigest[e-1] {
				fn(id)
			}
			return
		}
		if i++; i == len(x.byDigest) {
			i = 0
		}
	}
}

// decodeHex decodes 64 hex digits of either case, already checked by isHex.
func decodeHex(d *blobname.Digest, s []byte) {
	s = s[:2*len(d)]
	for k := range d {
		d[k] = hexValue[s[2*k]]<<4 | hexValue[s[2*k+1]]
	}
}

// hexValue is unhex by table, for decodeHex.
var hexValue = func() (t [256]byte) {
	for c := range 256 {
		if isHex(byte(c)) {
			t[c] = unhex(byte(c))
		}
	}
	return t
}()

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
