package owner_test

import (
	"testing"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
)

// A unit's references are counted once per distinct reference, units in
// the order first seen; a reference under agent-inputs/{user}/ carries its
// own owner.
func TestReferences(t *testing.T) {
	rs := owner.NewReferences()
	a := ref.Place{Source: "s", Document: "/s/a.json"}
	b := ref.Place{Source: "s", Document: "/s/b.json"}
	png := ref.Reference{Raw: "/x/1.png", Kind: ref.AbsPath, Path: "/x/1.png"}
	pair := ref.Reference{Raw: "m:agent-inputs/u1/t1/uploads/f.png", Kind: ref.BucketPair, Bucket: "m", Path: "agent-inputs/u1/t1/uploads/f.png"}
	for _, f := range []scan.Found{{Ref: png, Place: a}, {Ref: png, Place: a}, {Ref: pair, Place: b}, {Ref: png, Place: b}} {
		rs.Add(f)
	}
	if len(rs.Units) != 2 || rs.Units[0] != owner.UnitOf(a) || !rs.Has(owner.UnitOf(b)) || rs.Has(owner.UnitOf(ref.Place{Document: "/s/c.json"})) {
		t.Fatalf("units %v", rs.Units)
	}
	if len(rs.Pairs) != 3 {
		t.Fatalf("%d pairs, want 3", len(rs.Pairs))
	}
	for k, p := range rs.Pairs {
		if k.Unit == 0 && p.N != 2 {
			t.Errorf("a.json holds the png twice: N = %d", p.N)
		}
	}
	if owner.Hint(pair) != pair.Path || owner.Hint(png) != "" {
		t.Errorf("Hint(pair) = %q, Hint(png) = %q", owner.Hint(pair), owner.Hint(png))
	}
}
