package retain

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// benchRetention is a retention of n blobs with distinct times, as a store
// written over months has.
func benchRetention(n int) (*Retention, []uint32) {
	r := &Retention{b: &blobs{idx: NewIndex()}}
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Now()
	for range n {
		r.b.add(fmt.Sprintf("%064x.png", rng.Uint64()), 8, base.Add(time.Duration(rng.IntN(1<<40))))
	}
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	return r, ids
}

// The sorts of gc's candidates and report's size cap, of 2,000,000 blobs:
// through CompareByTime, and SortByTime.
func BenchmarkSortThroughCompareByTime(b *testing.B) {
	r, ids := benchRetention(2000000)
	for b.Loop() {
		x := slices.Clone(ids)
		slices.SortFunc(x, func(a, c uint32) int { return r.CompareByTime(int(a), int(c)) })
	}
}

func BenchmarkSortByTime(b *testing.B) {
	r, ids := benchRetention(2000000)
	for b.Loop() {
		x := slices.Clone(ids)
		r.SortByTime(x, 0)
	}
}
