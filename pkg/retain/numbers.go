package retain

import (
	"sync"

	"github.com/mediactl/mediactl/pkg/ref"
)

// markNumbers marks what the numbers of s name by their value: a runtime
// names a file by a number's value, not by how a document spelled it, and
// 1234567890.0, 1.23456789e9 or a numeric 1234567890.000 name
// 1234567890.jpg, which no word of their text holds. Every number of s
// written with a fraction or an exponent (a JSON number, a float in prose, a
// JSONB or XML value the JSON parser never sees) is read in its integer
// forms (ref.AppendIntegerForms), and those are marked as words and hex
// runs (a number of 16 digits or more is a name's hex part). Only an index
// with a name that has an all-digit word or hex part pays for it.
func (x *Index) markNumbers(s []byte) {
	buf := numberBuffers.Get().(*[]byte)
	defer numberBuffers.Put(buf)
	b := appendNumberForms((*buf)[:0], s)
	if len(b) > 0 {
		x.markHex(b)
		if len(x.skels) > 0 {
			x.markWords(b, false)
		}
	}
	*buf = b
}

// appendNumberForms appends the integer forms of every number of s written
// with a fraction or an exponent, each after a space: a number starts at a
// digit that does not go on a word, with the '-' or '.' before it.
func appendNumberForms(b, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < '0' || c > '9' || i > 0 && byteClass[s[i-1]]&wordByte != 0 {
			i++
			continue
		}
		start := i
		if start > 0 && (s[start-1] == '-' || s[start-1] == '.') {
			start-- // "-1.5e9", ".5e10"
		}
		j := i
		for j < len(s) && '0' <= s[j] && s[j] <= '9' {
			j++
		}
		float := false
		if j < len(s) && s[j] == '.' {
			float = true
			for j++; j < len(s) && '0' <= s[j] && s[j] <= '9'; j++ {
			}
		}
		if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
			k := j + 1
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < len(s) && '0' <= s[k] && s[k] <= '9' {
				float = true
				for j = k; j < len(s) && '0' <= s[j] && s[j] <= '9'; j++ {
				}
			}
		}
		if float {
			b = ref.AppendIntegerForms(b, s[start:j])
		}
		i = max(j, i+1)
	}
	return b
}

var numberBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64); return &b }}

// hasDigitWord reports whether one of words is digits alone: a number may
// name its blob.
func hasDigitWord(words ...string) bool {
	for _, w := range words {
		digits := true
		for i := 0; i < len(w); i++ {
			if w[i] < '0' || w[i] > '9' {
				digits = false
				break
			}
		}
		if digits {
			return true
		}
	}
	return false
}
