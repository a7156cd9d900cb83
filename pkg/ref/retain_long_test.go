package ref

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// An index of content-addressed names only has no token entries, and Mark
// then probes one byte in 64 (markLong). A name must be found wherever it
// starts and whatever stands around it: every offset across two strides,
// token and non-token neighbours, a hex run one too long, upper case.
func TestMarkLongFindsEveryName(t *testing.T) {
	a, b := digest("long-a"), digest("long-b")
	keys := []string{a + ".png", "inbound/" + b, digest("never") + ".pdf"}
	fill := "x/y-z.w q" // token and non-token bytes
	for off := range 140 {
		prefix := strings.Repeat(fill, off/len(fill)+1)[:off]
		for _, around := range []string{"", " ", "/", ".", "-", "_", "%", "\\", "é"} {
			for _, s := range []string{
				prefix + around + a + ".png" + around + "tail",
				prefix + around + strings.ToUpper(b) + around,
				prefix + "f" + a + around,  // a 65-digit run: no name
				prefix + a + "." + b + ".", // two names in one token
			} {
				checkAgainstOracle(t, keys, [][]byte{[]byte(s)})
			}
		}
	}
}

// formsOf reads eight bytes at a time; it must say what a byte-by-byte look
// says, wherever the byte is.
func TestFormsOf(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab/ .\\%\x80\xffz09")
	for range 20000 {
		s := make([]byte, r.IntN(40))
		for i := range s {
			s[i] = alphabet[r.IntN(len(alphabet))]
		}
		want := 0
		if bytes.IndexByte(s, '\\') >= 0 {
			want |= hasEscape
		}
		if bytes.IndexByte(s, '%') >= 0 {
			want |= hasPercent
		}
		if bytes.IndexFunc(s, func(c rune) bool { return c >= 0x80 }) >= 0 {
			want |= hasWide
		}
		if got := formsOf(s); got != want {
			t.Fatalf("formsOf(%q) = %b, want %b", s, got, want)
		}
	}
}

// FuzzMarkLong: any session string against an index of content-addressed
// names only; the probing loop must mark what the oracle marks.
func FuzzMarkLong(f *testing.F) {
	a := digest("fuzz-long")
	f.Add("see " + a + ".png.")
	f.Add(strings.Repeat("q", 63) + a)
	f.Fuzz(func(t *testing.T, text string) {
		checkAgainstOracle(t, []string{a + ".png", "x/" + digest("fuzz-other")}, [][]byte{[]byte(text)})
	})
}
