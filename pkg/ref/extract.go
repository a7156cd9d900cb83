package ref

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/jsonwalk"
)

// Extractor finds explicit references in session documents and values.
//
// A string is a reference when
//   - its whole value is a file URI (file:///…, file://localhost/…, Java's
//     file:/…) or a bucket URL (s3://, gs://, azblob://);
//   - its whole value is a path whose base name is a content-addressed blob name;
//   - it sits under a member whose name says it holds a location ("uri", "url",
//     "path", "file_path", "src", …) and its whole value is path-shaped;
//   - it is a "path" (or "key", "object", "name") member of an object that also has
//     a "bucket" member: the pair names one object ({bucket, path});
//   - or, inside longer text, a word that is a URI or a path to a
//     content-addressed name ("saved to /srv/…/inbound/ab12….png").
//
// Paths are taken as the runtimes write them:
//   - A whole value may hold spaces and tabs under a location member
//     ("/home/u/.coffer/channel-media/<hex>.final copy"), and elsewhere when it
//     is an absolute path or file URI to a content-addressed name
//     ("/home/u/My Agent/.forge/files/inbound/ab12….png"). A line break or NUL
//     never belongs to a path, and a value in which white space is followed by
//     another path ("/a.png /b.png") is text.
//   - Non-ASCII characters and "&<>" are ordinary characters of a path value
//     (in text, "<" and ">" end a word, as around <…/ab12….png>).
//   - A file URI's Path is its percent-decoded path, "%2F" decoded to a slash
//     too, so that the resolver judges the path the URI names (a traversal
//     spelled "..%2F" is refused there like any other). A malformed escape, or
//     another host than localhost, makes it no reference.
//   - "~/…" is a RelPath whose Path keeps the "~/" exactly: only a layout
//     knows the home directory.
//   - Links of other schemes (http://localhost/…, https://…) are no store
//     references: the retention matcher keeps their blobs by name.
//   - A Windows path (C:\…, C:/…, \\server\share\…, file:///C:/…) and any path
//     holding a backslash or a NUL names no key of a local store and is not
//     reported, so it can neither resolve to a key nor make a run incomplete.
//   - In text, words end at white space, quotes, brackets, "|", "\" (a JSON
//     escape left in text, as the "…png\n" of forge's compaction summaries),
//     and non-ASCII white space and punctuation ("：", "“"); sentence punctuation
//     after a word is dropped. A word that continues a path with a space in a
//     folder name ("at /home/u/My Agent/.forge/…") is reported with the start of
//     that path when up to three space-separated words lead back to it and it
//     ends in a bare folder name ("My", not "a.png" as in "cp /tmp/a.png
//     inbound/…"); otherwise the word alone ("Agent/.forge/…"), which usually
//     stays unanchored. A file URI written with unescaped spaces
//     ("file:///home/u/My Agent/.coffer/…") is continued the same way. The rest
//     of a link with a space in it is not a path.
//
// JSON held inside a string (a tool call's "arguments", a TEXT column holding JSON)
// is parsed and searched the same way, up to a few levels deep.
//
// An Extractor is not safe for concurrent use; use one per goroutine.
type Extractor struct {
	// Found is called for each reference, in document order.
	Found func(Reference, Place)
	// FoundAt, when set, is called instead of Found, with the place still to
	// be rendered: a caller that lists only a few of the references it is
	// told about asks At.Place for those, and the JSON pointers of the others
	// are never built. Like the At, the Reference is only valid during the
	// call: its strings may be views of the parser's buffer, so that a
	// reference that is only counted costs no copy. A caller that keeps one
	// keeps its Clone.
	FoundAt func(Reference, *At)
	// Text, when set, is called with every decoded string value, every member
	// name and every number, of the document and of JSON embedded in its
	// strings, decoded with its own escapes (the retention matcher tokenises
	// them; see Index.Mark for the further forms it derives). A number whose
	// value is an integer written otherwise (1234567890.0, 1.23456789e9) is
	// given a second time as its integer forms (AppendIntegerForms). A column
	// value is given as it is too. s is only valid during the call.
	Text func(s []byte)
	// Limits bound each document's parse.
	Limits jsonwalk.Limits

	// values is Value's handler, kept for the next value.
	values *docHandler
}

// At is the place of a reference that FoundAt is told about. It is only
// valid during that call.
type At struct {
	w   where
	off int64
	// place is the document's place, or for a reference in embedded JSON
	// its place there; top says whether w is then a string of the document
	// itself.
	place         Place
	embedded, top bool
	ready         bool
}

// Place renders the place (once).
func (a *At) Place() Place {
	if !a.ready {
		if a.embedded {
			a.place.Pointer = joinPointer(a.w.get(), a.place.Pointer, a.top)
		} else {
			a.place.Pointer = a.w.get()
		}
		a.place.Offset = a.off
		a.ready = true
	}
	return a.place
}

