package retain

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestBlobSizes: sizes are kept in 32 bits, those of 4 GiB and more aside.
func TestBlobSizes(t *testing.T) {
	b := &blobs{idx: NewIndex()}
	sizes := []int64{0, 1, bigSize - 1, bigSize, 5 << 30, 1 << 62, -1}
	for i, s := range sizes {
		b.add(string(rune('a'+i))+".bin", s, time.Unix(0, int64(i)))
	}
	for i, s := range sizes {
		if got := b.size(i); got != s {
			t.Errorf("size of blob %d = %d, want %d", i, got, s)
		}
		if got := b.mtimes.At(i); got != int64(i) {
			t.Errorf("time of blob %d = %d", i, got)
		}
	}
}

// SortByTime orders as a sort through CompareByTime does — oldest first, a
// tie by key — and keeps the caller's flag bits.
func TestSortByTime(t *testing.T) {
	r := &Retention{b: &blobs{idx: NewIndex()}}
	rng := rand.New(rand.NewPCG(1, 2))
	const n, flag = 5000, 1 << 31
	for i := range n {
		// Few distinct times: many ties, decided by the key.
		r.b.add(fmt.Sprintf("%064x.png", rng.Uint64()), int64(i), time.Unix(int64(rng.IntN(50)), 0))
	}
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
		if rng.IntN(3) == 0 {
			ids[i] |= flag
		}
	}
	rng.Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	want := slices.Clone(ids)
	slices.SortFunc(want, func(x, y uint32) int { return r.CompareByTime(int(x&^flag), int(y&^flag)) })
	r.SortByTime(ids, flag)
	if !slices.Equal(ids, want) {
		t.Fatal("SortByTime's order is not CompareByTime's")
	}
	for i := 1; i < n; i++ {
		a, b := int(ids[i-1]&^flag), int(ids[i]&^flag)
		if r.ModTime(a).After(r.ModTime(b)) || r.ModTime(a).Equal(r.ModTime(b)) && r.Key(a) >= r.Key(b) {
			t.Fatalf("%s (%v) before %s (%v)", r.Key(a), r.ModTime(a), r.Key(b), r.ModTime(b))
		}
	}
}
