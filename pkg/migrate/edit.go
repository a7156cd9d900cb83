package migrate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mediactl/mediactl/pkg/jsonwalk"
	"github.com/mediactl/mediactl/pkg/ref"
)

// Replacer finds, in one session unit (a document or a column value), the
// references to migrated blobs and says how to rewrite them.
//
// It changes bytes only where the reference extractor found a reference and
// only the reference itself: inside JSON, the stored spelling of the
// reference's characters in the string that holds it, found where the
// reference stands as a whole word in the string's decoded text, and replaced
// by the new text spelled the way that string spells characters. Everything
// else — formatting, key order, escapes, other text in the same string —
// stays byte for byte, which is what lets rollback restore the original
// exactly.
type Replacer struct {
	// Resolver places references in the source store.
	Resolver *ref.Resolver
	// Target returns the new reference text for a key of the source store, or
	// false when the key was not migrated (its references stay).
	Target func(key string) (string, bool)
}

// UnitEdits is what Replacer found in one unit.
type UnitEdits struct {
	Edits []Replacement
	// Kept lists, one entry per reference the extractor reported, the
	// references to migrated blobs that could not be rewritten (a {bucket,
	// path} pair, text not found as a whole word), with why: they still point
	// at the source, so those blobs must not be deleted.
	Kept []string
}

// Find returns the replacements for unit. A document that is not valid JSON is
// left alone (an error), since its references could not be placed safely.
//
// Inside JSON, a reference is replaced in the decoded text of the string that
// holds it, at a position where it stands as a whole word, and the changed
// characters are written back in the spelling that string uses (see
// [jsonStyle]): a reference stored as "\/srv\/…", with "\u7b2c" or with
// "\u0026" is rewritten like a plain one. JSON embedded in a string (a tool
// call's "arguments") is decoded, edited and re-encoded level by level, as deep
// as the extractor searches. In a document, only the strings in which the
// extractor found a reference are touched.
//
// Every reference to a migrated blob that is not rewritten is listed in Kept,
// once for each time the extractor reported it, so that one run's count equals
// the next run's.
func (r *Replacer) Find(place ref.Place, unit []byte) (UnitEdits, error) {
	var out UnitEdits
	var refs []foundRef
	ex := ref.Extractor{Found: func(rf ref.Reference, p ref.Place) { refs = append(refs, foundRef{rf, p.Offset}) }}
	document := place.Table == ""
	if document {
		if err := ex.Document(bytes.NewReader(unit), place); err != nil {
			return out, fmt.Errorf("%s: %w (left unchanged)", place, err)
		}
	} else {
		ex.Value(unit, place)
	}
	// The references to rewrite, grouped by the offset of the string that holds
	// them; -1 (one group for the whole unit) when some offset is unknown, as
	// in a column value.
	targets := map[string]string{} // reference text → new text
	groups := map[int64]*refGroup{}
	byOffset := document
	for _, f := range refs {
		status, key := r.Resolver.Resolve(f.ref)
		if status != ref.Inside {
			continue
		}
		to, ok := r.Target(key)
		if !ok {
			continue
		}
		if f.ref.Kind == ref.BucketPair {
			out.Kept = append(out.Kept, f.ref.Raw+" (a {bucket, path} pair names the store, not a URL; not rewritten)")
			continue
		}
		targets[f.ref.Raw] = to
		byOffset = byOffset && f.off >= 0
		groupOf(groups, f.off).add(f.ref.Raw, 1)
	}
	if len(targets) == 0 {
		return out, nil
	}
	if !byOffset {
		all := &refGroup{}
		for _, off := range sortedOffsets(groups) {
			for _, raw := range groups[off].raws {
				all.add(raw, groups[off].want[raw])
			}
		}
		groups = map[int64]*refGroup{-1: all}
	}
	for _, g := range groups {
		// Longer references first, so that one that contains another wins.
		slices.SortStableFunc(g.raws, func(a, b string) int { return len(b) - len(a) })
	}

	var edited []span
	walked := false
	if document || looksLikeJSON(unit) {
		var err error
		if byOffset {
			edited, err = inDocument(unit, groups, targets)
		} else {
			// A column value holding JSON, which the extractor searches as JSON
			// one level down (or a document whose offsets are not all known).
			level := 1
			if document {
				level = 0
			}
			g := groups[-1]
			e := &stringEditor{raws: g.raws, targets: targets}
			edited, err = e.inJSON(unit, level, &lazyEvidence{text: unit})
			g.notes = e.notes
			for i := range edited {
				edited[i].group = g
			}
		}
		switch {
		case err == nil:
			walked = true
		case document:
			return UnitEdits{}, fmt.Errorf("%s: %w (left unchanged)", place, err)
		default:
			// A value that only looks like JSON is text.
			edited, groups[-1].notes = nil, nil
		}
	}
	if !walked {
		// Plain text: the reference stands in the stored bytes as it is.
		g := groups[-1]
		edited = wordSpans(unit, g.raws, targets)
		for i := range edited {
			edited[i].group = g
		}
	}
	for _, sp := range edited {
		sp.group.got[sp.raw]++
		out.Edits = append(out.Edits, Replacement{At: int64(sp.from), Old: string(unit[sp.from:sp.to]), New: string(sp.new)})
	}
	for _, off := range sortedOffsets(groups) {
		out.Kept = append(out.Kept, groups[off].kept()...)
	}
	slices.SortFunc(out.Edits, func(a, b Replacement) int { return int(a.At - b.At) })
	return out, nil
}

