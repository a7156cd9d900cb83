package retain

import (
	"strings"
	"testing"
)

// markHex probes one byte in a stride (64 with digests alone, 16 with hex
// parts). A name must be found wherever it starts and whatever stands around
// it: every offset across two strides, word and other bytes around it, a run
// one digit too long, upper case.
func TestMarkHexFindsEveryName(t *testing.T) {
	a, b := digest("long-a"), digest("long-b")
	for _, keys := range [][]string{
		{a + ".png", "inbound/" + b, digest("never") + ".pdf"},
		{a + ".png", "inbound/" + b, "c0ffee" + a[:20] + ".final copy", "deadbeefdeadbeef0"},
	} {
		fill := "x/y-z.w q" // word and other bytes
		for off := range 140 {
			prefix := strings.Repeat(fill, off/len(fill)+1)[:off]
			for _, around := range []string{"", " ", "/", ".", "-", "_", "%", "\\", "é", "D", "0"} {
				for _, s := range []string{
					prefix + around + a + ".png" + around + "tail",
					prefix + around + strings.ToUpper(b) + around,
					prefix + "f" + a + around,  // a 65-digit run holds it
					prefix + a + "." + b + ".", // two names in one token
					prefix + around + "C0FFEE" + a[:20] + around,
					prefix + "DEADBEEFdeadbeef0" + around,
				} {
					checkAgainstOracle(t, keys, [][]byte{[]byte(s)})
				}
			}
		}
	}
}