// Unit is the place of the document or row the reference is in, without
// where inside it (no Pointer, Offset -1): it costs no rendering.
func (a *At) Unit() Place {
	return Place{Source: a.place.Source, Document: a.place.Document, Table: a.place.Table, Key: a.place.Key, Column: a.place.Column, Offset: -1}
}

// maxEmbedded is how many levels of JSON-inside-a-string are searched.
const maxEmbedded = 4

// Document searches one JSON document (or a stream of JSON values, as in JSON
// Lines). It returns a *jsonwalk.SyntaxError when the input is malformed or ends
// early: references before that point have been reported.
func (e *Extractor) Document(r io.Reader, at Place) error {
	h := &docHandler{e: e, at: at}
	return jsonwalk.New(r, h.walkHandler(), e.Limits).Run()
}

// Value searches one text value (a database column): as JSON when it is a JSON
// object or array, else as plain text.
func (e *Extractor) Value(b []byte, at Place) {
	// A database yields millions of short values: the handler, and the
	// parser of JSON held in them, are kept from one value to the next.
	// (A copy of the Extractor, whose handler's e is the original, makes
	// its own.)
	h := e.values
	if h == nil || h.e != e || h.limits != e.Limits {
		h = &docHandler{e: e, limits: e.Limits}
	}
	e.values = nil // in use
	h.at = at
	if e.Text != nil {
		// The raw text holds every token of the JSON strings inside it too.
		e.Text(b)
	}
	var w where
	if !h.embedded(b, &w, -1) {
		w = where{}
		h.plain(b, nil, &w, -1)
	}
	h.at = Place{}
	e.values = h
}

// objState is what one open object has said so far about a {bucket, path}
// pair. Its buffers are reused from object to object.
type objState struct {
	bucket, pair, pairKey []byte
	hasBucket, hasPair    bool
	pairOff               int64
}

// walkHandler is h, told member names and numbers too when they are wanted.
func (h *docHandler) walkHandler() jsonwalk.Handler {
	if h.e.Text != nil {
		return textHandler{h}
	}
	return h
}

// textHandler passes member names and numbers to Extractor.Text: a file name
// can be a member name, a number can be a file name.
type textHandler struct{ *docHandler }

func (h textHandler) Name(w *jsonwalk.Walker, name []byte) error {
	h.e.Text(name)
	return nil
}

// Number passes the number as written and, when they differ, its integer
// forms: {"media_id": 1234567890.0} names 1234567890.jpg, which no word of
// "1234567890.0" is (see AppendIntegerForms).
func (h textHandler) Number(w *jsonwalk.Walker, num []byte) error {
	h.e.Text(num)
	if h.forms = AppendIntegerForms(h.forms[:0], num); len(h.forms) > 0 {
		h.e.Text(h.forms[1:]) // the forms, separated by spaces
	}
	return nil
}

type docHandler struct {
	e     *Extractor
	at    Place
	level int // embedding level
	objs  []objState
	spot  At          // what FoundAt is given, reused
	sub   *docHandler // the handler of JSON embedded in this level's strings
	buf   collector   // as sub: what it found, reported once the parse succeeded
	walk  *jsonwalk.Walker
	// arena, for JSON embedded in a document whose references go to
	// FoundAt, holds the text of the references found in it until they are
	// reported: one buffer for every level, emptied when the document's next
	// string holding JSON is searched.
	arena *[]byte
	// arenaBuf is the arena, at the document's level.
	arenaBuf []byte
	// forms holds a number's integer forms while Text reads them.
	forms []byte
	// limits are the Limits sub's parser was made with (Value's handler).
	limits jsonwalk.Limits
}

// pointer is the pointer of the walker's value within this level's JSON. For
// embedded JSON the level that holds it puts the pointer of its string
// in front, and a "!" between (see joinPointer).
func (h *docHandler) pointer(w *jsonwalk.Walker) string {
	return w.Pointer()
}

// joinPointer is the pointer of a value found in JSON embedded in the string
// at outer: "/messages/1/tool_calls/0/function/arguments!/path". In a whole
// column value (outer "" at the top level) it is the inner pointer alone.
func joinPointer(outer, inner string, top bool) string {
	if top && outer == "" {
		return inner
	}
	return outer + "!" + inner
}

// where is the place of the string being searched. Its JSON pointer is only
// rendered when a reference is found there, and then only once. It is passed by
// value so that the common case — nothing found — allocates nothing.
type where struct {
	h      *docHandler
	w      *jsonwalk.Walker // nil: a whole column value, pointer ""
	member []byte           // a pair member's name, appended to the walker's pointer
	memo   string
	done   bool
}

func (p *where) get() string {
	if !p.done {
		if p.w != nil {
			p.memo = p.h.pointer(p.w)
			if p.member != nil {
				p.memo += "/" + escapePointer(string(p.member))
			}
		}
		p.done = true
	}
	return p.memo
}

