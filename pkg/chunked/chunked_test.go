package chunked_test

import (
	"fmt"
	"testing"

	"github.com/mediactl/mediactl/pkg/chunked"
)

func TestArray(t *testing.T) {
	var a chunked.Array[int]
	if a.Len() != 0 {
		t.Fatal("a new array is not empty")
	}
	const n = 3*65536 + 17
	for i := range n {
		a.Add(i * 3)
	}
	if a.Len() != n {
		t.Fatalf("Len = %d, want %d", a.Len(), n)
	}
	for _, i := range []int{0, 1, 65535, 65536, 65537, 2 * 65536, n - 1} {
		if a.At(i) != i*3 {
			t.Fatalf("At(%d) = %d", i, a.At(i))
		}
	}
}

func ExampleArray() {
	var sizes chunked.Array[int64]
	for _, s := range []int64{120, 4096, 7} {
		sizes.Add(s)
	}
	fmt.Println(sizes.Len(), sizes.At(1))
	// Output: 3 4096
}