// foundRef is a reference and the offset of the string the extractor found it in.
type foundRef struct {
	ref ref.Reference
	off int64
}

// refGroup is the references the extractor found in one string (or in one
// unit), and what became of them.
type refGroup struct {
	raws  []string       // distinct reference texts
	want  map[string]int // how often the extractor reported each
	got   map[string]int // how many times each was rewritten
	notes []note         // why one could not be, where that is known
}

// note says why a reference could not be rewritten at one place.
type note struct{ raw, why string }

func groupOf(groups map[int64]*refGroup, off int64) *refGroup {
	g := groups[off]
	if g == nil {
		g = &refGroup{}
		groups[off] = g
	}
	return g
}

func (g *refGroup) add(raw string, n int) {
	if g.want == nil {
		g.want, g.got = map[string]int{}, map[string]int{}
	}
	if g.want[raw] == 0 {
		g.raws = append(g.raws, raw)
	}
	g.want[raw] += n
}

// kept lists, once per reference, those the extractor reported more often than
// they were rewritten.
func (g *refGroup) kept() []string {
	var out []string
	for _, raw := range g.raws {
		why := "not found as a whole word in the stored string"
		for _, n := range g.notes {
			if n.raw == raw {
				why = n.why
			}
		}
		for range g.want[raw] - g.got[raw] {
			out = append(out, raw+" ("+why+"; not rewritten)")
		}
	}
	return out
}

func sortedOffsets(groups map[int64]*refGroup) []int64 {
	offs := make([]int64, 0, len(groups))
	for off := range groups {
		offs = append(offs, off)
	}
	slices.Sort(offs)
	return offs
}

// inDocument rewrites the string values of a JSON document that start at the
// offsets where the extractor found references. Spans are in unit coordinates.
func inDocument(unit []byte, groups map[int64]*refGroup, targets map[string]string) ([]span, error) {
	var spans []span
	seen := map[int64]bool{}
	style := &lazyEvidence{text: unit}
	v := &stringVisitor{visit: func(_ []byte, off int64) error {
		g := groups[off]
		if g == nil {
			return nil
		}
		seen[off] = true
		end, ok := stringEnd(unit, off)
		if !ok {
			return fmt.Errorf("no JSON string at offset %d", off)
		}
		e := &stringEditor{raws: g.raws, targets: targets}
		for _, sp := range e.inString(unit[off+1:end], 0, style) {
			sp.from += int(off) + 1
			sp.to += int(off) + 1
			sp.group = g
			spans = append(spans, sp)
		}
		g.notes = e.notes
		return nil
	}}
	if err := jsonwalk.NewBytes(unit, v, jsonwalk.Limits{}).Run(); err != nil {
		return nil, err
	}
	for off, g := range groups {
		if !seen[off] {
			for _, raw := range g.raws {
				g.notes = append(g.notes, note{raw, fmt.Sprintf("no JSON string value starts at offset %d, where it was reported", off)})
			}
		}
	}
	return spans, nil
}

