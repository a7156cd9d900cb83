package gc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/store"
)

// TestWriteJSONStreamed: documents written with the candidates streamed are
// byte for byte what the encoder writes for them whole, also when a key or a
// string elsewhere in the document spells the stub the writer looks for.
func TestWriteJSONStreamed(t *testing.T) {
	ctx := context.Background()
	var plans []*gc.Plan
	for i, keys := range [][]string{{"a.png", "b<&>.jpg", "u/candidates\":[].png"}, {}, {"x.png"}} {
		st, err := store.Open(ctx, "mem://")
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, k := range keys {
			if err := st.Put(ctx, k, strings.NewReader(k), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		p, err := gc.MakePlan(ctx, gc.Options{Store: st, Policy: gc.Age, MaxAge: time.Hour, Now: time.Now().Add(time.Duration(i+2) * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	type entry struct {
		Plan    *gc.Plan `json:"plan"`
		Refused string   `json:"refused,omitempty"`
	}
	doc := struct {
		Schema string  `json:"schema"`
		Stores []entry `json:"stores"`
	}{"mediactl.gc/v1", []entry{{Plan: plans[0]}, {Refused: "locked"}, {Plan: plans[1]}, {Plan: plans[2], Refused: `"candidates": []`}}}
	for _, indent := range []bool{true, false} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		if indent {
			enc.SetIndent("", "  ")
		}
		if err := enc.Encode(doc); err != nil {
			t.Fatal(err)
		}
		if err := gc.WriteJSON(&got, doc, indent, plans); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("indent %v: streamed\n%s\nwant\n%s", indent, got.String(), want.String())
		}
		if !strings.Contains(got.String(), "b\\u003c\\u0026\\u003e.jpg") {
			t.Errorf("indent %v: candidates missing:\n%s", indent, got.String())
		}
	}
}
