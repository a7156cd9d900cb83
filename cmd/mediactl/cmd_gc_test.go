package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/store"
)

// TestGCJSONStreamed: the gc documents, written with the candidates streamed,
// are byte for byte what the encoder writes for them whole.
func TestGCJSONStreamed(t *testing.T) {
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
	sr := func(p *gc.Plan) *gc.StoreReport { return &gc.StoreReport{Plan: p} }
	reports := []*gcStoreJSON{{StoreReport: sr(plans[0])}, {StoreReport: sr(nil), Refused: "locked", ExitCode: 4}, {StoreReport: sr(plans[1])}, {StoreReport: sr(plans[2]), Refused: `"candidates": []`}}
	doc := struct {
		Schema string         `json:"schema"`
		Stores []*gcStoreJSON `json:"stores"`
	}{gcSchema, reports}
	for _, indent := range []bool{true, false} {
		var want, got bytes.Buffer
		var err error
		if indent {
			err = writeJSON(&want, doc)
		} else {
			err = writeJSONLine(&want, doc)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := writeGCJSON(&got, doc, indent, plans); err != nil {
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