// maxEmbedded is how many levels of JSON held in a string the extractor
// searches (package ref's limit of the same name): a string handled at level
// maxEmbedded is text, not JSON.
const maxEmbedded = 4

// span is one replacement in the coordinates of the text being edited.
type span struct {
	from, to int
	new      []byte
	raw      string    // the reference it rewrites
	group    *refGroup // where it is counted
}

// stringEditor finds references in JSON strings and rewrites them in each
// string's own spelling.
type stringEditor struct {
	raws    []string // longest first
	targets map[string]string
	notes   []note
}

// inString returns the replacements in raw, the stored bytes of one JSON
// string between its quotes, handled at the extractor's level: the string is
// decoded, searched as embedded JSON or as text, and each changed part is
// encoded again in raw's spelling. outer is the JSON text the string stands
// in: its spelling decides what raw itself does not show.
func (e *stringEditor) inString(raw []byte, level int, outer *lazyEvidence) []span {
	s := decodeJSONString(raw)
	if !e.mayHold(s.text) {
		return nil
	}
	spans, ok := e.embedded(s.text, level, outer)
	if !ok {
		spans = wordSpans(s.text, e.raws, e.targets)
	}
	if len(spans) == 0 {
		return nil
	}
	st := jsonStyle{own: observeStyle(raw), outer: outer}
	out := spans[:0]
	for _, sp := range spans {
		from, to := s.rawAt(sp.from), s.rawAt(sp.to)
		if from < 0 || to < 0 {
			e.notes = append(e.notes, note{sp.raw, "it starts or ends inside one escape sequence of the stored string"})
			continue
		}
		out = append(out, span{from: from, to: to, new: st.appendEncoded(nil, sp.new), raw: sp.raw})
	}
	return out
}

// mayHold reports whether text can hold one of the references, as it is or
// under the escapes of JSON embedded in it.
func (e *stringEditor) mayHold(text []byte) bool {
	if bytes.IndexByte(text, '\\') >= 0 {
		return true
	}
	for _, raw := range e.raws {
		if bytes.Contains(text, []byte(raw)) {
			return true
		}
	}
	return false
}

// embedded rewrites text as JSON when the extractor would have searched it as
// JSON: an object or an array that parses, above the depth limit. Spans are in
// text coordinates.
func (e *stringEditor) embedded(text []byte, level int, outer *lazyEvidence) ([]span, bool) {
	if level >= maxEmbedded {
		return nil, false
	}
	t := bytes.TrimSpace(text)
	if len(t) < 2 || !(t[0] == '{' && t[len(t)-1] == '}') && !(t[0] == '[' && t[len(t)-1] == ']') {
		return nil, false
	}
	lead := bytes.Index(text, t)
	notes := len(e.notes)
	spans, err := e.inJSON(t, level+1, &lazyEvidence{text: t, parent: outer})
	if err != nil {
		e.notes = e.notes[:notes]
		return nil, false
	}
	for i := range spans {
		spans[i].from += lead
		spans[i].to += lead
	}
	return spans, true
}

// inJSON rewrites every string value of the JSON text doc, handled at level,
// that holds a reference. Spans are in doc coordinates.
func (e *stringEditor) inJSON(doc []byte, level int, style *lazyEvidence) ([]span, error) {
	var spans []span
	v := &stringVisitor{visit: func(s []byte, off int64) error {
		if !e.mayHold(s) {
			return nil
		}
		end, ok := stringEnd(doc, off)
		if !ok {
			return fmt.Errorf("no JSON string at offset %d", off)
		}
		for _, sp := range e.inString(doc[off+1:end], level, style) {
			sp.from += int(off) + 1
			sp.to += int(off) + 1
			spans = append(spans, sp)
		}
		return nil
	}}
	if err := jsonwalk.NewBytes(doc, v, jsonwalk.Limits{}).Run(); err != nil {
		return nil, err
	}
	return spans, nil
}

