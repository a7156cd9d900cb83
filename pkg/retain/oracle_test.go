package retain

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/mediactl/mediactl/pkg/blobname"
)

// oracleIndex is the retention rule written as plainly as it is stated in
// docs/retention.md, with a string per key and a loop over every blob for
// every session string: simple enough to trust, far too slow for a store.
// The compact Index must agree with it on every input. What a word, a hex
// digit and a skeleton are (wordsOf, isHex, skeletonsOf, hexPart) is shared;
// TestIndexRetentionRule pins them with literal cases.
type oracleIndex struct {
	keys   []string
	marks  []bool
	marked bool // some string was marked
}

func newOracleIndex() *oracleIndex { return &oracleIndex{} }

func (x *oracleIndex) Add(key string) int {
	x.keys = append(x.keys, key)
	x.marks = append(x.marks, false)
	return len(x.keys) - 1
}

func (x *oracleIndex) Mark(s []byte) {
	x.markString(s)
	// What the numbers of s name by their value.
	if forms := appendNumberForms(nil, s); len(forms) > 0 {
		x.markString(forms)
	}
}

func (x *oracleIndex) markString(s []byte) {
	x.marked = true
	// ASCII letters folded, every other byte as it is (bytes.ToLower would
	// turn the Kelvin sign into a 'k').
	folded := make([]byte, len(s))
	spaced := make([]byte, len(s))
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		folded[i], spaced[i] = c, ' '
		if isWordByte(c) {
			spaced[i] = c
		}
	}
	words := strings.Fields(string(spaced))
	binary := !utf8.Valid(s)
	for id, key := range x.keys {
		name := path.Base(key)
		if n, ok := blobname.Parse(name); ok {
			// Its digest anywhere, in either case.
			if bytes.Contains(folded, []byte(n.Digest.String())) {
				x.marks[id] = true
			}
			continue
		}
		if part := hexPart(name); part != "" {
			if bytes.Contains(folded, []byte(part)) {
				x.marks[id] = true
			}
			continue
		}
		skels := skeletonsOf(name)
		if len(skels) == 0 {
			x.marks[id] = true // nothing to look for
			continue
		}
		for _, sk := range skels {
			if inOrder(words, sk, binary) {
				x.marks[id] = true
			}
		}
	}
}

// inOrder reports whether each word of skel ends (or, inside a binary
// value, lies in) a word of words, in order, one word each.
func inOrder(words, skel []string, inside bool) bool {
	k := 0
	for _, w := range words {
		if k == len(skel) {
			break
		}
		if strings.HasSuffix(w, skel[k]) || inside && strings.Contains(w, skel[k]) {
			k++
		}
	}
	return k == len(skel)
}

func (x *oracleIndex) Referenced(id int) bool { return x.marks[id] }
