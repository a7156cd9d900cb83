package ref

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"hash/maphash"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/chunked"
	"github.com/mediactl/mediactl/pkg/jsonwalk"
)

// Index holds the blobs of a store and marks those that some session string
// refers to under the retention rule:
//
// A blob is referenced when its file name (the last segment of its key), or the
// name without its extension, appears as a path segment or token in any session
// string, or — for a content-addressed blob — when its bare digest appears in a
// run of 64 or more hex characters (either case). A token is a maximal run of
// letters, digits, '.', '_' and '-'. A name with other characters (spaces,
// non-ASCII) is searched for as a plain substring, and kept too by any token
// that starts with its lead, the 16 or more token bytes before its first '.'
// (coffer's "<uuid>.final copy", by "<uuid>" or "<uuid>.final"). In a value
// that is not UTF-8 (a binary format's BLOB) a name also counts when it
// starts a token, or starts one byte into it, whatever follows (markGlued).
//
// The rule looks at every string, not only at fields that hold references: a
// digest in a tool's output, a file name in a chat message, a path inside
// embedded JSON all keep the blob. A false "referenced" only keeps a blob; a
// false "unreferenced" would lose data.
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
	marks      []uint32 // bitset by id, set atomically
	// byDigest: open addressing over content-addressed ids (id+1; 0 is empty),
	// one slot per distinct digest; later ids with the same digest (another
	// folder or extension) are in moreDigest under the first. Content-addressed
	// names need no token entries: any token holding their digest marks them.
	byDigest   []uint32
	moreDigest map[uint32][]uint32
	// byToken: open addressing over the names and stems of other blobs that
	// are single tokens, one slot per distinct token (see tokenOf); more
	// blobs with that token are in moreToken under the first entry.
	byToken   []uint32
	moreToken map[uint32][]uint32
	odd       []oddName // names that are not a single token

	lookupOnce sync.Once
	otherIDs   map[string]int32 // built on the first Lookup of another key
}

// kind is the folder and extension of a content-addressed key:
// key = dir + hex(digest) + ext.
type kind struct{ dir, ext string }

const (
	otherName = 1 << 31
	// maxBlobs keeps ids, and id<<1|1 + 1 in a token entry, within 32 bits.
	maxBlobs = 1<<31 - 1
)

type oddName struct {
	name []byte
	id   int32
}

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
	x.marks = make([]uint32, (x.n+31)/32)
	// What the rule looks for, by base name: a content-addressed name its
	// digest, a single token itself and its stem, anything else a substring
	// and its lead (leadOf).
	const (
		byDigest = iota
		byName
		byNameAndStem
		bySubstring
	)
	how := func(id int) (int, string) {
		s, ok := x.other(id)
		if !ok {
			return byDigest, ""
		}
		name := path.Base(s)
		switch _, ca := blobname.Parse(name); {
		case ca:
			return byDigest, name
		case !isToken(name):
			return bySubstring, name
		}
		if stem := stemOf(name); stem != name && stem != "" {
			return byNameAndStem, name
		}
		return byName, name
	}
	nDigests, nTokens := 0, 0
	for id := range x.n {
		switch h, name := how(id); h {
		case byDigest:
			nDigests++
		case byName:
			nTokens++
		case byNameAndStem:
			nTokens += 2
		case bySubstring:
			if leadOf(name) != "" {
				nTokens++
			}
		}
	}
	if nDigests > 0 {
		x.byDigest = make([]uint32, tableSize(nDigests))
	}
	if nTokens > 0 {
		x.byToken = make([]uint32, tableSize(nTokens))
	}
	for id := range x.n {
		switch h, name := how(id); h {
		case byDigest:
			x.insertDigest(uint32(id))
		case bySubstring:
			x.odd = append(x.odd, oddName{[]byte(name), int32(id)})
			if lead := leadOf(name); lead != "" {
				x.insertToken(uint32(id)<<1|1, lead)
			}
		case byNameAndStem:
			x.insertToken(uint32(id)<<1|1, stemOf(name))
			fallthrough
		case byName:
			x.insertToken(uint32(id)<<1, name)
		}
	}
	x.frozen.Store(true)
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

// A token entry is id<<1 for a blob's name, id<<1|1 for its stem (a name
// that is one token) or its lead (any other name); the table holds entry+1.
func (x *Index) tokenOf(entry uint32) string {
	name := x.nameOf(entry)
	switch {
	case entry&1 == 0:
		return name
	case isToken(name):
		return stemOf(name)
	}
	return leadOf(name)
}

