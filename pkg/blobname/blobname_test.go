package blobname

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
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

// baseShape is what a content-addressed base name looks like, written out
// independently of ParseBase.
var baseShape = regexp.MustCompile(`\A[0-9a-f]{64}(\.[a-z0-9]{1,8})?\z`)

// parseBaseOracle is ParseBase by regular expression and encoding/hex.
func parseBaseOracle(base string) (Digest, string, bool) {
	var d Digest
	if !baseShape.MatchString(base) {
		return d, "", false
	}
	b, _ := hex.DecodeString(base[:DigestLen])
	copy(d[:], b)
	return d, base[DigestLen:], true
}

func TestParseBase(t *testing.T) {
	d := sha256.Sum256([]byte("cat"))
	h := Digest(d).String()
	for _, base := range []string{
		h, h + ".png", h + ".abcdefgh", h + ".abcdefghi", h + ".PNG", strings.ToUpper(h), h[:63] + ".png", h + "0.png",
		h + ".tar.gz", h + ".", h[:10] + "g" + h[11:], h[:10] + "/" + h[11:], h[:63] + "\xff", h[:63] + "\x00", "", "x.png",
	} {
		parsesAsOracle(t, base)
	}
}

// parsesAsOracle fails t unless ParseBase answers as the oracle on base.
func parsesAsOracle(t testing.TB, base string) {
	t.Helper()
	wd, wext, wok := parseBaseOracle(base)
	gd, gext, gok := ParseBase(base)
	if gok != wok || gd != wd || gext != wext {
		t.Fatalf("ParseBase(%q) = %x %q %v, want %x %q %v", base, gd, gext, gok, wd, wext, wok)
	}
}

// FuzzParseBase: ParseBase answers as the oracle on any base name.
func FuzzParseBase(f *testing.F) {
	d := sha256.Sum256([]byte("cat"))
	h := Digest(d).String()
	for _, s := range []string{h, h + ".png", h[:63] + "G", h + ".x/y", "ab"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, base string) { parsesAsOracle(t, base) })
}

// Every byte value at every place of the digest is accepted or refused as
// the oracle does, and the digest is decoded the same.
func TestParseBaseEveryByteEverywhere(t *testing.T) {
	d := sha256.Sum256([]byte("dog"))
	h := []byte(Digest(d).String() + ".jpg")
	for i := range DigestLen {
		for c := range 256 {
			b := append([]byte(nil), h...)
			b[i] = byte(c)
			parsesAsOracle(t, string(b))
		}
	}
}
