package ref_test

import (
	"fmt"
	"strings"

	"github.com/mediactl/mediactl/pkg/ref"
)

// Find the references in a forge session and resolve them against the store
// they should live in. The traversal is resolved lexically and stays outside.
func Example() {
	session := `{"messages": [{"parts": [
	  {"type": "image", "media": {"uri": "/srv/agent/.forge/files/inbound/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png"}},
	  {"type": "image", "media": {"uri": "/srv/agent/.forge/files/inbound/../../../../etc/passwd.png"}}]}]}`
	store := ref.NewLocalResolver("/srv/agent/.forge/files/inbound", nil, []string{"/srv/agent"})
	e := &ref.Extractor{Found: func(r ref.Reference, p ref.Place) {
		status, key := store.Resolve(r)
		fmt.Println(p.Pointer, status, key)
	}}
	if err := e.Document(strings.NewReader(session), ref.Place{Document: "t-1.json"}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// /messages/0/parts/0/media/uri inside 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png
	// /messages/0/parts/1/media/uri outside
}

// The retention rule: a blob whose digest appears anywhere, even in prose,
// is kept.
func ExampleIndex() {
	x := ref.NewIndex()
	used := x.Add("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png")
	unused := x.Add("4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg")
	x.Mark([]byte("the tool printed sha256 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"))
	fmt.Println(x.Referenced(used), x.Referenced(unused))
	// Output: true false
}