func (h *docHandler) Begin(w *jsonwalk.Walker, kind byte) error {
	if len(h.objs) < cap(h.objs) {
		h.objs = h.objs[:len(h.objs)+1]
		o := &h.objs[len(h.objs)-1]
		o.hasBucket, o.hasPair = false, false
	} else {
		h.objs = append(h.objs, objState{})
	}
	return nil
}

func (h *docHandler) End(w *jsonwalk.Walker, kind byte) error {
	o := &h.objs[len(h.objs)-1]
	h.objs = h.objs[:len(h.objs)-1]
	if !o.hasPair {
		return nil
	}
	// The walker now points at the object that held the pair.
	at := where{h: h, w: w, member: o.pairKey}
	if o.hasBucket && len(o.bucket) > 0 {
		p, b := h.text(o.pair), h.text(o.bucket)
		h.emit(Reference{Raw: b + ":" + p, Kind: BucketPair, Path: p, Bucket: b}, &at, o.pairOff)
		return nil
	}
	// No bucket beside it: an ordinary member after all.
	if !h.embedded(o.pair, &at, o.pairOff) {
		h.plain(o.pair, o.pairKey, &at, o.pairOff)
	}
	return nil
}

func (h *docHandler) String(w *jsonwalk.Walker, s []byte, off int64) error {
	if h.e.Text != nil {
		h.e.Text(s)
	}
	key := w.Key()
	if len(key) > 0 && len(h.objs) > 0 {
		o := &h.objs[len(h.objs)-1]
		switch {
		case equalFold(key, "bucket"):
			o.bucket, o.hasBucket = append(o.bucket[:0], s...), true
			return nil
		case isPairKey(key):
			o.pair, o.pairKey, o.pairOff, o.hasPair = append(o.pair[:0], s...), append(o.pairKey[:0], key...), off, true
			return nil
		}
	}
	at := where{h: h, w: w}
	if h.embedded(s, &at, off) {
		return nil
	}
	h.plain(s, key, &at, off)
	return nil
}

// text is b as the string of a reference about to be reported: a view of b
// itself when references go to FoundAt, which are only valid during the call,
// else a copy. Embedded JSON's references are collected before they are
// reported: its handler has no FoundAt, and copies them into the arena when
// they go to FoundAt in the end, else each into a string of its own.
func (h *docHandler) text(b []byte) string {
	switch {
	case h.e.FoundAt != nil:
		return view(b)
	case h.arena != nil:
		// A view of what is appended is never written again while it is
		// used: an append that outgrows the buffer leaves it in the old one.
		n := len(*h.arena)
		*h.arena = append(*h.arena, b...)
		return view((*h.arena)[n:])
	}
	return string(b)
}

// embedded searches s as JSON when it looks like a JSON object or array and parses
// as one; it reports whether it did.
func (h *docHandler) embedded(s []byte, at *where, off int64) bool {
	// Most strings start with a letter: neither a bracket nor white space
	// (ASCII, or a non-ASCII character TrimSpace may drop).
	if len(s) < 2 || s[0] != '{' && s[0] != '[' && ' ' < s[0] && s[0] < utf8.RuneSelf {
		return false
	}
	t := bytes.TrimSpace(s)
	if h.level >= maxEmbedded || len(t) < 2 {
		return false
	}
	if !(t[0] == '{' && t[len(t)-1] == '}') && !(t[0] == '[' && t[len(t)-1] == ']') {
		return false
	}
	// Parse into a buffer first: prose that merely starts with "{" must not
	// report half its references, then fall back to plain text and report them again.
	inner := h.sub
	if inner == nil {
		// One handler per level, reused: a session holds thousands of tool
		// calls whose arguments are JSON.
		inner = &docHandler{level: h.level + 1}
		inner.e = &Extractor{Found: inner.buf.add, Text: h.e.Text, Limits: h.e.Limits}
		inner.walk = jsonwalk.NewBytes(nil, inner.walkHandler(), h.e.Limits)
		h.sub = inner
	}
	inner.at, inner.objs = h.at, inner.objs[:0]
	inner.e.Text = h.e.Text // a kept handler serves the Extractor as it is now
	switch {
	case h.level > 0:
		inner.arena = h.arena
	case h.e.FoundAt != nil:
		// The references of the last string holding JSON were reported.
		h.arenaBuf = h.arenaBuf[:0]
		inner.arena = &h.arenaBuf
	default:
		inner.arena = nil // Found keeps what it is given
	}
	c := &inner.buf
	c.found = c.found[:0]
	// Text sees the inner strings as they decode, even when the parse fails
	// later: a string that only looked like JSON keeps everything it names.
	inner.walk.ResetBytes(t)
	if err := inner.walk.Run(); err != nil {
		return false
	}
	top := h.level == 0
	for _, f := range c.found {
		if h.e.FoundAt != nil {
			// The pointer of the string holding the JSON is rendered only
			// if the caller asks for the place.
			h.spot = At{w: *at, off: off, embedded: true, top: top, place: f.place}
			h.e.FoundAt(f.ref, &h.spot)
			continue
		}
		p := f.place
		p.Pointer = joinPointer(at.get(), p.Pointer, top)
		p.Offset = off
		h.e.Found(f.ref, p)
	}
	return true
}