// nameOf is the base name of the blob of a token entry.
func (x *Index) nameOf(entry uint32) string {
	return path.Base(x.others[x.names.At(int(entry>>1))&^otherName])
}

func (x *Index) insertToken(entry uint32, tok string) {
	i := slot(maphash.String(x.seed, tok), len(x.byToken))
	for {
		e := x.byToken[i]
		if e == 0 {
			x.byToken[i] = entry + 1
			return
		}
		if x.tokenOf(e-1) == tok {
			if x.moreToken == nil {
				x.moreToken = map[uint32][]uint32{}
			}
			x.moreToken[e-1] = append(x.moreToken[e-1], entry)
			return
		}
		if i++; i == len(x.byToken) {
			i = 0
		}
	}
}

func (x *Index) markByToken(tok []byte) {
	if e, ok := x.tokenEntry(tok); ok {
		x.mark(e >> 1)
		for _, more := range x.moreToken[e] {
			x.mark(more >> 1)
		}
	}
}

// markByLead marks the blobs whose lead (leadOf) is tok: of the entries
// for tok, those of names that are not one token. The stem of a name that is
// one token is matched by a whole token only, as before leads: "<id>.png"
// does not keep "<id>.json".
func (x *Index) markByLead(tok []byte) {
	e, ok := x.tokenEntry(tok)
	if !ok {
		return
	}
	isLead := func(entry uint32) bool { return entry&1 != 0 && !isToken(x.nameOf(entry)) }
	if isLead(e) {
		x.mark(e >> 1)
	}
	for _, more := range x.moreToken[e] {
		if isLead(more) {
			x.mark(more >> 1)
		}
	}
}

// tokenEntry is the first token entry for tok (others are in moreToken under
// it).
func (x *Index) tokenEntry(tok []byte) (uint32, bool) {
	i := slot(maphash.Bytes(x.seed, tok), len(x.byToken))
	for {
		e := x.byToken[i]
		if e == 0 {
			return 0, false
		}
		if x.tokenOf(e-1) == string(tok) { // no allocation: a comparison
			return e - 1, true
		}
		if i++; i == len(x.byToken) {
			i = 0
		}
	}
}

func stemOf(name string) string { return strings.TrimSuffix(name, path.Ext(name)) }

// leadOf is the lead of a name that is not one token: its token bytes before
// the first '.', when they are the whole of what comes before it and at least
// minLead bytes long; else "". Coffer names a file by a uuid and the suffix
// the user's file had, whatever it is ("<uuid>.final copy", "<uuid>.第二版",
// "<uuid>.v2 (Bob's edit)"), and serializers split such a name into tokens in
// ways no decoding undoes: a form-encoded link writes its space as '+', a
// Telegram MarkdownV2 text escapes the '.' ("<uuid>\.第二版"), a shell quote
// interrupts the name ("'…v2 (Bob'\"'\"'s edit)'"). The uuid alone is
// unique, and any token that starts with it keeps the file (markToken).
func leadOf(name string) string {
	lead, _, ok := strings.Cut(name, ".")
	if !ok || len(lead) < minLead || !isToken(lead) {
		return ""
	}
	return lead
}

// minLead is the shortest lead a name is kept by: a uuid's 32 hex digits
// are, a word such as "photo" ("photo 1.jpg") is not, lest every mention of
// the word keep the file.
const minLead = 16

// Mark marks every blob that s refers to under the retention rule, in every
// form in which a runtime may have written the name:
//
//   - s as given; '\\' is not a token byte, so an escape such as "\\n" or
//     "\\/" before a name ends the token before it;
//   - s with its JSON escapes decoded ("\\u7b2c" is 第, "\\/" is /), again for
//     the result (JSON in a string in a string), up to maxForms levels;
//   - s with a shell's backslash escapes removed ("a\\ b.pdf" in a command
//     is "a b.pdf");
//   - s with its percent escapes decoded (file:///a/M%C3%A4rz.pdf);
//   - the NFC and the NFD form of s, so that a name in one normalization
//     is kept by a session in the other.
//
// Forms combine (a percent-encoded URI inside escaped JSON), and are made only
// for strings that hold '\\', '%' or non-ASCII bytes: most strings are marked
// in one pass and cost nothing more.
func (x *Index) Mark(s []byte) {
	x.freeze()
	x.markForms(s, maxForms, len(x.byToken) > 0 && !utf8.Valid(s))
}