// wordSpans finds, in text, the references standing as whole words, longer
// ones first, none overlapping another.
func wordSpans(text []byte, raws []string, targets map[string]string) []span {
	var spans []span
	for _, raw := range raws {
		for _, at := range wordIndexes(text, []byte(raw)) {
			end := at + len(raw)
			if slices.ContainsFunc(spans, func(s span) bool { return at < s.to && s.from < end }) {
				continue
			}
			spans = append(spans, span{from: at, to: end, new: []byte(targets[raw]), raw: raw})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	return spans
}

// looksLikeJSON reports whether a column value holds a JSON object or array,
// as the extractor treats it; the walk over it decides.
func looksLikeJSON(unit []byte) bool {
	t := bytes.TrimSpace(unit)
	return len(t) >= 2 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']')
}

// stringVisitor hands every JSON string value (not member names) to visit,
// decoded, with the offset of its opening quote.
type stringVisitor struct {
	visit func(s []byte, off int64) error
}

func (v *stringVisitor) Begin(*jsonwalk.Walker, byte) error { return nil }
func (v *stringVisitor) End(*jsonwalk.Walker, byte) error   { return nil }
func (v *stringVisitor) String(_ *jsonwalk.Walker, s []byte, off int64) error {
	return v.visit(s, off)
}

// stringEnd returns the index of the closing quote of the JSON string starting
// at off.
func stringEnd(b []byte, off int64) (int64, bool) {
	if off < 0 || off >= int64(len(b)) || b[off] != '"' {
		return 0, false
	}
	for i := off + 1; i < int64(len(b)); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i, true
		}
	}
	return 0, false
}

// decodedString is a JSON string's decoded text and, for every byte of it,
// where its spelling starts in the stored bytes, so that a part of the text
// can be replaced while every other character keeps its bytes.
type decodedString struct {
	text []byte
	// at[i] is the offset in the stored bytes of the character that starts at
	// text[i], -1 for a byte inside a character written as one escape; at[len(text)]
	// is the length of the stored bytes. nil: the string has no escape, text is
	// the stored bytes.
	at []int
}

// rawAt returns the offset in the stored bytes where text[i:] starts, or -1
// when i falls inside an escape.
func (s decodedString) rawAt(i int) int {
	if s.at == nil {
		return i
	}
	return s.at[i]
}

// decodeJSONString decodes the stored bytes of a JSON string (between its
// quotes) with the decoder the reference extractor reads it with
// (jsonwalk.AppendUnescapedOffsets, which decodes as the walker does):
// leniently, an invalid escape keeps its text, an unpaired surrogate becomes
// U+FFFD, and one of U+DC80 to U+DCFF (Python's surrogateescape) the byte it
// stands for. The rewriter must see the text the extractor saw, or it could
// not find the references the extractor reported in it.
func decodeJSONString(raw []byte) decodedString {
	if bytes.IndexByte(raw, '\\') < 0 {
		return decodedString{text: raw}
	}
	text, at := jsonwalk.AppendUnescapedOffsets(make([]byte, 0, len(raw)), make([]int, 0, len(raw)+1), raw)
	return decodedString{text: text, at: append(at, len(raw))}
}

// shortEscape returns the letter of the one-letter escape of c, if it has one.
func shortEscape(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case '\b':
		return 'b', true
	case '\f':
		return 'f', true
	case '\n':
		return 'n', true
	case '\r':
		return 'r', true
	case '\t':
		return 't', true
	}
	return 0, false
}

// spelling is how one character is written in a JSON string.
type spelling uint8