type found struct {
	ref   Reference
	place Place
}

type collector struct{ found []found }

func (c *collector) add(r Reference, p Place) { c.found = append(c.found, found{r, p}) }

// plain searches a string that is not JSON.
func (h *docHandler) plain(s []byte, key []byte, at *where, off int64) {
	t := trimSpace(s)
	if len(t) == 0 {
		return
	}
	atLocation := isLocationKey(key)
	if atLocation && len(t) < len(s) && trailingBlanks(s, t) && (startsAbsolute(t) || bytes.HasPrefix(t, []byte("~/"))) {
		// The whole value is the name the runtime wrote: coffer keeps the
		// user's suffix as it was, "scan.pdf " too.
		t = s
	}
	// The white space trimmed holds no slash: t has one when s has.
	slashed := bytes.IndexByte(t, '/') >= 0
	// Only a value that could be a reference by itself is converted and
	// classified: most strings are prose, or short words without a slash.
	if sh, ok := mayBeWhole(t, atLocation, slashed); ok {
		if r, ok := classifyShaped(h.text(t), atLocation, sh); ok {
			h.emit(r, at, off)
			return
		}
	}
	if slashed {
		h.words(s, at, off)
	}
}

// trailingBlanks reports whether s is t followed by spaces, tabs and
// no-break spaces only (no line break): blanks a file name may end with.
func trailingBlanks(s, t []byte) bool {
	if !bytes.HasPrefix(s, t) {
		return false
	}
	rest := s[len(t):]
	for len(rest) > 0 {
		switch {
		case rest[0] == ' ' || rest[0] == '\t':
			rest = rest[1:]
		case bytes.HasPrefix(rest, []byte("\u00a0")):
			rest = rest[len("\u00a0"):]
		default:
			return false
		}
	}
	return true
}

// trimSpace is bytes.TrimSpace, without its call for the usual string, which
// starts and ends with a printable ASCII byte.
func trimSpace(s []byte) []byte {
	if len(s) > 0 && ' ' < s[0] && s[0] < utf8.RuneSelf && ' ' < s[len(s)-1] && s[len(s)-1] < utf8.RuneSelf {
		return s
	}
	return bytes.TrimSpace(s)
}

// mayBeWhole is plain's cheap test of whether t, a whole trimmed value, can be
// a reference by itself, before it is converted for classify, which decides;
// it hands on the shape it read. Prose fails it at its first space. slashed
// says whether t holds a slash.
func mayBeWhole(t []byte, atLocation, slashed bool) (shape, bool) {
	if len(t) > maxRefLen {
		return 0, false
	}
	if !atLocation && !startsAbsolute(t) {
		// A relative path or a URI outside a location member has no space.
		if (len(t) < blobname.DigestLen && !slashed) || hasSpaceOrBreak(t) {
			return 0, false
		}
		return schemeOrName(t, scanPath(t))
	}
	sh := scanPath(t)
	switch {
	case sh&broken != 0:
		return 0, false
	case sh&spaced == 0:
		if atLocation {
			return sh, true
		}
		return schemeOrName(t, sh)
	case spaceBeforePath(t):
		return 0, false // more than one path, or prose that names one
	}
	// Outside a location member, a value with spaces is a path only when it is
	// an absolute path or file URI to a content-addressed name.
	return sh, atLocation || contentAddressedBase(t)
}

// schemeOrName is mayBeWhole's last test of a value outside a location
// member: without a scheme it is a reference only by a content-addressed
// base name ("image/png" and "src/main.go" are not), as classify decides.
// A base name found to be one is marked in the shape, so that classify need
// not look again.
func schemeOrName(t []byte, sh shape) (shape, bool) {
	if bytes.IndexByte(t, ':') >= 0 {
		return sh, true
	}
	if isBlobName(view(t)) {
		return sh | named, true
	}
	return 0, false
}

// hasSpaceOrBreak reports whether b holds white space or a NUL; it stops at the
// first.
func hasSpaceOrBreak(b []byte) bool {
	for _, c := range b {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0 {
			return true
		}
	}
	return false
}

// shape is what scanPath found in a string.
type shape uint8

const (
	spaced    shape = 1 << iota // a space or tab, which a path may hold
	broken                      // a line break or NUL, which end a path
	backslash                   // a backslash, which no store key holds
	named                       // (set by mayBeWhole) the base name is content-addressed
)

// shapeOf is scanPath's table: the shape bits of each byte.
var shapeOf = [256]shape{' ': spaced, '\t': spaced, '\n': broken, '\r': broken, 0: broken, '\\': backslash}

