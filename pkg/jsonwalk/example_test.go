package jsonwalk_test

import (
	"fmt"
	"strings"

	"github.com/mediactl/mediactl/pkg/jsonwalk"
)

type printer struct{}

func (printer) Begin(*jsonwalk.Walker, byte) error { return nil }
func (printer) End(*jsonwalk.Walker, byte) error   { return nil }
func (printer) String(w *jsonwalk.Walker, s []byte, off int64) error {
	fmt.Printf("%s = %q (offset %d)\n", w.Pointer(), s, off)
	return nil
}

// Every string value with its JSON pointer and byte offset, from a stream of
// two JSON Lines records; the second is cut short.
func Example() {
	in := `{"task_id": "t-1", "parts": [{"uri": "/srv/a.png"}]}
{"task_id": "t-2", "parts": [`
	err := jsonwalk.New(strings.NewReader(in), printer{}, jsonwalk.Limits{}).Run()
	fmt.Println(err)
	// Output:
	// /task_id = "t-1" (offset 12)
	// /parts/0/uri = "/srv/a.png" (offset 37)
	// /task_id = "t-2" (offset 65)
	// invalid JSON at offset 82: unexpected end of input inside array at /parts (truncated file?)
}