const (
	spellLiteral spelling = iota // as itself
	spellShort                   // \" \\ \/ \b \f \n \r \t
	spellU                       // \uXXXX (two for a character beyond U+FFFF)
	numSpellings
)

// styleEvidence counts how the characters of some JSON text are spelled:
// which encoder wrote it shows in what it escapes. Go's encoding/json writes
// & < > as \u0026 \u003c \u003e and U+2028/U+2029 escaped; Python's json.dumps
// (ensure_ascii) writes every character beyond U+007E as \uXXXX; PHP and
// older encoders write "/" as "\/".
type styleEvidence struct {
	ascii    [128][numSpellings]int32
	nonASCII [numSpellings]int32 // characters from U+0080, but for the two below
	lineSep  [numSpellings]int32 // U+2028 and U+2029
	notUTF8  [numSpellings]int32 // bytes that are not UTF-8, as themselves or as \udc80-\udcff (which nonASCII counts too)
	uEscapes int32               // \u escapes, and of them those with lower- and upper-case hex letters
	lowerHex int32
	upperHex int32
}

// observeStyle counts the spellings in raw, the stored bytes of a JSON string
// or a whole JSON text (outside strings there are no escapes, and the
// characters whose spelling varies do not occur). What an escape stands for
// and where it ends is what the decoder says (see escapeAt).
func observeStyle(raw []byte) *styleEvidence {
	ev := &styleEvidence{}
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw):
			var buf [maxEscape]byte
			text, n := escapeAt(raw[i:], &buf)
			switch {
			case n < 2:
				// Not an escape ("\x", "\u12"): the decoder keeps its text,
				// which shows no spelling.
				n = 2
			case raw[i+1] != 'u':
				ev.ascii[text[0]][spellShort]++
			default:
				ev.hexCase(raw[i+2 : i+6])
				if n > 6 {
					ev.hexCase(raw[i+8 : i+12]) // a surrogate pair
				}
				if r, size := utf8.DecodeRune(text); r == utf8.RuneError && size == 1 {
					// \udc80-\udcff: a byte that is not UTF-8, the way
					// Python's surrogateescape writes it.
					ev.notUTF8[spellU]++
					ev.nonASCII[spellU]++
				} else {
					ev.rune(r, spellU)
				}
			}
			i += n
		case c < utf8.RuneSelf:
			ev.ascii[c][spellLiteral]++
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r != utf8.RuneError || size > 1 {
				ev.rune(r, spellLiteral)
			} else {
				ev.notUTF8[spellLiteral]++
			}
			i += size
		}
	}
	return ev
}

// maxEscape is the length of the longest JSON escape, a surrogate pair
// ("\ud83d\ude00").
const maxEscape = 12

// escapeAt decodes the escape at the start of raw (a backslash and what
// follows) with the decoder the extractor uses, into buf: it returns the
// text the escape stands for and the escape's length in raw, or a length of
// 1 when the backslash starts no escape the decoder reads (it keeps the
// backslash as text).
func escapeAt(raw []byte, buf *[maxEscape]byte) ([]byte, int) {
	window := raw[:min(len(raw), maxEscape)]
	var offs [maxEscape]int
	text, at := jsonwalk.AppendUnescapedOffsets(buf[:0], offs[:0], window)
	// The escape is the first character of the text: it ends where the
	// spelling of the next one starts.
	for k := 1; k < len(at); k++ {
		if at[k] >= 0 {
			return text[:k], at[k]
		}
	}
	return text, len(window)
}

func (ev *styleEvidence) rune(r rune, sp spelling) {
	switch {
	case r < utf8.RuneSelf:
		ev.ascii[r][sp]++
	case r == '\u2028' || r == '\u2029':
		ev.lineSep[sp]++
	default:
		ev.nonASCII[sp]++
	}
}

func (ev *styleEvidence) hexCase(hex []byte) {
	ev.uEscapes++
	for _, c := range hex {
		switch {
		case 'a' <= c && c <= 'f':
			ev.lowerHex++
			return
		case 'A' <= c && c <= 'F':
			ev.upperHex++
			return
		}
	}
}