// scanPath reads b once for what decides its shape. Every byte with a shape
// is a control character, a space or a backslash, so eight bytes at a time a
// word without one (most of a path) is passed over, and only a word with one
// is read by table.
func scanPath[T string | []byte](b T) shape {
	var sh shape
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		if !hasByteBelow(x, '!') && !hasZeroByte(x^backslashes8) {
			continue
		}
		for j := i; j < i+8; j++ {
			sh |= shapeOf[b[j]]
		}
	}
	for ; i < len(b); i++ {
		sh |= shapeOf[b[i]]
	}
	return sh
}

const (
	ones8        = 0x0101010101010101
	highBits8    = 0x8080808080808080
	backslashes8 = '\\' * ones8
)

// hasByteBelow reports whether one of the eight bytes of x is below n
// (n <= 0x80): the borrow of subtracting n from a byte sets its high bit
// only when it is below n, and bytes with the high bit already set are left
// out.
func hasByteBelow(x uint64, n byte) bool {
	return (x-uint64(n)*ones8)&^x&highBits8 != 0
}

// hasZeroByte reports whether one of the eight bytes of x is zero.
func hasZeroByte(x uint64) bool { return hasByteBelow(x, 1) }

// spaceBeforePath reports whether a space or tab in b is followed by the start
// of another path ("/…" or "~/…"): "cp /a.png /b.png" is two paths, not one with
// a space in it.
func spaceBeforePath[T string | []byte](b T) bool {
	for i := 0; i+1 < len(b); i++ {
		if (b[i] == ' ' || b[i] == '\t') && (b[i+1] == '/' || (b[i+1] == '~' && i+2 < len(b) && b[i+2] == '/')) {
			return true
		}
	}
	return false
}

// startsAbsolute reports whether b starts like an absolute path: "/", "~/" or
// a file URI.
func startsAbsolute[T string | []byte](b T) bool {
	return len(b) > 0 && b[0] == '/' || len(b) > 1 && b[0] == '~' && b[1] == '/' || hasFileScheme(b)
}

func hasFileScheme[T string | []byte](b T) bool {
	return len(b) >= 5 && (b[0]|0x20) == 'f' && (b[1]|0x20) == 'i' && (b[2]|0x20) == 'l' && (b[3]|0x20) == 'e' && b[4] == ':'
}

// contentAddressedBase is a cheap test of whether the base name of b can be a
// content-addressed name (blobname.Parse decides): 64 lower-case hex digits,
// then the end or a dot.
func contentAddressedBase(b []byte) bool {
	base := b[bytes.LastIndexByte(b, '/')+1:]
	if len(base) < blobname.DigestLen || len(base) > blobname.DigestLen && base[blobname.DigestLen] != '.' {
		return false
	}
	for _, c := range base[:blobname.DigestLen] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// words finds URIs and paths to content-addressed names inside longer text.
//
// A word is a run of characters between word breaks that contains a slash. A
// word that is a relative path right after a space ("Agent/.forge/…/ab12….png"
// in "saved to /home/u/My Agent/.forge/…") may be the rest of a path with a space
// in a folder name: when up to three space-separated words before it lead back
// to one that starts an absolute path and ends in a bare folder name ("My"),
// the whole run is tried first. A file URI that ends in a bare folder name is
// continued the same way, forward.
func (h *docHandler) words(s []byte, at *where, off int64) {
	for pos := 0; pos < len(s); {
		i := bytes.IndexByte(s[pos:], '/')
		if i < 0 {
			return
		}
		i += pos
		start, end := wordStart(s, i), wordEnd(s, i)
		pos = end
		word := trimWord(s[start:end])
		uri := bytes.IndexByte(word, ':') >= 0
		if len(word) > maxRefLen || (!uri && !contentAddressedBase(word)) {
			continue // neither a URI nor a path to a content-addressed name
		}
		if uri && len(word) == end-start && hasFileScheme(word) {
			// A file URI written with its spaces unescaped: "file:///home/u/My Agent/…".
			if to, ok := pathEnd(s, end, word); ok {
				if run := trimWord(s[start:to]); len(run) <= maxRefLen {
					// The run has the shape of one path; its name need not be
					// content-addressed, as a URI's need not.
					if r, ok := fileURI(h.text(run), true, true); ok {
						h.emit(r, at, off)
						pos = to
						continue
					}
				}
			}
		}
		if !uri {
			switch from, how := pathStart(s, start, word); how {
			case inLink:
				continue // the rest of a link with a space in it
			case joined:
				if run := trimWord(s[from:end]); len(run) <= maxRefLen {
					if r, ok := classify(h.text(run), false); ok {
						h.emit(r, at, off)
						continue
					}
				}
			}
		}
		if r, ok := classify(h.text(word), false); ok {
			h.emit(r, at, off)
		}
	}
}

// trimWord drops the sentence punctuation that may follow a word.
func trimWord(w []byte) []byte {
	for len(w) > 0 && isTrailingPunct(w[len(w)-1]) {
		w = w[:len(w)-1]
	}
	return w
}

// isTrailingPunct reports whether trimWord drops c. (bytes.TrimRight built
// its set of bytes again on every call.)
func isTrailingPunct(c byte) bool {
	switch c {
	case '.', ',', ':', ';', '!', '?':
		return true
	}
	return false
}

// wordStart returns where the word around s[i] starts. A JSON escape that
// precedes it in text holding escaped JSON ("…\n/srv/…", "\u0022/srv/…") is
// not part of it: the backslash is a break, and the escape's letters are dropped.
func wordStart(s []byte, i int) int {
	for i > 0 {
		c := s[i-1]
		if c < utf8.RuneSelf {
			if isWordBreak(c) {
				break
			}
			i--
			continue
		}
		r, n := utf8.DecodeLastRune(s[:i])
		if isRuneBreak(r, n) {
			break
		}
		i -= n
	}
	if i > 0 && s[i-1] == '\\' && i < len(s) {
		switch c := s[i]; {
		case c == 'n' || c == 'r' || c == 't' || c == 'b' || c == 'f':
			i++
		case c == 'u' && i+5 <= len(s) && hexDigits(s[i+1:i+5]):
			i += 5
		}
	}
	return i
}

// wordEnd returns where the word around s[i] ends.
func wordEnd(s []byte, i int) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if isWordBreak(c) {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if isRuneBreak(r, n) {
			break
		}
		i += n
	}
	return i
}

