package migrate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mediactl/mediactl/pkg/jsonwalk"
	"github.com/mediactl/mediactl/pkg/ref"
)

// Replacer finds, in one session unit (a document or a column value), the
// references to migrated blobs and says how to rewrite them.
//
// It changes bytes only where the reference extractor found a reference and
// only the reference itself: inside a JSON document, the bytes of the JSON
// string that holds it, at a position where the reference stands as a whole
// word. Everything else — formatting, key order, escapes, other text in the
// same string — stays byte for byte, which is what lets rollback restore the
// original exactly.
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
	// Kept lists references to migrated blobs that could not be rewritten
	// (a {bucket, path} pair, text not found as a whole word): they still
	// point at the source, so those blobs must not be deleted.
	Kept []string
}

// Find returns the replacements for unit. A document that is not valid JSON is
// left alone (an error), since its references could not be placed safely.
func (r *Replacer) Find(place ref.Place, unit []byte) (UnitEdits, error) {
	var out UnitEdits
	targets := map[string]string{} // reference text → new text
	var refs []ref.Reference
	ex := ref.Extractor{Found: func(rf ref.Reference, _ ref.Place) { refs = append(refs, rf) }}
	document := place.Table == ""
	if document {
		if err := ex.Document(bytes.NewReader(unit), place); err != nil {
			return out, fmt.Errorf("%s: %w (left unchanged)", place, err)
		}
	} else {
		ex.Value(unit, place)
	}
	for _, rf := range refs {
		status, key := r.Resolver.Resolve(rf)
		if status != ref.Inside {
			continue
		}
		to, ok := r.Target(key)
		if !ok {
			continue
		}
		if rf.Kind == ref.BucketPair {
			out.Kept = append(out.Kept, rf.Raw+" (a {bucket, path} pair names the store, not a URL; not rewritten)")
			continue
		}
		targets[rf.Raw] = to
	}
	if len(targets) == 0 {
		return out, nil
	}
	raws := make([]string, 0, len(targets))
	for raw := range targets {
		raws = append(raws, raw)
	}
	// Longer references first, so that one that contains another wins.
	slices.SortFunc(raws, func(a, b string) int { return len(b) - len(a) })

	found := map[string]bool{}
	add := func(region []byte, base int64, escaped bool) {
		for _, raw := range raws {
			needle, repl := raw, targets[raw]
			if escaped {
				needle, repl = jsonEscape(raw), jsonEscape(repl)
			}
			for _, at := range wordIndexes(region, []byte(needle)) {
				pos := base + int64(at)
				if overlaps(out.Edits, pos, int64(len(needle))) {
					continue
				}
				out.Edits = append(out.Edits, Replacement{At: pos, Old: needle, New: repl})
				found[raw] = true
			}
		}
	}
	walked := false
	if document || looksLikeJSON(unit) {
		h := &stringFinder{unit: unit, raws: raws, add: add}
		err := jsonwalk.NewBytes(unit, h, jsonwalk.Limits{}).Run()
		if err == nil {
			err = h.err
		}
		switch {
		case err == nil:
			walked = true
		case document:
			return UnitEdits{}, fmt.Errorf("%s: %w (left unchanged)", place, err)
		default:
			// A value that only looks like JSON is text.
			out.Edits, found = nil, map[string]bool{}
		}
	}
	if !walked {
		add(unit, 0, false)
	}
	for _, raw := range raws {
		if !found[raw] {
			out.Kept = append(out.Kept, raw+" (not found as a whole word in the stored text; not rewritten)")
		}
	}
	slices.SortFunc(out.Edits, func(a, b Replacement) int { return int(a.At - b.At) })
	return out, nil
}

// looksLikeJSON reports whether a column value holds a JSON object or array,
// as the extractor treats it; the walk over it decides.
func looksLikeJSON(unit []byte) bool {
	t := bytes.TrimSpace(unit)
	return len(t) >= 2 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']')
}