// allowed reports whether c may be written with sp in valid JSON.
func allowed(c byte, sp spelling) bool {
	switch sp {
	case spellLiteral:
		return c >= 0x20 && c != '"' && c != '\\'
	case spellShort:
		_, ok := shortEscape(c)
		return ok
	}
	return true
}

// majority returns the most frequent of the spellings counted, ties going to
// an escape (short before \u), and false when none was counted.
func majority(counts [numSpellings]int32, ok func(spelling) bool) (spelling, bool) {
	best, n := spellLiteral, int32(0)
	for _, sp := range []spelling{spellShort, spellU, spellLiteral} {
		if ok(sp) && counts[sp] > n {
			best, n = sp, counts[sp]
		}
	}
	return best, n > 0
}

func (ev *styleEvidence) pick(c byte) (spelling, bool) {
	return majority(ev.ascii[c], func(sp spelling) bool { return allowed(c, sp) })
}

// pickHTML decides & < > together: encoders escape all three or none.
func (ev *styleEvidence) pickHTML() (spelling, bool) {
	var sum [numSpellings]int32
	for _, c := range []byte("&<>") {
		for sp := range numSpellings {
			sum[sp] += ev.ascii[c][sp]
		}
	}
	return majority(sum, func(sp spelling) bool { return sp != spellShort })
}

// lazyEvidence is the spelling of a JSON text, observed only when asked for.
type lazyEvidence struct {
	text []byte
	// parent is the text around the string that holds this one, for JSON
	// embedded in a string; nil for a document or column value.
	parent *lazyEvidence
	ev     *styleEvidence
}

func (l *lazyEvidence) get() *styleEvidence {
	if l.ev == nil {
		l.ev = observeStyle(l.text)
	}
	return l.ev
}

// around asks decide of the texts around a string, nearest first, until one
// of them shows the spelling.
func (l *lazyEvidence) around(decide func(*styleEvidence) (spelling, bool)) (spelling, bool) {
	for ; l != nil; l = l.parent {
		if sp, ok := decide(l.get()); ok {
			return sp, true
		}
	}
	return spellLiteral, false
}

// jsonStyle encodes new text in the style of one JSON string: each character
// is spelled as that string spells it; a character the string does not show
// is spelled as the JSON text around it does (a document, or JSON embedded in
// a string), and failing that as a plain encoder would (minimal escapes, "/"
// and non-ASCII as themselves, lower-case hex).
type jsonStyle struct {
	own   *styleEvidence
	outer *lazyEvidence // nil: only own
}

func (st jsonStyle) ascii(c byte) spelling {
	if sp, ok := st.own.pick(c); ok {
		return sp
	}
	alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	if c == '&' || c == '<' || c == '>' {
		// Encoders escape all three or none.
		if sp, ok := st.own.pickHTML(); ok {
			return sp
		}
	}
	if !alnum {
		// No encoder escapes letters or digits; any other character may be
		// (PHP's JSON_HEX_QUOT and JSON_HEX_APOS write \u0022 and \u0027).
		if sp, ok := st.outer.around(func(ev *styleEvidence) (spelling, bool) {
			if sp, ok := ev.pick(c); ok || c != '&' && c != '<' && c != '>' {
				return sp, ok
			}
			return ev.pickHTML()
		}); ok {
			return sp
		}
	}
	switch {
	case c == '"' || c == '\\':
		return spellShort
	case c < 0x20:
		if _, ok := shortEscape(c); ok {
			return spellShort
		}
		return spellU
	case c == 0x7f:
		// Python's ensure_ascii escapes it with the rest.
		return st.nonASCII()
	}
	return spellLiteral
}

func (st jsonStyle) nonASCII() spelling {
	notShort := func(sp spelling) bool { return sp != spellShort }
	if sp, ok := majority(st.own.nonASCII, notShort); ok {
		return sp
	}
	sp, _ := st.outer.around(func(ev *styleEvidence) (spelling, bool) { return majority(ev.nonASCII, notShort) })
	return sp
}