func hexDigits(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c|0x20 < 'a' || c|0x20 > 'f') {
			return false
		}
	}
	return true
}

// How pathStart found the word to continue.
const (
	alone  = iota // the word stands by itself
	joined        // the word continues a path that starts earlier
	inLink        // the word continues a link (http://…): not a path
)

// maxJoined is how many space-separated words may lie between the start of an
// absolute path and a word that continues it ("/Users/j/Google Drive - Work/…").
const maxJoined = 3

// pathStart says whether word, which starts at s[start], continues a path with
// spaces that starts earlier in s, and where that path starts.
func pathStart(s []byte, start int, word []byte) (int, int) {
	if word[0] == '/' || word[0] == '.' || word[0] == '~' {
		return 0, alone // a path of its own
	}
	j := start
	for n := 0; n <= maxJoined; n++ {
		if j < 2 || s[j-1] != ' ' {
			return 0, alone
		}
		from := wordStart(s, j-1)
		tok := s[from : j-1]
		if len(tok) == 0 || len(trimWord(tok)) != len(tok) {
			return 0, alone // two spaces, or the end of a sentence
		}
		if bytes.IndexByte(tok, '/') >= 0 {
			switch {
			case hasFileScheme(tok):
				return 0, alone // words continues a file URI forward, if at all
			case bytes.Contains(tok, []byte("://")):
				if n == 0 {
					return 0, inLink
				}
				return 0, alone
			case startsAbsolute(tok) && bareFolder(tok) && !contentAddressedBase(tok):
				return from, joined
			}
			return 0, alone // a relative path, or a whole path of its own
		}
		if isShellWord(tok) {
			return 0, alone
		}
		j = from
	}
	return 0, alone
}

// pathEnd says whether the file URI word, which ends at s[end], continues
// after a space in a folder name, and where the run ends: up to three
// space-separated words may lie between it and a relative path that ends it
// ("file:///home/u/My Agent/.coffer/…").
func pathEnd(s []byte, end int, word []byte) (int, bool) {
	if !bareFolder(word) {
		return 0, false
	}
	j := end
	for n := 0; n <= maxJoined; n++ {
		if j+1 >= len(s) || s[j] != ' ' {
			return 0, false
		}
		to := wordEnd(s, j+1)
		tok := s[j+1 : to]
		if len(tok) == 0 {
			return 0, false
		}
		if bytes.IndexByte(tok, '/') >= 0 {
			if tok[0] == '/' || tok[0] == '.' || tok[0] == '~' || bytes.IndexByte(tok, ':') >= 0 {
				return 0, false // a path or link of its own
			}
			return to, true
		}
		if len(trimWord(tok)) != len(tok) || isShellWord(tok) {
			return 0, false
		}
		j = to
	}
	return 0, false
}

// bareFolder reports whether the last segment of p, a path or URI cut at a
// space, looks like the start of a folder name rather than a file's: it is not
// empty and has no dot ("/home/u/My" in "/home/u/My Agent/…", but not
// "/tmp/a.png" in "cp /tmp/a.png inbound/…").
func bareFolder(p []byte) bool {
	seg := p[bytes.LastIndexByte(p, '/')+1:]
	return len(seg) > 0 && bytes.IndexByte(seg, '.') < 0
}

