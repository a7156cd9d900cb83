package owner_test

import (
	"slices"
	"testing"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
)

// A unit's references are kept in the order found, a run of equal ones once
// with its count, units in the order first seen; a reference under
// agent-inputs/{user}/ carries its own owner.
func TestReferences(t *testing.T) {
	rs := owner.NewReferences()
	a := ref.Place{Source: "s", Document: "/s/a.json"}
	b := ref.Place{Source: "s", Document: "/s/b.json"}
	png := ref.Reference{Raw: "/x/1.png", Kind: ref.AbsPath, Path: "/x/1.png"}
	pair := ref.Reference{Raw: "m:agent-inputs/u1/t1/uploads/f.png", Kind: ref.BucketPair, Bucket: "m", Path: "agent-inputs/u1/t1/uploads/f.png"}
	gif := ref.Reference{Raw: "/x/2.gif", Kind: ref.AbsPath, Path: "/x/2.gif"}
	for _, f := range []scan.Found{{Ref: png, Place: a}, {Ref: png, Place: a}, {Ref: pair, Place: b}, {Ref: png, Place: b}, {Ref: gif, Place: a}, {Ref: png, Place: a}} {
		rs.Add(f)
	}
	if len(rs.Units) != 2 || rs.Units[0] != owner.UnitOf(a) || !rs.Has(owner.UnitOf(b)) || rs.Has(owner.UnitOf(ref.Place{Document: "/s/c.json"})) {
		t.Fatalf("units %v", rs.Units)
	}
	type got struct {
		unit int32
		raw  string
		n    int64
	}
	var pairs []got
	for i := range rs.Len() {
		p := rs.Pair(i)
		pairs = append(pairs, got{p.Unit, p.Ref.Raw, p.N})
	}
	want := []got{{0, png.Raw, 2}, {1, pair.Raw, 1}, {1, png.Raw, 1}, {0, gif.Raw, 1}, {0, png.Raw, 1}}
	if !slices.Equal(pairs, want) {
		t.Fatalf("pairs %v, want %v", pairs, want)
	}
	if owner.Hint(pair) != pair.Path || owner.Hint(png) != "" {
		t.Errorf("Hint(pair) = %q, Hint(png) = %q", owner.Hint(pair), owner.Hint(png))
	}
}
