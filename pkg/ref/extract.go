package ref

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/jsonwalk"
)

// Extractor finds explicit references in session documents and values.
//
// A string is a reference when
//   - its whole value is a file:// URI or a bucket URL (s3://, gs://, azblob://);
//   - its whole value is a path (no white space) whose base name is a
//     content-addressed blob name;
//   - it sits under a member whose name says it holds a location ("uri", "url",
//     "path", "file", "src", …) and its whole value is path-shaped;
//   - it is a "path" (or "key", "object", "name") member of an object that also has
//     a "bucket" member: the pair names one object ({bucket, path});
//   - or, inside longer text, a word that is a URI or a path to a
//     content-addressed name ("saved to /srv/…/inbound/ab12….png").
//
// JSON held inside a string (a tool call's "arguments", a TEXT column holding JSON)
// is parsed and searched the same way, up to a few levels deep.
//
// An Extractor is not safe for concurrent use; use one per goroutine.
type Extractor struct {
	// Found is called for each reference, in document order.
	Found func(Reference, Place)
	// Text, when set, is called with every decoded string value, every member
	// name and every number, of the document and of JSON embedded in its
	// strings, decoded with its own escapes (the retention matcher tokenises
	// them; see Index.Mark for the further forms it derives). A column value
	// is given as it is too. s is only valid during the call.
	Text func(s []byte)
	// Limits bound each document's parse.
	Limits jsonwalk.Limits
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
	h := &docHandler{e: e, at: at}
	if e.Text != nil {
		// The raw text holds every token of the JSON strings inside it too.
		e.Text(b)
	}
	if h.embedded(b, &where{}, -1) {
		return
	}
	h.plain(b, nil, &where{}, -1)
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

func (h textHandler) Number(w *jsonwalk.Walker, num []byte) error {
	h.e.Text(num)
	return nil
}

type docHandler struct {
	e     *Extractor
	at    Place
	outer *where // for embedded JSON: the string that holds it
	level int    // embedding level
	objs  []objState
}

func (h *docHandler) pointer(w *jsonwalk.Walker) string {
	if h.outer == nil {
		return w.Pointer()
	}
	return h.outer.get() + "!" + w.Pointer()
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
		p, b := string(o.pair), string(o.bucket)
		h.emit(Reference{Raw: b + ":" + p, Kind: BucketPair, Path: p, Bucket: b}, at.get(), o.pairOff)
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

// embedded searches s as JSON when it looks like a JSON object or array and parses
// as one; it reports whether it did.
func (h *docHandler) embedded(s []byte, at *where, off int64) bool {
	t := bytes.TrimSpace(s)
	if h.level >= maxEmbedded || len(t) < 2 {
		return false
	}
	if !(t[0] == '{' && t[len(t)-1] == '}') && !(t[0] == '[' && t[len(t)-1] == ']') {
		return false
	}
	// Parse into a buffer first: prose that merely starts with "{" must not
	// report half its references, then fall back to plain text and report them again.
	var c collector
	outer := *at
	inner := &docHandler{
		e:     &Extractor{Found: c.add, Text: h.e.Text, Limits: h.e.Limits},
		at:    h.at,
		outer: &outer,
		level: h.level + 1,
	}
	// Text sees the inner strings as they decode, even when the parse fails
	// later: a string that only looked like JSON keeps everything it names.
	if err := jsonwalk.NewBytes(t, inner.walkHandler(), h.e.Limits).Run(); err != nil {
		return false
	}
	for _, f := range c.found {
		if h.outer == nil && outer.get() == "" {
			f.place.Pointer = strings.TrimPrefix(f.place.Pointer, "!")
		}
		f.place.Offset = off
		h.e.Found(f.ref, f.place)
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
	t := bytes.TrimSpace(s)
	if len(t) == 0 {
		return
	}
	atLocation := isLocationKey(key)
	// Only a value that could be a reference by itself is converted and
	// classified: most strings are prose (spaces) or short words without a slash.
	if len(t) <= maxRefLen && (atLocation || len(t) >= blobname.DigestLen || bytes.IndexByte(t, '/') >= 0) && !hasSpace(t) {
		if r, ok := classify(string(t), atLocation); ok {
			h.emit(r, at.get(), off)
			return
		}
	}
	if bytes.IndexByte(s, '/') >= 0 {
		h.words(s, at, off)
	}
}

func hasSpace(b []byte) bool {
	for _, c := range b {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0 {
			return true
		}
	}
	return false
}

// words finds URIs and blob paths inside longer text.
func (h *docHandler) words(s []byte, at *where, off int64) {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '/')
		if i < 0 {
			return
		}
		start := i
		for start > 0 && !isWordBreak(s[start-1]) {
			start--
		}
		end := i
		for end < len(s) && !isWordBreak(s[end]) {
			end++
		}
		word := bytes.TrimRight(s[start:end], ".,:;!?")
		if len(word) > maxRefLen || (bytes.IndexByte(word, ':') < 0 && len(word) < blobname.DigestLen) {
			s = s[end:]
			continue // neither a URI nor a path to a content-addressed name
		}
		if r, ok := classify(string(word), false); ok {
			h.emit(r, at.get(), off)
		}
		s = s[end:]
	}
}

func isWordBreak(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', '(', ')', '<', '>', '[', ']', '{', '}', ',', ';', '|':
		return true
	}
	return false
}