func (h *stringFinder) Begin(*jsonwalk.Walker, byte) error { return nil }
func (h *stringFinder) End(*jsonwalk.Walker, byte) error   { return nil }
func (h *stringFinder) String(_ *jsonwalk.Walker, s []byte, off int64) error {
	hit := false
	for _, raw := range h.raws {
		if bytes.Contains(s, []byte(raw)) {
			hit = true
			break
		}
	}
	if !hit {
		return nil
	}
	end, ok := stringEnd(h.unit, off)
	if !ok {
		h.err = fmt.Errorf("no JSON string at offset %d", off)
		return nil
	}
	// The stored bytes of the string, between its quotes.
	h.add(h.unit[off+1:end], off+1, true)
	return nil
}

// stringFinder hands the stored bytes of every JSON string value that mentions
// a reference to add.
type stringFinder struct {
	unit []byte
	raws []string
	add  func(region []byte, base int64, escaped bool)
	err  error
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

// jsonEscape is how s is stored inside a JSON string.
func jsonEscape(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b := bytes.TrimSpace(buf.Bytes())
	return string(b[1 : len(b)-1])
}

// wordIndexes returns where needle occurs in b as a whole word: not glued to
// more path characters on either side (a JSON escape such as \n before it
// counts as a separator; sentence punctuation after it too).
func wordIndexes(b, needle []byte) []int {
	var out []int
	for from := 0; from <= len(b)-len(needle) && len(needle) > 0; {
		i := bytes.Index(b[from:], needle)
		if i < 0 {
			break
		}
		at := from + i
		end := at + len(needle)
		if startsWord(b, at) && endsWord(b, end) {
			out = append(out, at)
			from = end
		} else {
			from = at + 1
		}
	}
	return out
}

func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("/._-~%:+@=", c) >= 0 || c >= 0x80
}

func startsWord(b []byte, at int) bool {
	if at == 0 || !isPathByte(b[at-1]) {
		return true
	}
	// An escape sequence such as \n, \t or \/ right before: count the backslashes.
	n := 0
	for i := at - 2; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1 && strings.IndexByte("nrtbf/", b[at-1]) >= 0
}

func endsWord(b []byte, end int) bool {
	if end == len(b) || !isPathByte(b[end]) {
		return true
	}
	// Sentence punctuation: "see /srv/…/ab.png." or "…ab.png:".
	i := end
	for i < len(b) && strings.IndexByte(".,:;!?", b[i]) >= 0 {
		i++
	}
	return i > end && (i == len(b) || !isPathByte(b[i]))
}

func overlaps(edits []Replacement, at, n int64) bool {
	for _, e := range edits {
		if at < e.At+int64(len(e.Old)) && e.At < at+n {
			return true
		}
	}
	return false
}

// Apply returns unit with edits applied (edits sorted by At, not overlapping,
// At relative to unit).
func Apply(unit []byte, edits []Replacement) ([]byte, error) {
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

// ErrRevertConflict is wrapped by Revert when a unit changed since its rewrite
// in a way that does not say which text to put back.
var ErrRevertConflict = errors.New("changed since it was rewritten")

// Revert undoes a journaled rewrite of one unit. When the unit is exactly as
// the rewrite left it, the original bytes come back exactly (checked against
// the journaled sha256). When the unit changed since (the agent appended
// messages), each new reference is searched for and put back if that is
// unambiguous; otherwise nothing is changed and the error says why. It returns
// nil bytes when there is nothing to undo.
func Revert(cur []byte, rec Record) ([]byte, error) {
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
		if out, err := Apply(cur, back); err == nil && sha256Hex(out) == rec.OldSHA256 {
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
			return nil, fmt.Errorf("%w: %q now occurs %d times where %d different references were rewritten to it; restore it by hand from the journal", ErrRevertConflict, n, len(at), len(es))
		}
	}
	if len(back) == 0 {
		return nil, nil
	}
	slices.SortFunc(back, func(a, b Replacement) int { return int(a.At - b.At) })
	return Apply(cur, back)
}

func sha256Hex(b []byte) string {
	d := sha256.Sum256(b)
	return hex.EncodeToString(d[:])
}
