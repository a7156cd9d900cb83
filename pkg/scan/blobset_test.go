package scan

import (
	"crypto/sha256"
	"hash/maphash"
	"testing"
)

// flatTable finds every key it was given, with its state, and no other, as a
// map does, across its growths.
func TestFlatTableAgreesWithMap(t *testing.T) {
	seed := maphash.MakeSeed()
	var tab flatTable
	want := map[blobKey]blobState{}
	for i := range 5000 {
		var k blobKey
		d := sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16)})
		k.digest, k.ext = d, uint16(i%3)
		if i%5 == 0 {
			k.digest[0] = 0 // many keys sharing their first bytes, as one shard's do
		}
		s, had := tab.slot(seed, k)
		if _, ok := want[k]; had != ok {
			t.Fatalf("key %d: had %v, map says %v", i, had, ok)
		}
		if !had {
			s.key, s.used = k, true
			tab.n++
		}
		s.st |= blobState(1 << (i % 8))
		want[k] = s.st
		if i%7 == 0 { // and again: found, not added
			if s2, had := tab.slot(seed, k); !had || s2.st != s.st {
				t.Fatalf("key %d not found again", i)
			}
		}
	}
	if tab.n != len(want) {
		t.Fatalf("%d used, want %d", tab.n, len(want))
	}
	used := 0
	for _, s := range tab.slots {
		if s.used {
			used++
			if want[s.key] != s.st {
				t.Fatalf("state %v, want %v", s.st, want[s.key])
			}
		}
	}
	if used != len(want) || used*4 > len(tab.slots)*3 {
		t.Fatalf("%d slots used of %d", used, len(tab.slots))
	}
}