func (h *docHandler) emit(r Reference, pointer string, off int64) {
	p := h.at
	p.Pointer = pointer
	p.Offset = off
	h.e.Found(r, p)
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// maxRefLen bounds the length of a string that can be a reference by itself.
const maxRefLen = 4096

var locationKeys = []string{"uri", "url", "path", "file", "filepath", "file_path", "local_path", "localpath", "src", "href", "location", "storage_path", "object_key", "media_uri", "mediauri", "media_path"}

func isLocationKey(k []byte) bool {
	if len(k) == 0 || len(k) > 16 {
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
	for _, l := range locationKeys {
		if string(buf[:n]) == l {
			return true
		}
	}
	return false
}

var pairKeys = []string{"path", "key", "object", "object_key", "object_name", "name"}

func isPairKey(k []byte) bool {
	for _, p := range pairKeys {
		if equalFold(k, p) {
			return true
		}
	}
	return false
}

func equalFold(b []byte, s string) bool {
	return len(b) == len(s) && strings.EqualFold(string(b), s)
}

var bucketSchemes = []string{"s3", "gs", "azblob"}

// classify decides whether v, a whole value, is a reference. atLocation says
// it sits under a member named like a location, which admits any path shape.
func classify(v string, atLocation bool) (Reference, bool) {
	if len(v) == 0 || len(v) > maxRefLen || strings.ContainsAny(v, " \t\n\r\x00") {
		return Reference{}, false
	}
	if i := strings.Index(v, "://"); i > 0 {
		scheme := strings.ToLower(v[:i])
		switch {
		case scheme == "file":
			u, err := url.Parse(v)
			if err != nil || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
				return Reference{}, false
			}
			return Reference{Raw: v, Kind: FileURI, Path: u.Path}, true
		case contains(bucketSchemes, scheme):
			u, err := url.Parse(v)
			if err != nil || u.Host == "" {
				return Reference{}, false
			}
			return Reference{Raw: v, Kind: BucketURL, Scheme: scheme, Bucket: u.Host, Path: strings.TrimPrefix(u.Path, "/")}, true
		}
		return Reference{}, false
	}
	if strings.Contains(v, ":") && !atLocation {
		return Reference{}, false
	}
	_, blobName := blobname.Parse(v)
	if !blobName && !atLocation {
		return Reference{}, false
	}
	if atLocation && !blobName && !looksLikeFile(v) {
		return Reference{}, false
	}
	kind := RelPath
	if strings.HasPrefix(v, "/") {
		kind = AbsPath
	}
	return Reference{Raw: v, Kind: kind, Path: v}, true
}

// looksLikeFile admits a location value that names a file: a path with a slash, or
// a bare name with an extension. It keeps values such as "messages" or "#top" out.
func looksLikeFile(v string) bool {
	if strings.ContainsAny(v, "#?*") {
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