// isShellWord recognises the words of a command line that never belong to a
// folder name: "&&", an option ("-v"), a variable ("$HOME", "X=1").
func isShellWord(tok []byte) bool {
	return string(tok) == "&&" || string(tok) == "&" || (len(tok) > 1 && tok[0] == '-') || tok[0] == '$' || bytes.IndexByte(tok, '=') >= 0
}

func isWordBreak(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', 0, '"', '\'', '`', '(', ')', '<', '>', '[', ']', '{', '}', ',', ';', '|', '\\':
		return true
	}
	return false
}

// isRuneBreak reports whether r, a non-ASCII character n bytes long, breaks
// words: white space and punctuation such as "：" "，" "“" "”" "「". Letters,
// dashes and bytes that are not UTF-8 belong to the word.
func isRuneBreak(r rune, n int) bool {
	if r == utf8.RuneError && n <= 1 {
		return false
	}
	return unicode.IsSpace(r) || unicode.In(r, unicode.Ps, unicode.Pe, unicode.Pi, unicode.Pf, unicode.Po)
}

// emit reports r, found in the string at.
func (h *docHandler) emit(r Reference, at *where, off int64) {
	if h.e.FoundAt != nil {
		h.spot = At{w: *at, off: off, place: h.at}
		h.e.FoundAt(r, &h.spot)
		return
	}
	p := h.at
	p.Pointer = at.get()
	p.Offset = off
	h.e.Found(r, p)
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// maxRefLen bounds the length of a string that can be a reference by itself.
const maxRefLen = 4096

// locationKeys are the member names, lower case with "_" for "-", whose
// values are locations.
var locationKeys = []string{"uri", "url", "path", "file", "filepath", "file_path", "local_path", "localpath", "src", "href", "location", "storage_path", "object_key", "media_uri", "mediauri", "media_path"}

// isLocationKey reports whether k is one of locationKeys in any case, with "-"
// for "_". It is asked about every member holding a string: the switch,
// which the compiler turns into a search by length and content, takes a few
// nanoseconds where a loop over the list took tens.
func isLocationKey(k []byte) bool {
	if len(k) < 3 || len(k) > 16 {
		return false
	}
	switch k[0] | 0x20 { // the first letters of locationKeys
	case 'u', 'p', 'f', 's', 'h', 'l', 'o', 'm':
	default:
		return false
	}
	var buf [16]byte
	n := copy(buf[:], k)
	for i, c := range buf[:n] {
		switch {
		case c == '-':
			buf[i] = '_'
		case 'A' <= c && c <= 'Z':
			buf[i] = c + 'a' - 'A'
		}
	}
	switch string(buf[:n]) {
	case "uri", "url", "path", "file", "filepath", "file_path", "local_path", "localpath", "src", "href", "location", "storage_path", "object_key", "media_uri", "mediauri", "media_path":
		return true
	}
	return false
}

// pairKeys are the member names, lower case, that name an object beside a
// "bucket" member.
var pairKeys = []string{"path", "key", "object", "object_key", "object_name", "name"}

// isPairKey reports whether k is one of pairKeys in any case.
func isPairKey(k []byte) bool {
	if len(k) < 3 || len(k) > 11 {
		return false
	}
	switch k[0] | 0x20 { // the first letters of pairKeys
	case 'p', 'k', 'o', 'n':
	default:
		return false
	}
	var buf [11]byte
	n := copy(buf[:], k)
	for i, c := range buf[:n] {
		if 'A' <= c && c <= 'Z' {
			buf[i] = c + 'a' - 'A'
		}
	}
	switch string(buf[:n]) {
	case "path", "key", "object", "object_key", "object_name", "name":
		return true
	}
	return false
}

// isBlobName reports whether the base name of p is a content-addressed name,
// as blobname.Parse would. It is asked about every value that may be a
// path: the base name is found by one search of the bytes that can hold it.
func isBlobName(p string) bool {
	// The base name as path.Base has it: trailing slashes dropped (the
	// bases path.Base returns for "" and "/…/" are too short to matter).
	end := len(p)
	for end > 0 && p[end-1] == '/' {
		end--
	}
	// A content-addressed base name starts within its longest length of
	// the end: a slash before that window leaves a longer base name.
	lo := max(0, end-(blobname.DigestLen+blobname.MaxExtLen+1))
	slash := strings.LastIndexByte(p[lo:end], '/')
	if slash < 0 && lo > 0 {
		return false // longer than any content-addressed name
	}
	_, _, ok := blobname.ParseBase(p[lo+slash+1 : end])
	return ok
}

// view is b as a string without a copy, for a call that does not keep it.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func equalFold(b []byte, s string) bool {
	return len(b) == len(s) && strings.EqualFold(string(b), s)
}

// bucketSchemes are the URL schemes whose references name a bucket object
// (s3://bucket/key): those of store's scheme table for which
// store.NamesBucket holds, as a test checks. They are repeated here because
// ref does not import store.
var bucketSchemes = []string{"s3", "gs", "azblob"}

