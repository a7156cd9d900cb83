package retain_test

import (
	"fmt"

	"github.com/mediactl/mediactl/pkg/retain"
)

// The retention rule: a blob whose digest appears anywhere, even in prose,
// is kept; a human name is kept by its words, whatever escapes stand between
// them.
func ExampleIndex() {
	x := retain.NewIndex()
	used := x.Add("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png")
	unused := x.Add("4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg")
	upload := x.Add("agent-inputs/u1/t1/uploads/Bob's März photo.png")
	x.Mark([]byte("the tool printed sha256 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"))
	x.Mark([]byte(`<a href="/view?f=Bob%26%2339%3Bs+M%C3%A4rz+photo.png">`))
	fmt.Println(x.Referenced(used), x.Referenced(unused), x.Referenced(upload))
	// Output: true false true
}
