package retain

import (
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