// classify decides whether v, a whole value, is a reference. atLocation says
// it sits under a member named like a location, which admits any path shape.
func classify(v string, atLocation bool) (Reference, bool) {
	return classifyShaped(v, atLocation, scanPath(v))
}

// classifyShaped is classify given the shape of v.
func classifyShaped(v string, atLocation bool, sh shape) (Reference, bool) {
	if len(v) == 0 || len(v) > maxRefLen {
		return Reference{}, false
	}
	withSpace, withBackslash := sh&spaced != 0, sh&backslash != 0
	if sh&broken != 0 || withSpace && spaceBeforePath(v) {
		return Reference{}, false
	}
	if hasFileScheme(v) {
		return fileURI(v, atLocation, withSpace)
	}
	if i := strings.Index(v, "://"); i > 0 {
		scheme := strings.ToLower(v[:i])
		if !contains(bucketSchemes, scheme) || (withSpace && !atLocation) {
			return Reference{}, false // http(s) links and the like are not store references
		}
		u, err := url.Parse(v)
		if err != nil || u.Host == "" || !canBeKey(u.Path) {
			return Reference{}, false
		}
		return Reference{Raw: v, Kind: BucketURL, Scheme: scheme, Bucket: u.Host, Path: strings.TrimPrefix(u.Path, "/")}, true
	}
	if strings.Contains(v, ":") && !atLocation {
		return Reference{}, false
	}
	if withBackslash || isDrivePath(v) {
		return Reference{}, false // a Windows path names no key of a local store
	}
	blobName := sh&named != 0 || isBlobName(v)
	absolute := strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/")
	switch {
	case withSpace && !atLocation && !(absolute && blobName):
		return Reference{}, false
	case withSpace && !absolute && !blobName && !spaceFreeExt(v):
		return Reference{}, false // "see a/b for details"
	case !blobName && !atLocation:
		return Reference{}, false
	case atLocation && !blobName && !looksLikeFile(v, absolute):
		return Reference{}, false
	}
	kind := RelPath // "~/…" too: the resolver knows the home directory, or not
	if strings.HasPrefix(v, "/") {
		kind = AbsPath
	}
	return Reference{Raw: v, Kind: kind, Path: v}, true
}

// fileURI classifies v, which starts with "file:". Its Path is the decoded
// path: every escape is decoded, "%2F" too, so that the resolver sees the path
// the URI names ("…/inbound%2Fab….png" is ".../inbound/ab….png", and
// "..%2F..%2Fetc" is a traversal the resolver refuses). A malformed escape makes
// v no reference at all.
func fileURI(v string, atLocation, spaced bool) (Reference, bool) {
	u, err := url.Parse(v)
	if err != nil || !strings.HasPrefix(u.Path, "/") || (u.Host != "" && !strings.EqualFold(u.Host, "localhost")) {
		return Reference{}, false // another host's file, or "file:x" without a path
	}
	p := u.Path
	if !canBeKey(p) || isDrivePath(p[1:]) {
		return Reference{}, false // file:///C:/… is a Windows path
	}
	if spaced && !atLocation {
		if !isBlobName(p) {
			return Reference{}, false
		}
	}
	return Reference{Raw: v, Kind: FileURI, Path: p}, true
}

// canBeKey reports whether a path can name a key of a store at all: no store
// key holds a backslash or a NUL (a Windows path, "\\server\share\x.png",
// or text with escapes left in it).
func canBeKey(p string) bool {
	return strings.IndexByte(p, '\\') < 0 && strings.IndexByte(p, 0) < 0
}

// isDrivePath recognises a Windows drive path: "C:", "C:/…", "C:\…".
func isDrivePath(p string) bool {
	return len(p) >= 2 && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z') && p[1] == ':' && (len(p) == 2 || p[2] == '/' || p[2] == '\\')
}

// spaceFreeExt reports whether v's base name has an extension without white
// space in it, as a relative path with a space in a folder name has
// ("My Agent/.forge/files/x.png").
func spaceFreeExt(v string) bool {
	ext := path.Ext(v)
	return len(ext) > 1 && !strings.ContainsAny(ext, " \t")
}

// looksLikeFile admits a location value that names a file: a path with a slash, or
// a bare name with an extension. It keeps values such as "messages", "#top" or
// a relative link's "img.png?v=2" out; an absolute path (or "~/…") is a file
// path whatever its name holds: coffer names a download by a uuid and the
// user's own suffix, "<uuid>.v1#draft?x=1" too.
func looksLikeFile(v string, absolute bool) bool {
	if !absolute && strings.ContainsAny(v, "#?*") {
		return false
	}
	if strings.Contains(v, "/") {
		return true
	}
	ext := path.Ext(v)
	return len(ext) > 1 && len(ext) < len(v)
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// IsSyntax reports whether err is malformed or truncated JSON.
func IsSyntax(err error) bool {
	var se *jsonwalk.SyntaxError
	return errors.As(err, &se)
}
