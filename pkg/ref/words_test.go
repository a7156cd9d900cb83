package ref

import (
	"bytes"
	"testing"
)

func TestWholeWord(t *testing.T) {
	const p = "/srv/a/ab.png"
	for _, tc := range []struct {
		text string
		want bool
	}{
		{p, true},
		{"see " + p + ".", true},
		{"(" + p + "), then", true},
		{"“" + p + "”", true},
		{"已保存：" + p + "。", true},
		{"路径\u3000" + p, true},
		{`\n` + p + `\n`, true},
		{`\u0022` + p + `\u0022`, true},
		{"'" + p + "';", true},
		{p + "#page=2", false},
		{p + "?download=1", false},
		{p + ".bak", false},
		{p + "...x", false},
		{"x" + p, false},
		{"$" + p, false},
		{"é" + p, false},
		{"file://" + p, false},
	} {
		s := []byte(tc.text)
		i := bytes.Index(s, []byte(p))
		if got := WholeWord(s, i, i+len(p)); got != tc.want {
			t.Errorf("WholeWord(%q, %q) = %v, want %v", tc.text, p, got, tc.want)
		}
	}
	if WholeWord([]byte(p), 3, 2) || WholeWord([]byte(p), -1, 2) || WholeWord([]byte(p), 0, len(p)+1) {
		t.Error("WholeWord accepts bounds outside the text")
	}
}

// FuzzWholeWord: every word the extractor reads references from in a text
// (words) stands there as a whole word, and a whole word with a slash and
// no break in it is such a word: the rewriter, which replaces a reference
// only where it stands as a whole word, cuts where the extractor did.
func FuzzWholeWord(f *testing.F) {
	for _, s := range []string{
		"saved to “/srv/a/ab.png” and /srv/a/ab.png#page=2.",
		`log: \u0022/srv/a/ab.png\u0022, \n./x/y.png\n`,
		"已保存：/srv/a/ab.png。see (file:///x/y.png), s3://b/k?x=1!",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s := []byte(text)
		words := map[[2]int]bool{}
		for pos := 0; pos < len(s); {
			i := bytes.IndexByte(s[pos:], '/')
			if i < 0 {
				break
			}
			i += pos
			start, end := wordStart(s, i), wordEnd(s, i)
			pos = end
			if w := trimWord(s[start:end]); len(w) > 0 {
				words[[2]int{start, start + len(w)}] = true
				if !WholeWord(s, start, start+len(w)) {
					t.Fatalf("%q: the extractor's word %q is not a whole word", text, w)
				}
			}
		}
		if len(s) > 2048 {
			return // the search below is quadratic in a word's length
		}
		for i := range len(s) {
			if wordStart(s, i) != i {
				continue
			}
			// Every part of the text from i to the next break.
			for j := i + 1; j <= wordEnd(s, i); j++ {
				w := s[i:j]
				if bytes.IndexByte(w, '/') < 0 || len(trimWord(w)) != len(w) || !WholeWord(s, i, j) {
					continue
				}
				if !words[[2]int{i, j}] {
					t.Fatalf("%q: %q is a whole word, not one the extractor reads", text, w)
				}
			}
		}
	})
}
