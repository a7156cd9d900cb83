package retain

import (
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/mediactl/mediactl/pkg/blobname"
)

// minHexPart is the shortest run of hex digits that keeps a name by itself:
// coffer's uuid4().hex has 32, a digest 64. Sixteen hex digits are 64 bits,
// which prose does not spell by chance.
const minHexPart = 16

// hexPart is the longest run of at least minHexPart hex digits in name,
// folded to lower case, or "". A name with one is kept by that run alone,
// wherever it occurs (see Mark).
func hexPart(name string) string {
	best := ""
	for i := 0; i < len(name); {
		if !isHex(name[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(name) && isHex(name[j]) {
			j++
		}
		if j-i >= minHexPart && j-i > len(best) {
			best = name[i:j]
		}
		i = j
	}
	return strings.ToLower(best)
}

// skeletonsOf are the word lists the rule looks for to keep a name without
// a hex part: the words (maximal runs of ASCII letters and digits, folded to
// lower case) of its stem, the name without its extension, or of the whole
// name when the stem is empty (".hidden"). Its NFC and NFD forms may have
// different words ("März" has "m", "rz" in NFC and "ma", "rz" in NFD: the
// decomposed ä leaves its a); each is a skeleton of its own. None, when the
// stem has no letter or digit at all.
func skeletonsOf(name string) [][]string {
	stem := strings.TrimSuffix(name, path.Ext(name))
	if stem == "" {
		stem = name
	}
	var out [][]string
	for _, f := range []norm.Form{norm.NFC, norm.NFD} {
		w := wordsOf(f.String(stem))
		if len(w) > 0 && (len(out) == 0 || strings.Join(out[0], "/") != strings.Join(w, "/")) {
			out = append(out, w)
		}
	}
	return out
}

// wordsOf is s's words, folded to lower case.
func wordsOf(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		out = append(out, strings.ToLower(s[i:j]))
		i = j
	}
	return out
}

// Mark marks every blob that s names under the retention rule. It decodes
// nothing: every escaping writers use (JSON, percent and form encoding, HTML
// and XML references, Python's repr, shell quoting, Markdown escapes) writes
// ASCII letters and digits as themselves and only replaces what lies
// between them, so the rule looks at letters and digits alone:
//
//   - a content-addressed name is kept when its 64 hex digits occur anywhere
//     in s, in either case, whatever surrounds them;
//   - a name with a run of 16 or more hex digits (coffer's uuid4().hex +
//     the user's suffix) is kept when that run occurs anywhere in s;
//   - any other name is kept when the words of its stem (runs of letters and
//     digits; "holiday photo.jpg" has "holiday", "photo") each end a word
//     of s, in order: an escape before a word may leave digits or letters
//     glued to its start ("%27s", "\x27s", "\u00e4rz"), never to its end,
//     since every escape begins with a byte that is not one. In a value that
//     is not UTF-8 (a binary format's BLOB, where a length byte may follow a
//     string) the words may occur anywhere in s's words.
//
// A false "referenced" only keeps a blob; a false "unreferenced" would lose
// data. Mark does not allocate in the steady state.
func (x *Index) Mark(s []byte) {
	x.freeze()
	if len(x.always) > 0 {
		x.alwaysOnce.Do(func() {
			for _, id := range x.always {
				x.mark(id)
			}
		})
	}
	x.markHex(s)
	if len(x.skels) > 0 {
		x.markWords(s, !utf8.Valid(s))
	}
	if x.numberNames {
		x.markNumbers(s)
	}
}

// markHex marks the blobs whose digest or hex part occurs in a run of hex
// digits of s. It looks at one byte in minRun of s outside such runs: a run
// at least minRun long covers one of every minRun consecutive positions, so
// probing a position in each stride finds it; a probe that hits a hex digit
// widens to the whole run.
func (x *Index) markHex(s []byte) {
	minRun := blobname.DigestLen
	switch {
	case len(x.parts) > 0:
		minRun = minHexPart
	case len(x.byDigest) == 0:
		return
	}
	for p := minRun - 1; p < len(s); {
		if byteClass[s[p]]&hexByte == 0 {
			p += minRun
			continue
		}
		i, j := p, p+1
		for i > 0 && byteClass[s[i-1]]&hexByte != 0 {
			i--
		}
		for j < len(s) && byteClass[s[j]]&hexByte != 0 {
			j++
		}
		if j-i >= minRun {
			x.markRun(s[i:j])
		}
		// s[j] ends the run: the next one starts after it, and the
		// position minRun on lies in it if it is long enough.
		p = j + minRun
	}
}

// markRun marks what a run of hex digits holds: every digest in it (a
// binary value glues a length byte to a name, and the 68 of
// "<digest>.png" is 'D', a hex digit) and every hex part.
func (x *Index) markRun(r []byte) {
	if len(x.byDigest) > 0 {
		for k := 0; k+blobname.DigestLen <= len(r); k++ {
			var d blobname.Digest
			decodeHex(&d, r[k:k+blobname.DigestLen])
			x.eachWithDigest(&d, x.mark)
		}
	}
	if len(x.parts) == 0 {
		return
	}
	for k := 0; k+minHexPart <= len(r); k++ {
		head := r[k : k+minHexPart]
		g := x.byHead.find(hashFolded(x.hashSeed, head), func(k int) bool { return equalFolded(head, x.parts[k].key[:minHexPart]) })
		for ; g >= 0; g = int(x.byHead.next[g]) {
			part := x.parts[g].key
			if x.isDone(g) || len(r)-k < len(part) || !equalFolded(r[k:k+len(part)], part) {
				continue
			}
			x.markGroup(g, &x.parts[g])
		}
	}
}

// markWords marks the blobs whose skeleton s holds (see Mark). Each word of
// s is tried as the end of an anchor of every length the index has;
// inside says that an anchor (and every other word of a skeleton) may also
// sit inside a word of s, not only end it.
func (x *Index) markWords(s []byte, inside bool) {
	words := wordLists.Get().(*wordList)
	defer func() { words.s, words.spans = nil, words.spans[:0]; wordLists.Put(words) }()
	n := 0 // the index of the current word of s
	for i := 0; i < len(s); {
		if byteClass[s[i]]&wordByte == 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && byteClass[s[j]]&wordByte != 0 {
			j++
		}
		ends := j
		for {
			x.anchorsEndingAt(s, i, ends, n, inside, words)
			if !inside || ends == i+1 {
				break
			}
			ends--
		}
		n++
		i = j
	}
}

// anchorsEndingAt tries s[k:end], for every start k ≥ i, as an anchor: word
// n of s is s[i:j] for some j ≥ end.
func (x *Index) anchorsEndingAt(s []byte, i, end, n int, inside bool, words *wordList) {
	h := x.hashSeed
	for k := end - 1; k >= i && end-k <= x.maxAnchor; k-- {
		h = hashStep(h, s[k])
		l := end - k
		if x.anchorLens[l>>6]&(1<<(l&63)) == 0 {
			continue
		}
		word := s[k:end]
		g := x.byAnchor.find(hashFinish(h, l), func(k int) bool { return equalFolded(word, x.skels[k].key) })
		for ; g >= 0; g = int(x.byAnchor.next[g]) {
			if x.isDone(len(x.parts)+g) || !equalFolded(s[k:end], x.skels[g].key) {
				continue
			}
			if words.s == nil {
				words.split(s)
			}
			if words.holds(x.skelWords[g], int(x.skelAnchor[g]), n, inside) {
				x.markGroup(len(x.parts)+g, &x.skels[g])
			}
		}
	}
}

// wordLists recycle the word lists markWords splits strings into.
var wordLists = sync.Pool{New: func() any { return new(wordList) }}

// wordList is the words of one string of the sessions, split when a
// skeleton's anchor matched in it.
type wordList struct {
	s     []byte
	spans [][2]int32
}

func (w *wordList) split(s []byte) {
	w.s = s
	for i := 0; i < len(s); {
		if byteClass[s[i]]&wordByte == 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && byteClass[s[j]]&wordByte != 0 {
			j++
		}
		w.spans = append(w.spans, [2]int32{int32(i), int32(j)})
		i = j
	}
}

// holds reports whether the words of the string hold skel in order, its
// anchor (word a) in word n: each other word of skel ends a word of the
// string (or, inside, lies in one), the earlier ones in earlier words, the
// later ones in later words.
func (w *wordList) holds(skel []string, a, n int, inside bool) bool {
	m := n - 1
	for k := a - 1; k >= 0; k-- {
		for m >= 0 && !w.has(m, skel[k], inside) {
			m--
		}
		if m < 0 {
			return false
		}
		m--
	}
	m = n + 1
	for k := a + 1; k < len(skel); k++ {
		for m < len(w.spans) && !w.has(m, skel[k], inside) {
			m++
		}
		if m == len(w.spans) {
			return false
		}
		m++
	}
	return true
}

// has reports whether word m of the string ends with word (or holds it,
// inside).
func (w *wordList) has(m int, word string, inside bool) bool {
	sp := w.spans[m]
	s := w.s[sp[0]:sp[1]]
	if len(s) < len(word) {
		return false
	}
	if !inside {
		return equalFolded(s[len(s)-len(word):], word)
	}
	for k := 0; k+len(word) <= len(s); k++ {
		if equalFolded(s[k:k+len(word)], word) {
			return true
		}
	}
	return false
}

// markGroup marks every blob of group g (numbered parts first, then
// skeletons), once.
func (x *Index) markGroup(g int, gr *group) {
	for _, id := range gr.ids {
		x.mark(id)
	}
	w, bit := &x.done[g>>5], uint32(1)<<(g&31)
	atomic.OrUint32(w, bit)
}

func (x *Index) isDone(g int) bool {
	return atomic.LoadUint32(&x.done[g>>5])&(1<<(g&31)) != 0
}

// hashFolded hashes b folded to lower case, as anchorsEndingAt does byte by
// byte from the end; the tables are built with it from their (folded) keys.
func hashFolded[T string | []byte](seed uint64, b T) uint64 {
	h := seed
	for k := len(b) - 1; k >= 0; k-- {
		h = hashStep(h, b[k])
	}
	return hashFinish(h, len(b))
}

func hashStep(h uint64, c byte) uint64 { return (h ^ uint64(lower[c])) * 0x9e3779b97f4a7c15 }

func hashFinish(h uint64, n int) uint64 {
	h ^= uint64(n)
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// equalFolded reports whether b, folded to lower case, is key (already
// folded).
func equalFolded(b []byte, key string) bool {
	if len(b) != len(key) {
		return false
	}
	for i := range b {
		if lower[b[i]] != key[i] {
			return false
		}
	}
	return true
}

// lower folds ASCII letters to lower case, by table.
var lower = func() (t [256]byte) {
	for c := range 256 {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	return t
}()

// byteClass says, by table, whether a byte is a word byte (an ASCII letter
// or digit) and whether it is a hex digit: Mark looks at every byte of every
// session string.
var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		if isWordByte(byte(c)) {
			t[c] |= wordByte
		}
		if isHex(byte(c)) {
			t[c] |= hexByte
		}
	}
	return t
}()

const (
	wordByte = 1 << iota
	hexByte
)

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// nameEnds reports whether a name followed by rest ends there, as a reader
// of a path does: rest is empty, or starts, after any dots (the end of a
// sentence), with a byte that is not a letter, a digit, '.', '_' or '-'.
// Followed by anything else, the name is part of a longer name ("ab.png.bak",
// "ab.png-thumb"). migrate's copies are left out of the marking up to such
// an end (gc's CopiedTo): text that goes on keeps its blob.
func nameEnds(rest []byte) bool {
	for len(rest) > 0 && rest[0] == '.' {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return true
	}
	c := rest[0]
	return !(isWordByte(c) || c == '.' || c == '_' || c == '-')
}