// markGlued marks the names that start a token of a binary value, or start
// one byte into it, whatever follows them in the token. SQLite's JSONB and
// msgpack (a BLOB or bytea column) write each string right after its header,
// and the next element right after it: a name of 68 bytes follows 'D' (its
// length), and coffer's attachment block {"path": "…/<uuid>.jpg", "mime": …}
// as JSONB holds "<uuid>.jpgGmime" ('G' is the header of the 4-byte "mime").
// Such a value is not UTF-8; text is, and keeps its tokens whole. Every
// prefix up to a file name's longest is looked up, so the cost, paid by
// binary values alone, grows with the square of their tokens' length up to
// that bound.
func (x *Index) markGlued(s []byte) {
	for i := 0; i < len(s); {
		if byteClass[s[i]]&tokenByte == 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && byteClass[s[j]]&tokenByte != 0 {
			j++
		}
		for start := i; start <= i+1 && start < j; start++ {
			for end := start + 1; end <= j && end-start <= maxNameLen; end++ {
				x.markByToken(s[start:end])
			}
		}
		i = j
	}
}

// maxNameLen is the longest file name (NAME_MAX).
const maxNameLen = 255

// maxForms bounds how many decodings deep Mark looks.
const maxForms = 6

// markForms marks s and its other forms; glued says s is a binary value,
// each of whose forms markGlued reads too.
func (x *Index) markForms(s []byte, depth int, glued bool) {
	f := x.markOne(s)
	if glued {
		x.markGlued(s)
	}
	if f == 0 || depth == 0 {
		return
	}
	buf := formBuffers.Get().(*[]byte)
	defer formBuffers.Put(buf)
	if f&hasEscape != 0 {
		if d := jsonwalk.AppendUnescaped((*buf)[:0], s); !bytes.Equal(d, s) {
			*buf = d
			x.markForms(d, depth-1, glued)
		}
		if hasShellEscape(s) {
			// Its other forms too: a name in NFD behind MarkdownV2's escapes.
			*buf = appendShellUnescaped((*buf)[:0], s)
			x.markForms(*buf, depth-1, glued)
		}
	}
	if f&hasPercent != 0 {
		if d := appendPercentDecoded((*buf)[:0], s); !bytes.Equal(d, s) {
			*buf = d
			x.markForms(d, depth-1, glued)
		}
	}
	if f&hasWide != 0 {
		for _, form := range []norm.Form{norm.NFC, norm.NFD} {
			if d := form.Append((*buf)[:0], s...); !bytes.Equal(d, s) {
				*buf = d
				x.markOne(d)
				if glued {
					x.markGlued(d)
				}
			}
		}
	}
}

// hasShellEscape reports whether s holds a backslash before a space or an
// ASCII punctuation mark: a tool call's command names a file whose name has
// a space or a shell character that way ("pdftotext
// ~/.coffer/channel-media/<id>.final\ copy -"), a Telegram MarkdownV2 text
// escapes every '.', '-', '_' and more ("<id>\.final copy"), and it may be
// the only mention of the file. A backslash before a letter or a digit
// (code's "\n", a Windows path) is not one: such strings make no shell form.
func hasShellEscape(s []byte) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\\' {
			if c := s[i+1]; c < utf8.RuneSelf && (c == ' ' || c == '\t' || unicode.IsPunct(rune(c)) || unicode.IsSymbol(rune(c))) {
				return true
			}
			i++
		}
	}
	return false
}

// appendShellUnescaped appends s with a shell's backslash escapes removed,
// as sh reads an unquoted word: "\c" is c, whatever c is.
func appendShellUnescaped(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		dst = append(dst, s[i])
	}
	return dst
}

// formBuffers recycle the decoded forms Mark makes, so that Mark does not
// allocate in the steady state.
var formBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// What markOne saw in a string: reasons to look at other forms of it.
const (
	hasEscape = 1 << iota
	hasPercent
	hasWide
)

// markOne marks what s names as it stands, and reports which other forms it
// may have.
func (x *Index) markOne(s []byte) (forms int) {
	for _, o := range x.odd {
		if bytes.Contains(s, o.name) {
			x.mark(uint32(o.id))
		}
	}
	if len(x.byToken) == 0 {
		// Only content-addressed names and substrings are indexed: the
		// tokens that matter are 64 bytes or longer.
		x.markLong(s)
		return formsOf(s)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if cl := byteClass[c]; cl&tokenByte == 0 {
			forms |= int(cl >> formShift)
			i++
			continue
		}
		j := i + 1
		for j < len(s) && byteClass[s[j]]&tokenByte != 0 {
			j++
		}
		x.markToken(s[i:j])
		i = j
	}
	return forms
}

