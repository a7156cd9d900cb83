package retain

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// testCopies names copies under "s3://b/in/" of a store holding keys.
func testCopies(prefix string, keys ...string) copyNames {
	longest := 0
	for _, k := range keys {
		longest = max(longest, len(k))
	}
	return copyNames{prefixes: []string{prefix}, longest: longest, isKey: func(k string) bool { return slices.Contains(keys, k) }}
}

var fuzzKeys = []string{"ab.png", "x/ab.png", "a b.png", "a&b.png", "ab.png.bak"}

// FuzzBlankCopies: blanking the copies' URLs out of untrusted session text
// never panics, keeps the length, changes bytes only into spaces, changes
// nothing in text without a prefix, and blanks a byte only inside a prefix
// followed by a key of the store.
func FuzzBlankCopies(f *testing.F) {
	f.Add([]byte("saved to s3://media/inbound/ab.png."), "s3://media/inbound/")
	f.Add([]byte(`{"uri":"s3://media/inbound/../x/ab.png"} s3://media/inbound/`), "s3://media/inbound/")
	f.Add([]byte("s3://m/s3://m/a b.png&s3://m/ab.png:/srv/ab.png"), "s3://m/")
	f.Add([]byte(`{"p":"s3:\/\/m\/x\/ab.png"} s3:\/\/m\/x\/ab.pn`), "s3://m/")
	f.Fuzz(func(t *testing.T, s []byte, prefix string) {
		if prefix == "" {
			return
		}
		out := blankCopies(s, testCopies(prefix, fuzzKeys...))
		if len(out) != len(s) {
			t.Fatalf("length %d, want %d", len(out), len(s))
		}
		if !bytes.Contains(s, []byte(prefix)) && !bytes.Contains(s, []byte(escapeSlashes(prefix))) && !bytes.Equal(out, s) {
			t.Fatalf("text without the prefix changed: %q → %q", s, out)
		}
		for i := range s {
			if out[i] == s[i] {
				continue
			}
			if out[i] != ' ' {
				t.Fatalf("byte %d became %q", i, out[i])
			}
			if !insideCopy(s, i, prefix) {
				t.Fatalf("byte %d of %q blanked outside every prefix + key: %q", i, s, out)
			}
		}
	})
}

// insideCopy reports whether byte i of s lies in an occurrence of prefix
// followed by one of fuzzKeys, or of both with "\/" for every '/'.
func insideCopy(s []byte, i int, prefix string) bool {
	for _, esc := range []func(string) string{func(s string) string { return s }, escapeSlashes} {
		p := esc(prefix)
		for start := 0; start <= i; start++ {
			if !bytes.HasPrefix(s[start:], []byte(p)) {
				continue
			}
			for _, k := range fuzzKeys {
				k = esc(k)
				if bytes.HasPrefix(s[start+len(p):], []byte(k)) && i < start+len(p)+len(k) {
					return true
				}
			}
		}
	}
	return false
}

// TestBlankCopies: exactly the copy's prefix and key are blanked, whatever
// follows the key; a key that goes on into a longer name, or a path that is
// no key, is left as it is.
func TestBlankCopies(t *testing.T) {
	const y = "/srv/agent/.forge/files/inbound/cd.png"
	c := testCopies("s3://b/in/", "ab.png", "x/ab.png", "a b.png", "a&b.png", "a", "cd.png")
	for _, tc := range []struct{ in, blanked string }{
		{"saved to s3://b/in/ab.png.", "s3://b/in/ab.png"},
		{"s3://b/in/ab.png and /srv/ab.png", "s3://b/in/ab.png"},
		{"s3://b/in/../ab.png", ""},
		{"s3://b/in/x/../ab.png", ""},
		{`"s3://b/in/x/ab.png"`, "s3://b/in/x/ab.png"},
		{`s3://b/in/ab.png\n`, "s3://b/in/ab.png"},
		{`s3://b/in/ab.png\u0026right=` + y, "s3://b/in/ab.png"},
		// What may follow a copy's path in the same string: a URL's query
		// and fragment, a shell's assignment and path list, a list, a
		// space, the punctuation of prose in Chinese and Japanese.
		{"http://127.0.0.1:8080/compare?left=s3://b/in/ab.png&right=" + y, "s3://b/in/ab.png"},
		{"IMAGES=s3://b/in/ab.png:" + y + " python3 diff.py", "s3://b/in/ab.png"},
		{"s3://b/in/ab.png=" + y, "s3://b/in/ab.png"},
		{"s3://b/in/ab.png?" + y, "s3://b/in/ab.png"},
		{"s3://b/in/ab.png#" + y, "s3://b/in/ab.png"},
		{"s3://b/in/ab.png," + y, "s3://b/in/ab.png"},
		{"s3://b/in/ab.png;" + y, "s3://b/in/ab.png"},
		{"s3://b/in/ab.png " + y, "s3://b/in/ab.png"},
		{"s3://b/in/ab.png、" + y, "s3://b/in/ab.png"},
		{"s3://b/in/ab.png：" + y, "s3://b/in/ab.png"},
		// A key that is the start of another key's path: only it.
		{"s3://b/in/cd.png/ab.png", "s3://b/in/cd.png"},
		// Keys with a space or '&' are blanked whole, the shortest key first.
		{"s3://b/in/a b.png", "s3://b/in/a"},
		{"s3://b/in/a&b.png", "s3://b/in/a"},
		// A name that goes on is another name: "ab.png.bak" keeps ab.png.
		{"s3://b/in/ab.png.bak", ""},
		{"s3://b/in/ab.png-thumb.png", ""},
		{"s3://b/in/zz.png&right=" + y, ""},
		// A tool call's arguments with "\/" for every slash.
		{`{"path":"s3:\/\/b\/in\/ab.png"}`, `s3:\/\/b\/in\/ab.png`},
		{`{"path":"s3:\/\/b\/in\/x\/ab.png","y":"\/srv\/cd.png"}`, `s3:\/\/b\/in\/x\/ab.png`},
		{`s3:\/\/b\/in\/ab.png.bak`, ""},
	} {
		want := tc.in
		if tc.blanked != "" {
			want = strings.Replace(tc.in, tc.blanked, strings.Repeat(" ", len(tc.blanked)), 1)
		}
		if got := string(blankCopies([]byte(tc.in), c)); got != want {
			t.Errorf("blankCopies(%q) = %q, want %q", tc.in, got, want)
		}
	}
	// Without the key "a", the keys with a space and a '&' are blanked whole.
	c = testCopies("s3://b/in/", "a b.png", "a&b.png")
	for _, in := range []string{"s3://b/in/a b.png", `"s3://b/in/a&b.png"`} {
		want := strings.Replace(in, strings.Trim(in, `"`), strings.Repeat(" ", len(strings.Trim(in, `"`))), 1)
		if got := string(blankCopies([]byte(in), c)); got != want {
			t.Errorf("blankCopies(%q) = %q, want %q", in, got, want)
		}
	}
}