func (st jsonStyle) lineSep() spelling {
	notShort := func(sp spelling) bool { return sp != spellShort }
	if sp, ok := majority(st.own.lineSep, notShort); ok {
		return sp
	}
	if sp, ok := st.outer.around(func(ev *styleEvidence) (spelling, bool) { return majority(ev.lineSep, notShort) }); ok {
		return sp
	}
	// Go escapes them always, and shows itself by its HTML-safe escapes.
	if st.nonASCII() == spellU || st.ascii('&') == spellU {
		return spellU
	}
	return spellLiteral
}

// notUTF8 is the spelling of a byte that is not UTF-8 (0x80 to 0xff, not part
// of a character): as the string or the text around it writes such bytes,
// as themselves or as Python's json.dumps writes a file name's byte that
// os.listdir gave as a lone surrogate (\udce9); failing that, \udcXX where
// the style escapes non-ASCII characters, which keeps the text ASCII, else
// the byte itself.
func (st jsonStyle) notUTF8() spelling {
	notShort := func(sp spelling) bool { return sp != spellShort }
	if sp, ok := majority(st.own.notUTF8, notShort); ok {
		return sp
	}
	if sp, ok := st.outer.around(func(ev *styleEvidence) (spelling, bool) { return majority(ev.notUTF8, notShort) }); ok {
		return sp
	}
	return st.nonASCII()
}

func (st jsonStyle) upperHex() bool {
	// The nearest text that uses \u escapes shows its encoder's case, or
	// that it has none to show (\u0026): then lower case, as most write.
	if st.own.uEscapes > 0 {
		return st.own.upperHex > st.own.lowerHex
	}
	for l := st.outer; l != nil; l = l.parent {
		if ev := l.get(); ev.uEscapes > 0 {
			return ev.upperHex > ev.lowerHex
		}
	}
	return false
}

// appendEncoded appends text, spelled in the style, to dst. A byte that is not
// UTF-8 is written as itself or as \udc80-\udcff, which the decoder reads
// back as that byte (see notUTF8).
func (st jsonStyle) appendEncoded(dst, text []byte) []byte {
	hexDigits := "0123456789abcdef"
	if st.upperHex() {
		hexDigits = "0123456789ABCDEF"
	}
	appendU := func(r rune) {
		dst = append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch st.ascii(c) {
			case spellShort:
				e, _ := shortEscape(c)
				dst = append(dst, '\\', e)
			case spellU:
				appendU(rune(c))
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		sp := spellLiteral
		switch {
		case r == utf8.RuneError && size == 1:
			sp, r = st.notUTF8(), 0xdc00+rune(c) // \udcXX: Python's surrogateescape of c
		case r == '\u2028' || r == '\u2029':
			sp = st.lineSep()
		default:
			sp = st.nonASCII()
		}
		if sp != spellU {
			dst = append(dst, text[i:i+size]...)
		} else if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			appendU(r1)
			appendU(r2)
		} else {
			appendU(r)
		}
		i += size
	}
	return dst
}

// wordIndexes returns where needle occurs in b as a whole word, cut where the
// extractor cuts words (ref.WholeWord). The rewriter must cut where the
// extractor did: a reference found in "“/srv/…/ab.png”" that the rewriter did
// not see as a word would stay pointing at the source, and one rewritten in
// "/srv/…/ab.png#page=2", where the extractor found none, would be counted in
// its place, so that it is not kept either.
func wordIndexes(b, needle []byte) []int {
	var out []int
	for from := 0; from <= len(b)-len(needle) && len(needle) > 0; {
		i := bytes.Index(b[from:], needle)
		if i < 0 {
			break
		}
		at := from + i
		end := at + len(needle)
		if ref.WholeWord(b, at, end) {
			out = append(out, at)
			from = end
		} else {
			from = at + 1
		}
	}
	return out
}

