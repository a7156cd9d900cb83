package retain_test

import (
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/retain/retaintest"
)

// Every spelling of the conformance table keeps its blob when the document's
// strings mark the index, and the control blob stays unmarked.
func TestRetentionConformanceTable(t *testing.T) {
	cases := retaintest.Cases()
	x := retain.NewIndex()
	ids := make([]int, len(cases))
	for i, c := range cases {
		ids[i] = x.Add(c.Blob)
	}
	control := x.Add(retaintest.Control())
	ex := &ref.Extractor{Found: func(ref.Reference, ref.Place) {}, Text: x.Mark}
	for _, c := range cases {
		if err := ex.Document(strings.NewReader(c.Doc), ref.Place{}); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
	}
	for i, c := range cases {
		if !x.Referenced(ids[i]) {
			t.Errorf("%s: blob %q not kept by %s", c.Name, c.Blob, c.Doc)
		}
	}
	if x.Referenced(control) {
		t.Errorf("the control blob %s was marked: the table proves nothing", retaintest.Control())
	}
}

// A string is never matched only in its raw, still-escaped spelling: each
// case's document, given to Mark as one raw text (a TEXT column that holds
// JSON), keeps its blob too.
func TestRetentionConformanceTableRawText(t *testing.T) {
	for _, c := range retaintest.Cases() {
		x := retain.NewIndex()
		id := x.Add(c.Blob)
		control := x.Add(retaintest.Control())
		x.Mark([]byte(c.Doc))
		if !x.Referenced(id) {
			t.Errorf("%s: raw text does not keep %q: %s", c.Name, c.Blob, c.Doc)
		}
		if x.Referenced(control) {
			t.Fatalf("%s: control marked", c.Name)
		}
	}
}
