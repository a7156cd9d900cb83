package retain

import (
	"time"

	"github.com/mediactl/mediactl/pkg/chunked"
)

// blobs are the store's blobs as Mark listed them: keys in the index, and
// size and modification time by id, in flat arrays (about 12 bytes a blob
// beside the index), so that a retention of millions of blobs stays small.
type blobs struct {
	idx    *Index
	sizes  chunked.Array[uint32] // bigSize: in bigSizes
	mtimes chunked.Array[int64]  // Unix nanoseconds
	// bigSizes holds the sizes of 4 GiB and more (and any negative one).
	bigSizes map[int]int64
}

const bigSize = 1<<32 - 1

func (b *blobs) add(key string, size int64, mtime time.Time) int {
	id := b.idx.Add(key)
	if size < 0 || size >= bigSize {
		if b.bigSizes == nil {
			b.bigSizes = map[int]int64{}
		}
		b.bigSizes[id] = size
		b.sizes.Add(bigSize)
	} else {
		b.sizes.Add(uint32(size))
	}
	b.mtimes.Add(mtime.UnixNano())
	return id
}

func (b *blobs) size(id int) int64 {
	if s := b.sizes.At(id); s != bigSize {
		return int64(s)
	}
	return b.bigSizes[id]
}
