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
