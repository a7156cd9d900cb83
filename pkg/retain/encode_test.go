package retain_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/retain/retaintest"
)

// names are blob names as the runtimes and their users make them: forge's
// digests, coffer's uuid4().hex + the user's suffix, and human names of
// uploads with spaces, quotes, non-ASCII letters, emoji and markup.
func names() []string {
	d := sha256.Sum256([]byte("encode"))
	h := hex.EncodeToString(d[:])
	return []string{
		h + ".png",
		h[:32] + ".final copy",
		h[:32] + ".第二版",
		h[:32] + ".v2 (Bob's edit)",
		h[:32],
		"Bob's März photo (1).jpg",
		"holiday photo.jpg",
		"1234567890.jpg",
		"a&b<c>.png",
		"x.png",
		"IMG_0001.HEIC",
		"naïve café.pdf",
		"🎉 party.gif",
		"tab\tname\nline.txt",
		`quote"d 'n' back\slash.png`,
		"100% done + more=ok.pdf",
		"emoji🎉glued.png",
		"Ünïcödé ÅÄÖ.txt",
	}
}

// Every name, through every encoding and every pair of encodings, in prose,
// is kept.
func TestEveryEncodingKeepsEveryName(t *testing.T) {
	for _, name := range names() {
		for _, a := range retaintest.Encodings {
			for _, b := range append([]retaintest.Encoding{{Name: "none", Encode: func(s string) string { return s }}}, retaintest.Encodings...) {
				text := "see " + b.Encode(a.Encode("/srv/u/"+name)) + " now"
				if !kept(name, text) {
					t.Errorf("%q through %s then %s is not kept: %s", name, a.Name, b.Name, text)
				}
			}
		}
	}
}

// FuzzEncodingStack: a name encoded through a stack of encodings the fuzzer
// picks, of any depth, in the other Unicode normalization or not, is kept
// (the rule's claim in docs/retention.md).
func FuzzEncodingStack(f *testing.F) {
	f.Add(uint8(5), []byte{0, 1, 2}, false)
	f.Add(uint8(3), []byte{12, 7, 0, 0, 0, 0, 0, 0, 0, 0}, true)
	f.Add(uint8(0), []byte{8, 9, 17}, false)
	f.Fuzz(func(t *testing.T, which uint8, stack []byte, nfd bool) {
		all := names()
		name := all[int(which)%len(all)]
		spelled := "/home/u/.coffer/channel-media/" + name
		if nfd {
			spelled = norm.NFD.String(spelled)
		}
		if len(stack) > 12 {
			stack = stack[:12] // deeper stacks only grow the text
		}
		for _, e := range stack {
			spelled = retaintest.Encodings[int(e)%len(retaintest.Encodings)].Encode(spelled)
			if len(spelled) > 1<<20 {
				return
			}
		}
		if !kept(name, "tool output: "+spelled+" (done)") {
			t.Fatalf("%q through %v (nfd %v) is not kept: %s", name, stack, nfd, spelled)
		}
	})
}

func kept(name, text string) bool {
	x := retain.NewIndex()
	id := x.Add("inbound/" + name)
	x.Mark([]byte(text))
	return x.Referenced(id)
}

// JSON text encoded as a string more times than any decoder would follow
// still keeps its names: the rule decodes nothing and has no depth to run
// out of.
func TestDeeplyQuotedJSON(t *testing.T) {
	for _, name := range names() {
		doc := `{"path": "/srv/u/` + strings.ReplaceAll(name, `"`, `\"`) + `"}`
		for range 20 {
			doc = retaintest.Quote(doc, retaintest.PythonASCII)
		}
		if !kept(name, doc) {
			t.Errorf("%q quoted 20 times is not kept", name)
		}
	}
}