// markLong is markOne's token loop for an index without token entries: it
// marks the tokens of s that are at least blobname.DigestLen long, and looks
// at only one byte in DigestLen of the rest. Such a token covers one of every
// DigestLen consecutive positions, so probing a position in each stride of
// DigestLen finds it; a probe that hits a token byte widens to the whole token.
func (x *Index) markLong(s []byte) {
	for p := blobname.DigestLen - 1; p < len(s); {
		if byteClass[s[p]]&tokenByte == 0 {
			p += blobname.DigestLen
			continue
		}
		i, j := p, p+1
		for i > 0 && byteClass[s[i-1]]&tokenByte != 0 {
			i--
		}
		for j < len(s) && byteClass[s[j]]&tokenByte != 0 {
			j++
		}
		if j-i >= blobname.DigestLen {
			x.markToken(s[i:j])
		}
		// s[j] ends the token: the next one starts after it, and the
		// position DigestLen on lies in it if it is long enough.
		p = j + blobname.DigestLen
	}
}

// formsOf is what markOne's loop finds out about the other forms of s, for
// markLong, which does not look at every byte: a JSON escape, a percent escape
// or a non-ASCII byte anywhere in s. It reads s eight bytes at a time.
func formsOf(s []byte) (forms int) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	// has reports whether a byte of w is b (exact: the borrow of a lower
	// byte never sets the high bit of one that differs).
	has := func(w, b uint64) bool { v := w ^ lo*b; return (v-lo)&^v&hi != 0 }
	i := 0
	for ; i+8 <= len(s) && forms != hasEscape|hasPercent|hasWide; i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		if w&hi != 0 {
			forms |= hasWide
		}
		if has(w, '\\') {
			forms |= hasEscape
		}
		if has(w, '%') {
			forms |= hasPercent
		}
	}
	for ; i < len(s); i++ {
		forms |= int(byteClass[s[i]] >> formShift)
	}
	return forms
}

// byteClass is isTokenByte and isHex, and the forms a byte calls for, by
// table: markOne and markToken look at every byte of every session string.
var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		if isTokenByte(b) {
			t[c] |= tokenByte
		}
		if isHex(b) {
			t[c] |= hexByte
		}
		switch {
		case b == '\\':
			t[c] |= hasEscape << formShift
		case b == '%':
			t[c] |= hasPercent << formShift
		case b >= utf8.RuneSelf:
			t[c] |= hasWide << formShift
		}
	}
	return t
}()

const (
	tokenByte = 1 << iota
	hexByte
	formShift = iota // the form bits (hasEscape, …) above these
)

// appendPercentDecoded appends s with every valid %XX escape decoded to dst;
// anything else stays as written.
func appendPercentDecoded(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			dst = append(dst, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		dst = append(dst, s[i])
	}
	return dst
}

func (x *Index) markToken(tok []byte) {
	if len(x.byToken) > 0 {
		// A token that starts with a lead and a '.' names the file of that
		// lead, whatever follows ("<uuid>.final" of "<uuid>.final+copy").
		if k := bytes.IndexByte(tok, '.'); k >= minLead {
			x.markByLead(tok[:k])
		}
	}
	for len(x.byToken) > 0 {
		x.markByToken(tok)
		// "ab….png." at the end of a sentence names "ab….png".
		if len(tok) == 0 || tok[len(tok)-1] != '.' {
			break
		}
		tok = tok[:len(tok)-1]
	}
	if len(tok) < blobname.DigestLen || len(x.byDigest) == 0 {
		return
	}
	for i := 0; i+blobname.DigestLen <= len(tok); {
		if byteClass[tok[i]]&hexByte == 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(tok) && byteClass[tok[j]]&hexByte != 0 {
			j++
		}
		// Every 64 digits of a longer run: a binary value (SQLite's JSONB,
		// msgpack) glues a string's length byte to it, and a length of 68,
		// "<digest>.png", is 'D', a hex digit.
		for k := i; k+blobname.DigestLen <= j; k++ {
			var d blobname.Digest
			decodeHex(&d, tok[k:k+blobname.DigestLen])
			x.eachWithDigest(&d, x.mark)
		}
		i = j
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

// NameEnds reports whether the rule reads a name followed by rest as ending
// there: rest is empty, or starts, after any dots (the end of a sentence),
// with a byte that is not a token byte. Followed by anything else, the name
// is part of a longer token ("ab.png.bak", "ab.png-thumb").
func NameEnds(rest []byte) bool {
	rest = bytes.TrimLeft(rest, ".")
	return len(rest) == 0 || !isTokenByte(rest[0])
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return true
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
