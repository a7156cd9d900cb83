package blobname

import (
	"crypto/sha256"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	d := sha256.Sum256([]byte("cat"))
	hexd := Digest(d).String()
	cases := []struct {
		key  string
		ok   bool
		ext  string
		name string
	}{
		{hexd + ".png", true, ".png", "plain png"},
		{hexd, true, "", "no extension"},
		{"inbound/" + hexd + ".pdf", true, ".pdf", "with folder"},
		{hexd + ".abcdefgh", true, ".abcdefgh", "8-char extension"},
		{hexd + ".abcdefghi", false, "", "9-char extension"},
		{hexd + ".", false, "", "bare dot"},
		{hexd + ".PNG", false, "", "upper-case extension"},
		{strings.ToUpper(hexd) + ".png", false, "", "upper-case digest"},
		{hexd[:63] + ".png", false, "", "short digest"},
		{hexd + "0.png", false, "", "long digest"},
		{hexd + ".tar.gz", false, "", "two extensions"},
		{"4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg", false, "", "uuid hex is opaque"},
		{"", false, "", "empty"},
	}
	for _, c := range cases {
		n, ok := Parse(c.key)
		if ok != c.ok {
			t.Errorf("%s: Parse(%q) ok = %v, want %v", c.name, c.key, ok, c.ok)
			continue
		}
		if ok && (n.Ext != c.ext || n.Digest != Digest(d)) {
			t.Errorf("%s: Parse(%q) = %v %q", c.name, c.key, n.Digest, n.Ext)
		}
		if ok && !strings.HasSuffix(c.key, n.String()) {
			t.Errorf("%s: String() = %q does not round-trip", c.name, n.String())
		}
	}
}

func TestParseDigest(t *testing.T) {
	d := sha256.Sum256(nil)
	s := Digest(d).String()
	for _, in := range []string{s, strings.ToUpper(s)} {
		got, ok := ParseDigest(in)
		if !ok || got != Digest(d) {
			t.Errorf("ParseDigest(%q) = %v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", s[:63], s + "0", "z" + s[1:]} {
		if _, ok := ParseDigest(in); ok {
			t.Errorf("ParseDigest(%q) accepted", in)
		}
	}
}
