package sha256pair_test

import (
	"fmt"

	"github.com/mediactl/mediactl/pkg/sha256pair"
)

// Two streams hashed in step; the longer one's tail is written alone.
func Example() {
	a, b := sha256pair.New(), sha256pair.New()
	sha256pair.WritePair(a, []byte("abc"), b, []byte("ab"))
	b.Write([]byte("c"))
	fmt.Printf("%x\n%x\n", a.Sum(nil), b.Sum(nil))
	// Output:
	// ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
	// ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
}
