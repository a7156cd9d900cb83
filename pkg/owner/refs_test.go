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
	if len(rs.Units) != 2 || rs.Units[0] != owner.UnitOf(a) || !rs.Has(owner.UnitOf(b), 0) || rs.Has(owner.UnitOf(ref.Place{Document: "/s/c.json"}), 0) {
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

// Rows are found again by their tag, whatever their places say: two rows
// with one key (a rowid reused during the read) are two units, and a row's
// references out of order join its unit.
func TestReferencesByTag(t *testing.T) {
	rs := owner.NewReferences()
	r1 := ref.Place{Source: "db", Table: "messages", Key: "rowid=1"}
	r2 := ref.Place{Source: "db", Table: "messages", Key: "rowid=2"}
	png := ref.Reference{Raw: "/x/1.png", Kind: ref.AbsPath, Path: "/x/1.png"}
	gif := ref.Reference{Raw: "/x/2.gif", Kind: ref.AbsPath, Path: "/x/2.gif"}
	doc := ref.Place{Source: "s", Document: "/s/a.json"}
	for _, f := range []scan.Found{
		{Ref: png, Place: r1, Tag: 3}, {Ref: png, Place: r2, Tag: 70000}, {Ref: gif, Place: doc},
		{Ref: gif, Place: r1, Tag: 3}, {Ref: png, Place: r1, Tag: 9}, {Ref: png, Place: r2, Tag: 70000},
	} {
		rs.Add(f)
	}
	want := []owner.Unit{owner.UnitOf(r1), owner.UnitOf(r2), owner.UnitOf(doc), owner.UnitOf(r1)}
	if !slices.Equal(rs.Units, want) || !slices.Equal(rs.Tags, []int64{3, 70000, 0, 9}) {
		t.Fatalf("units %v tags %v", rs.Units, rs.Tags)
	}
	if !rs.Has(owner.UnitOf(r1), 9) || rs.Has(owner.UnitOf(r1), 4) || rs.Has(owner.UnitOf(r1), 0) || !rs.Has(owner.UnitOf(doc), 0) || rs.Has(owner.UnitOf(r2), 1<<40) {
		t.Error("Has")
	}
	var units []int32
	for i := range rs.Len() {
		units = append(units, rs.Pair(i).Unit)
	}
	if !slices.Equal(units, []int32{0, 1, 2, 0, 3, 1}) {
		t.Errorf("pairs' units %v", units)
	}
}
