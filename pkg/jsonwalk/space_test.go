package jsonwalk

import (
	"math/rand/v2"
	"testing"
)

// skipSpace stops where a byte-by-byte loop stops, for runs of every length
// and every mix of the four white-space bytes.
func TestSkipSpace(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("    \n\r\t x\"")
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		from := 0
		if len(b) > 0 {
			from = rng.IntN(len(b) + 1)
		}
		want := from
		for want < len(b) && (b[want] == ' ' || b[want] == '\n' || b[want] == '\r' || b[want] == '\t') {
			want++
		}
		if got := skipSpace(b, from); got != want {
			t.Fatalf("skipSpace(%q, %d) = %d, want %d", b, from, got, want)
		}
	}
}
