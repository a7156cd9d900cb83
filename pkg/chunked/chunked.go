// Package chunked is an append-only array stored in fixed-size chunks.
//
// Growing a Go slice copies it; for the per-blob arrays of a million-blob plan
// that transient second copy is the peak of the run. An Array never copies
// what it holds: it adds chunks of 65,536 elements. A small one stays small,
// its first chunk growing as a slice does.
package chunked

const chunkBits = 16
const chunkLen = 1 << chunkBits

// Array is an append-only array. The zero value is empty and ready to use.
type Array[T any] struct {
	c [][]T
}

// Add appends v; its index is the previous Len.
func (a *Array[T]) Add(v T) {
	if n := len(a.c); n == 0 || len(a.c[n-1]) == chunkLen {
		var next []T
		if n > 0 {
			next = make([]T, 0, chunkLen)
		}
		a.c = append(a.c, next)
	}
	last := &a.c[len(a.c)-1]
	*last = append(*last, v)
}

// At returns element i, 0 <= i < Len().
func (a *Array[T]) At(i int) T { return a.c[i>>chunkBits][i&(chunkLen-1)] }

// Len is the number of elements added.
func (a *Array[T]) Len() int {
	if len(a.c) == 0 {
		return 0
	}
	return (len(a.c)-1)*chunkLen + len(a.c[len(a.c)-1])
}
