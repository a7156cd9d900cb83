package jsonwalk

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAppendUnescapedOffsets: each decoded byte says where its character is
// spelled in the raw bytes, -1 inside a character written as one escape.
func TestAppendUnescapedOffsets(t *testing.T) {
	for _, tc := range []struct {
		raw, text string
		offs      []int
	}{
		{``, "", nil},
		{`ab`, "ab", []int{0, 1}},
		{"é", "é", []int{0, 1}}, // a byte of a character as itself is its own
		{`\/x`, "/x", []int{0, 2}},
		{`a\nb`, "a\nb", []int{0, 1, 3}},
		{`\u00e9.`, "é.", []int{0, -1, 6}},
		{`\u00E9`, "é", []int{0, -1}},
		{`\u7B2c`, "第", []int{0, -1, -1}},
		{`\ud83d\ude00!`, "😀!", []int{0, -1, -1, -1, 12}},
		{`\ud800x`, "\uFFFDx", []int{0, -1, -1, 6}},
		{`\udce9\udc80`, "\xe9\x80", []int{0, 6}},
		{`\ud800\udce9`, "\U000100E9", []int{0, -1, -1, -1}},
		{`\x`, `\x`, []int{0, 1}}, // an invalid escape keeps its text
		{`\u12g4`, `\u12g4`, []int{0, 1, 2, 3, 4, 5}},
		{`a\`, `a\`, []int{0, 1}}, // a backslash at the end
		{`\\\"`, `\"`, []int{0, 2}},
	} {
		text, offs := AppendUnescapedOffsets([]byte("<"), []int{-7}, []byte(tc.raw))
		if string(text) != "<"+tc.text || !slices.Equal(offs, append([]int{-7}, tc.offs...)) {
			t.Errorf("AppendUnescapedOffsets(%s) = %q %v, want %q %v", tc.raw, text[1:], offs[1:], tc.text, tc.offs)
		}
	}
}

// FuzzAppendUnescapedOffsets: the text is appendUnescaped's; the offsets
// rise, and at every one the raw bytes split into two parts that decode to
// the text before and after it, which is what lets a part be replaced; for a
// valid JSON string the text is encoding/json's.
func FuzzAppendUnescapedOffsets(f *testing.F) {
	for _, s := range []string{
		`plain /srv/agent/x.png`,
		`\/srv\/a\u0026b\/x.png and caf\u00E9 \ud83d\ude00\n\"`,
		`\udce9\udc80x \ud800 \uDFFF\ud800\udce9`,
		`\x \u12 \u00e \`,
		"\xe9 raw é",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		text, offs := AppendUnescapedOffsets(nil, nil, raw)
		if want := appendUnescaped(nil, raw); string(text) != string(want) {
			t.Fatalf("%q: text %q, appendUnescaped gives %q", raw, text, want)
		}
		if len(offs) != len(text) {
			t.Fatalf("%q: %d offsets for %d bytes", raw, len(offs), len(text))
		}
		at := append(slices.Clone(offs), len(raw))
		prev := -1
		for k, o := range at {
			if o < 0 {
				if k == 0 {
					t.Fatalf("%q: the first byte has no offset", raw)
				}
				continue
			}
			if o <= prev {
				t.Fatalf("%q: offsets %v do not rise", raw, offs)
			}
			prev = o
			if before := appendUnescaped(nil, raw[:o]); string(before) != string(text[:k]) {
				t.Fatalf("%q: raw[:%d] decodes to %q, want text[:%d] %q", raw, o, before, k, text[:k])
			}
			if after := appendUnescaped(nil, raw[o:]); string(after) != string(text[k:]) {
				t.Fatalf("%q: raw[%d:] decodes to %q, want text[%d:] %q", raw, o, after, k, text[k:])
			}
		}
		// encoding/json reads a valid string the same, but for the bytes
		// that are not UTF-8 and the surrogateescape bytes, which it reads
		// as U+FFFD (TestAppendUnescapedSurrogates).
		var want string
		if !utf8.Valid(raw) || surrogateEscape.Match(raw) || json.Unmarshal([]byte(`"`+string(raw)+`"`), &want) != nil {
			return
		}
		if string(text) != want {
			t.Fatalf("%q: decoded %q, encoding/json reads %q", raw, text, want)
		}
	})
}

func BenchmarkAppendUnescaped(b *testing.B) {
	for _, bc := range []struct{ name, raw string }{
		// Python's json.dumps of Chinese prose, PHP's of a path: an escape
		// every few bytes.
		{"dense", strings.Repeat(`\u5df2\u4fdd\u5b58\u5230 \/srv\/agent\/.forge\/files\/inbound\/9f86d081884c.png\n`, 20)},
		// A message with a line break now and then.
		{"sparse", strings.Repeat(`The file was saved to /srv/agent/.forge/files/inbound/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png and it is fine.\n`, 20)},
	} {
		raw := []byte(bc.raw)
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, len(raw))
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				buf = appendUnescaped(buf[:0], raw)
			}
		})
		b.Run(bc.name+"/offsets", func(b *testing.B) {
			buf, offs := make([]byte, 0, len(raw)), make([]int, 0, len(raw))
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				buf, offs = AppendUnescapedOffsets(buf[:0], offs[:0], raw)
			}
		})
	}
}
