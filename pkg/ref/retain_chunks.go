package ref

// chunks is an append-only array in chunks of chunkLen elements: growing it
// never copies what it holds, so a large index costs no transient second copy
// of itself. A small one stays small: its first chunk grows as a slice does.
type chunks[T any] struct {
	c [][]T
}

const chunkBits = 16
const chunkLen = 1 << chunkBits

func (c *chunks[T]) add(v T) {
	if n := len(c.c); n == 0 || len(c.c[n-1]) == chunkLen {
		var next []T
		if n > 0 {
			next = make([]T, 0, chunkLen)
		}
		c.c = append(c.c, next)
	}
	last := &c.c[len(c.c)-1]
	*last = append(*last, v)
}

func (c *chunks[T]) at(i int) T { return c.c[i>>chunkBits][i&(chunkLen-1)] }
