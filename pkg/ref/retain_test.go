package ref

import (
	"strings"
	"testing"
)

func TestIndexRetentionRule(t *testing.T) {
	a := digest("a")
	x := NewIndex()
	ids := map[string]int{}
	for _, k := range []string{
		a + ".png",                             // content-addressed
		"4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg", // coffer, opaque
		"u/t/uploads/f.png",                    // bucket key: matched by base name
		"noext",                                // opaque, no extension
		"my photo.jpg",                         // not a single token
		digest("never") + ".pdf",               // not mentioned anywhere
		"u/t/uploads/unrelated-" + a[:10] + ".gif", // shares a digest prefix only
	} {
		ids[k] = x.Add(k)
	}
	for _, s := range []string{
		"sha256:" + strings.ToUpper(a) + " was uploaded", // bare digest, other case
		`{"path":"/home/u/.coffer/channel-media/4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8"}`,
		"see agent-inputs/u/t/uploads/f.png.",
		"the file noext is here",
		"open 'my photo.jpg' please",
	} {
		x.Mark([]byte(s))
	}
	want := map[string]bool{
		a + ".png":                             true,
		"4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg": true,
		"u/t/uploads/f.png":                    true,
		"noext":                                true,
		"my photo.jpg":                         true,
		digest("never") + ".pdf":               false,
		"u/t/uploads/unrelated-" + a[:10] + ".gif": false,
	}
	for k, w := range want {
		if got := x.Referenced(ids[k]); got != w {
			t.Errorf("%s: referenced = %v, want %v", k, got, w)
		}
	}
}

func TestIndexDigestRunMustBeExact(t *testing.T) {
	a := digest("a")
	x := NewIndex()
	id := x.Add(a)
	x.Mark([]byte(a + "0")) // 65 hex characters: another kind of identifier
	if x.Referenced(id) {
		t.Fatal("a 65-character hex run matched a digest")
	}
	x.Mark([]byte("x" + a + ".bin"))
	if !x.Referenced(id) {
		t.Fatal("digest inside a token not matched")
	}
}