// applyEdits returns unit with edits applied (edits sorted by At, not overlapping,
// At relative to unit).
func applyEdits(unit []byte, edits []Replacement) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(len(unit))
	var prev int64
	for _, e := range edits {
		if e.At < prev || e.At+int64(len(e.Old)) > int64(len(unit)) || string(unit[e.At:e.At+int64(len(e.Old))]) != e.Old {
			return nil, fmt.Errorf("replacement at %d does not match the text", e.At)
		}
		out.Write(unit[prev:e.At])
		out.WriteString(e.New)
		prev = e.At + int64(len(e.Old))
	}
	out.Write(unit[prev:])
	return out.Bytes(), nil
}

// errRevertConflict is wrapped by revertRewrite when a unit changed since its
// rewrite in a way that does not say which text to put back; Rollback reports
// it as the unit's problem.
var errRevertConflict = errors.New("changed since it was rewritten")

// revertRewrite undoes a journaled rewrite of one unit. When the unit is exactly as
// the rewrite left it, the original bytes come back exactly (checked against
// the journaled sha256). When the unit changed since (the agent appended
// messages), each new reference is searched for and put back if that is
// unambiguous; otherwise nothing is changed and the error says why. It returns
// nil bytes when there is nothing to undo.
func revertRewrite(cur []byte, rec Record) ([]byte, error) {
	sum := sha256Hex(cur)
	switch sum {
	case rec.OldSHA256:
		return nil, nil // never written, or already restored
	case rec.NewSHA256:
		back := make([]Replacement, len(rec.Edits))
		var shift int64
		for i, e := range rec.Edits {
			back[i] = Replacement{At: e.At + shift, Old: e.New, New: e.Old}
			shift += int64(len(e.New) - len(e.Old))
		}
		if out, err := applyEdits(cur, back); err == nil && sha256Hex(out) == rec.OldSHA256 {
			return out, nil
		}
		// The store normalized what was written (a jsonb column): search instead.
	}
	// Changed since: put each reference back where it can be found.
	byNew := map[string][]Replacement{}
	var order []string
	for _, e := range rec.Edits {
		if _, ok := byNew[e.New]; !ok {
			order = append(order, e.New)
		}
		byNew[e.New] = append(byNew[e.New], e)
	}
	var back []Replacement
	for _, n := range order {
		es := byNew[n]
		at := wordIndexes(cur, []byte(n))
		same := true
		for _, e := range es {
			same = same && e.Old == es[0].Old
		}
		switch {
		case same:
			for _, a := range at {
				back = append(back, Replacement{At: int64(a), Old: n, New: es[0].Old})
			}
		case len(at) == len(es):
			for i, a := range at {
				back = append(back, Replacement{At: int64(a), Old: n, New: es[i].Old})
			}
		default:
			return nil, fmt.Errorf("%w: %q now occurs %d times where %d different references were rewritten to it; restore it by hand from the journal", errRevertConflict, n, len(at), len(es))
		}
	}
	if len(back) == 0 {
		return nil, nil
	}
	slices.SortFunc(back, func(a, b Replacement) int { return int(a.At - b.At) })
	return applyEdits(cur, back)
}

// revertAll undoes every journaled rewrite of one unit, newest first (recs
// oldest first, as the journal holds them): each rewrite edited the unit as
// the one before it left it, so only undoing them in turn gets back to what
// the first one read. A rewrite that was prepared but never written (the
// unit is not as it would have left it) undoes nothing by itself. It returns
// the bytes and the number of references put back, nil bytes when there is
// nothing to undo, and the first rewrite that cannot be undone as an error.
func revertAll(cur []byte, recs []*Record) ([]byte, int64, error) {
	out, n := cur, int64(0)
	for _, rec := range slices.Backward(recs) {
		back, err := revertRewrite(out, *rec)
		if err != nil {
			return nil, 0, err
		}
		if back != nil {
			out, n = back, n+int64(len(rec.Edits))
		}
	}
	if n == 0 {
		return nil, 0, nil
	}
	return out, n, nil
}

func sha256Hex(b []byte) string {
	d := sha256.Sum256(b)
	return hex.EncodeToString(d[:])
}
