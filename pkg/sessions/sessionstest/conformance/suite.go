package conformance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions"
)

// Fixture is a session source holding the units it was made with, and the
// out-of-band access to them that a test needs: what a runtime or the
// database itself would read and write, never through package sessions.
type Fixture struct {
	// Spec opens the source with sessions.Open (and sessions.OpenRewriter
	// when Rewritable).
	Spec string
	// Places[i] is where units[i] is, as Walk reports it: Source and
	// Document, or Source, Table, Key and Column (Pointer and Offset are not
	// compared).
	Places []ref.Place
	// Items is how many items a walk of the whole source yields, the units'
	// and any other (a row's key and other columns); 0 means len(units).
	Items int
	// Counts is what a walk of the whole source counts.
	Counts sessions.Counts
	// Read returns the bytes kept at p as the store holds them (a file's
	// bytes, an object's, a value's text form), nil when there is nothing
	// there. It must work for the place of every item a walk yields.
	Read func(t testing.TB, p ref.Place) []byte
	// Write replaces the units at the given places by the given bytes, as
	// the runtime would (a file or object replaced whole; in a database,
	// all of them in one transaction).
	Write func(t testing.TB, units map[ref.Place][]byte)
	// Snapshot says that a walk reads the whole source in one snapshot (a
	// database's read transaction): units written together during the walk
	// are all seen or none. Without it each unit is still seen whole.
	Snapshot bool
	// Exclude are Options.Exclude patterns that leave out the units
	// Excluded (indexes into units) and nothing else; Walk counts
	// ExcludedCount. Nil when the source takes no exclusions.
	Exclude       []string
	Excluded      []int
	ExcludedCount int64
	// Rewritable says that sessions.OpenRewriter opens Spec.
	Rewritable bool
}

// Factory makes a new source holding units, each once and byte for byte in
// the shape the source keeps (Unit.JSON, or Unit.JSONL for a JSON Lines
// source). It is called once per case, with the case's t, and may register
// cleanups on it.
type Factory func(t *testing.T, units []Unit) *Fixture

// NumUnits is how many units each case plants.
const NumUnits = 16

// Run runs the conformance suite against the sources f makes: every session
// source kind passes it unchanged. The cases:
//
//   - Walk: every unit is yielded once, at its place, in the same order on
//     every walk; the items and the counts are what the fixture says.
//   - Places: what the store holds at the place of every item is exactly
//     what the walk yielded for it.
//   - Snapshot: units replaced during a walk are each seen whole, old or
//     new, and once; in a source read in one snapshot, all of them old or
//     all of them new.
//   - Exclude: the excluded units are neither yielded nor offered to a
//     rewrite's Edit, and they are counted.
//   - RewriteRollback: a rewrite of every unit's reference writes each unit
//     as Edit made it, at Walk's places and in Walk's order, and changes
//     nothing else; the reverse rewrite, as migrate's rollback does it, puts
//     back every byte.
//   - InterruptedRewrite: a rewrite canceled midway leaves every unit
//     either as it was or as prepared, never anything in between; the
//     reverse rewrite of what was prepared puts back every byte.
func Run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		fn   func(*testing.T, *Fixture, []Unit)
	}{
		{"Walk", testWalk},
		{"Places", testPlaces},
		{"Snapshot", testSnapshot},
		{"Exclude", testExclude},
		{"RewriteRollback", testRewriteRollback},
		{"InterruptedRewrite", testInterruptedRewrite},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			units := Units(NumUnits)
			fx := f(t, units)
			if len(fx.Places) != len(units) {
				t.Fatalf("the fixture has %d places for %d units", len(fx.Places), len(units))
			}
			tc.fn(t, fx, units)
		})
	}
}

var ctx = context.Background()

// unitPlace is p without what locates a string inside the unit.
func unitPlace(p ref.Place) ref.Place {
	return ref.Place{Source: p.Source, Document: p.Document, Table: p.Table, Key: p.Key, Column: p.Column}
}

// walked is one item a walk yielded, read.
type walked struct {
	place ref.Place
	data  []byte
}

// walk reads the whole source; during calls fn after each item is read.
func walk(t *testing.T, fx *Fixture, opts sessions.Options, during func(i int, w walked)) ([]walked, sessions.Counts) {
	t.Helper()
	src, err := sessions.Open(ctx, fx.Spec, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", fx.Spec, err)
	}
	defer src.Close()
	var out []walked
	counts, err := src.Walk(ctx, func(it sessions.Item) error {
		if it.Err != nil {
			t.Errorf("item %s: %v", it.Place, it.Err)
			return nil
		}
		for _, v := range it.Values {
			out = append(out, walked{place: unitPlace(it.ValuePlace(v)), data: v.Text})
			if during != nil {
				during(len(out)-1, out[len(out)-1])
			}
		}
		if it.Values != nil {
			return nil
		}
		w := walked{place: unitPlace(it.Place)}
		if it.Open != nil {
			r, err := it.Open()
			if err != nil {
				t.Errorf("open %s: %v", it.Place, err)
				return nil
			}
			w.data, err = io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Errorf("read %s: %v", it.Place, err)
				return nil
			}
		}
		out = append(out, w)
		if during != nil {
			during(len(out)-1, w)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%s): %v", fx.Spec, err)
	}
	return out, counts
}

// byPlace indexes a walk by place, failing the test for a place yielded twice.
func byPlace(t *testing.T, ws []walked) map[ref.Place][]byte {
	t.Helper()
	m := make(map[ref.Place][]byte, len(ws))
	for _, w := range ws {
		if _, dup := m[w.place]; dup {
			t.Errorf("%s yielded twice", w.place)
		}
		m[w.place] = w.data
	}
	return m
}

func wantItems(fx *Fixture, units []Unit) int {
	if fx.Items > 0 {
		return fx.Items
	}
	return len(units)
}

func testWalk(t *testing.T, fx *Fixture, units []Unit) {
	first, counts := walk(t, fx, sessions.Options{}, nil)
	if counts != fx.Counts {
		t.Errorf("counts %+v, want %+v", counts, fx.Counts)
	}
	if len(first) != wantItems(fx, units) {
		t.Errorf("%d items, want %d", len(first), wantItems(fx, units))
	}
	got := byPlace(t, first)
	for i, u := range units {
		data, ok := got[unitPlace(fx.Places[i])]
		switch {
		case !ok:
			t.Errorf("unit %s (%s) not yielded", u.ID, fx.Places[i])
		case !bytes.Contains(data, []byte(u.ID)) || !bytes.Contains(data, []byte(u.Ref)):
			t.Errorf("%s holds %q, not unit %s", fx.Places[i], data, u.ID)
		}
	}
	for _, w := range first {
		for i, u := range units {
			if bytes.Contains(w.data, []byte(u.Ref)) && w.place != unitPlace(fx.Places[i]) {
				t.Errorf("%s holds the reference of unit %s, which is at %s", w.place, u.ID, fx.Places[i])
			}
		}
	}
	second, counts2 := walk(t, fx, sessions.Options{}, nil)
	if counts2 != counts {
		t.Errorf("a second walk counts %+v, the first %+v", counts2, counts)
	}
	if !slices.EqualFunc(first, second, func(a, b walked) bool { return a.place == b.place && bytes.Equal(a.data, b.data) }) {
		t.Errorf("two walks of an unchanged source differ (order or bytes)")
	}
}

func testPlaces(t *testing.T, fx *Fixture, units []Unit) {
	ws, _ := walk(t, fx, sessions.Options{}, nil)
	for _, w := range ws {
		if got := fx.Read(t, w.place); !bytes.Equal(got, w.data) {
			t.Errorf("%s holds %q; the walk yielded %q there", w.place, got, w.data)
		}
	}
	for i, p := range fx.Places {
		if p.Source == "" {
			t.Errorf("place of unit %s names no source", units[i].ID)
		}
	}
}

func testSnapshot(t *testing.T, fx *Fixture, units []Unit) {
	before, _ := walk(t, fx, sessions.Options{}, nil)
	old := byPlace(t, before)
	// The unit read last and one in the middle, both still ahead when the
	// first item is yielded.
	var order []int
	for _, w := range before {
		if i := slices.Index(fx.Places, w.place); i >= 0 {
			order = append(order, i)
		}
	}
	if len(order) != len(units) {
		t.Fatalf("the walk yields %d of %d units", len(order), len(units))
	}
	chosen := []int{order[len(order)/2], order[len(order)-1]}
	changes := map[ref.Place][]byte{}
	for _, i := range chosen {
		p := unitPlace(fx.Places[i])
		changes[p] = bytes.ReplaceAll(old[p], []byte(units[i].Ref), []byte(units[i].Alt))
	}
	written := false
	during, _ := walk(t, fx, sessions.Options{}, func(i int, w walked) {
		if !written {
			written = true
			fx.Write(t, changes)
		}
	})
	got := byPlace(t, during)
	if len(during) != len(before) {
		t.Errorf("a walk during a write yields %d items, %d before", len(during), len(before))
	}
	var sawNew, sawOld int
	for _, i := range chosen {
		p := unitPlace(fx.Places[i])
		stored := fx.Read(t, p)
		if !bytes.Contains(stored, []byte(units[i].Alt)) {
			t.Fatalf("the write of %s did not reach the store: it holds %q", p, stored)
		}
		switch data := got[p]; {
		case bytes.Equal(data, old[p]):
			sawOld++
		case bytes.Equal(data, stored):
			sawNew++
		default:
			t.Errorf("%s was read neither as it was nor as it was written: %q", p, data)
		}
	}
	if fx.Snapshot && sawOld > 0 && sawNew > 0 {
		t.Errorf("of units written together during the walk, %d were read old and %d new: not one snapshot", sawOld, sawNew)
	}
	for p, data := range old {
		if _, ok := changes[p]; !ok && !bytes.Equal(got[p], data) {
			t.Errorf("%s, not written, was read as %q, was %q", p, got[p], data)
		}
	}
	t.Logf("units written during the walk: %d read old, %d new", sawOld, sawNew)
}

func testExclude(t *testing.T, fx *Fixture, units []Unit) {
	if fx.Exclude == nil {
		t.Skip("the source takes no exclusions")
	}
	ws, counts := walk(t, fx, sessions.Options{Exclude: fx.Exclude}, nil)
	got := byPlace(t, ws)
	for i, u := range units {
		_, ok := got[unitPlace(fx.Places[i])]
		if excluded := slices.Contains(fx.Excluded, i); ok == excluded {
			t.Errorf("unit %s (%s): yielded %v, excluded by %q %v", u.ID, fx.Places[i], ok, fx.Exclude, excluded)
		}
	}
	if counts.Excluded != fx.ExcludedCount {
		t.Errorf("Counts.Excluded = %d, want %d", counts.Excluded, fx.ExcludedCount)
	}
	if !fx.Rewritable {
		return
	}
	w, err := sessions.OpenRewriter(ctx, fx.Spec, sessions.Options{Exclude: fx.Exclude})
	if err != nil {
		t.Fatalf("OpenRewriter: %v", err)
	}
	defer w.Close()
	offered := map[ref.Place]bool{}
	if _, err := w.Rewrite(ctx, func(p ref.Place, old []byte) ([]byte, error) {
		offered[unitPlace(p)] = true
		return nil, nil
	}, sessions.RewriteOptions{}); err != nil {
		t.Fatalf("Rewrite: %v", err)
	}
	for i, u := range units {
		p := unitPlace(fx.Places[i])
		if excluded := slices.Contains(fx.Excluded, i); offered[p] == excluded {
			t.Errorf("unit %s (%s): offered to Edit %v, excluded %v", u.ID, p, offered[p], excluded)
		}
	}
}

// replaceRefs is migrate's rewrite in small: every unit's reference becomes
// its Alt.
func replaceRefs(units []Unit, old []byte) []byte {
	out := old
	for _, u := range units {
		if bytes.Contains(out, []byte(u.Ref)) {
			out = bytes.ReplaceAll(out, []byte(u.Ref), []byte(u.Alt))
		}
	}
	if bytes.Equal(out, old) {
		return nil
	}
	return out
}

// rollback is migrate's rollback in small: a unit that holds what a change
// made of it gets its old bytes back. It returns what was restored.
func rollback(t *testing.T, fx *Fixture, journal map[ref.Place]sessions.Change) map[ref.Place]bool {
	t.Helper()
	w, err := sessions.OpenRewriter(ctx, fx.Spec, sessions.Options{})
	if err != nil {
		t.Fatalf("OpenRewriter: %v", err)
	}
	defer w.Close()
	restored := map[ref.Place]bool{}
	c, err := w.Rewrite(ctx, func(p ref.Place, cur []byte) ([]byte, error) {
		ch, ok := journal[unitPlace(p)]
		if !ok || !bytes.Equal(cur, ch.New) {
			return nil, nil
		}
		return slices.Clone(ch.Old), nil
	}, sessions.RewriteOptions{Committed: func(ch sessions.Change) { restored[unitPlace(ch.Place)] = true }})
	if err != nil {
		t.Fatalf("rollback: %v (counts %+v)", err, c)
	}
	return restored
}

// sameAsWalk fails the test for every item that is not as it was in orig.
func sameAsWalk(t *testing.T, fx *Fixture, orig []walked, what string) {
	t.Helper()
	now, _ := walk(t, fx, sessions.Options{}, nil)
	if !slices.EqualFunc(orig, now, func(a, b walked) bool { return a.place == b.place && bytes.Equal(a.data, b.data) }) {
		got := byPlace(t, now)
		for _, w := range orig {
			if !bytes.Equal(got[w.place], w.data) {
				t.Errorf("%s: %s holds %q, was %q", what, w.place, got[w.place], w.data)
			}
		}
		t.Errorf("%s: the source is not as it was, byte for byte (%d items, were %d)", what, len(now), len(orig))
	}
	for _, w := range orig {
		if got := fx.Read(t, w.place); !bytes.Equal(got, w.data) {
			t.Errorf("%s: the store holds %q at %s, was %q", what, got, w.place, w.data)
		}
	}
}

func testRewriteRollback(t *testing.T, fx *Fixture, units []Unit) {
	if !fx.Rewritable {
		t.Skip("the source cannot be rewritten")
	}
	orig, _ := walk(t, fx, sessions.Options{}, nil)
	origBy := byPlace(t, orig)
	w, err := sessions.OpenRewriter(ctx, fx.Spec, sessions.Options{})
	if err != nil {
		t.Fatalf("OpenRewriter: %v", err)
	}
	defer w.Close()
	var offered []ref.Place
	prepared := map[ref.Place]sessions.Change{}
	journal := map[ref.Place]sessions.Change{}
	c, err := w.Rewrite(ctx, func(p ref.Place, old []byte) ([]byte, error) {
		p = unitPlace(p)
		offered = append(offered, p)
		if !bytes.Equal(old, origBy[p]) {
			t.Errorf("Edit is offered %q at %s; the walk read %q", old, p, origBy[p])
		}
		return replaceRefs(units, old), nil
	}, sessions.RewriteOptions{
		Prepare:   func(ch sessions.Change) error { prepared[unitPlace(ch.Place)] = ch; return nil },
		Committed: func(ch sessions.Change) { journal[unitPlace(ch.Place)] = ch },
	})
	if err != nil {
		t.Fatalf("Rewrite: %v", err)
	}
	if c.Changed != int64(len(units)) || c.Conflicts != 0 || c.Failed != 0 || c.Gone != 0 || c.InUse != 0 {
		t.Errorf("rewrite counts %+v, want %d changed and no problem", c, len(units))
	}
	// Walk's places, in Walk's order.
	var walkOrder []ref.Place
	for _, w := range orig {
		if slices.Contains(offered, w.place) {
			walkOrder = append(walkOrder, w.place)
		}
	}
	if !slices.Equal(offered, walkOrder) || len(offered) < len(units) {
		t.Errorf("Edit was offered %d places (%v), not Walk's in Walk's order (%v)", len(offered), offered, walkOrder)
	}
	for i, u := range units {
		p := unitPlace(fx.Places[i])
		ch, ok := journal[p]
		if !ok {
			t.Errorf("unit %s (%s) not rewritten", u.ID, p)
			continue
		}
		if !bytes.Equal(ch.Old, origBy[p]) || !bytes.Equal(ch.New, prepared[p].New) {
			t.Errorf("%s: committed %q → %q, prepared %q, read %q", p, ch.Old, ch.New, prepared[p].New, origBy[p])
		}
		if got := fx.Read(t, p); !bytes.Equal(got, ch.New) || !bytes.Contains(got, []byte(u.Alt)) || bytes.Contains(got, []byte(u.Ref)) {
			t.Errorf("%s holds %q after the rewrite; committed %q", p, got, ch.New)
		}
	}
	after, _ := walk(t, fx, sessions.Options{}, nil)
	for _, w := range after {
		ch, changed := journal[w.place]
		switch {
		case changed && !bytes.Equal(w.data, ch.New):
			t.Errorf("%s walks as %q after the rewrite, committed %q", w.place, w.data, ch.New)
		case !changed && !bytes.Equal(w.data, origBy[w.place]):
			t.Errorf("%s, not rewritten, changed: %q, was %q", w.place, w.data, origBy[w.place])
		}
	}
	if restored := rollback(t, fx, journal); len(restored) != len(journal) {
		t.Errorf("rollback restored %d of %d units", len(restored), len(journal))
	}
	sameAsWalk(t, fx, orig, "after rollback")
}

func testInterruptedRewrite(t *testing.T, fx *Fixture, units []Unit) {
	if !fx.Rewritable {
		t.Skip("the source cannot be rewritten")
	}
	// Canceled as the first SIGINT does, midway: while units are edited
	// (a database's changes not yet prepared), and while they are prepared
	// (some journaled, not yet written).
	for _, at := range []string{"Edit", "Prepare"} {
		t.Run("In"+at, func(t *testing.T) { interruptedRewrite(t, fx, units, at) })
	}
}

func interruptedRewrite(t *testing.T, fx *Fixture, units []Unit, at string) {
	orig, _ := walk(t, fx, sessions.Options{}, nil)
	w, err := sessions.OpenRewriter(ctx, fx.Spec, sessions.Options{})
	if err != nil {
		t.Fatalf("OpenRewriter: %v", err)
	}
	defer w.Close()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	edits := 0
	prepared := map[ref.Place]sessions.Change{}
	committed := map[ref.Place]bool{}
	c, err := w.Rewrite(rctx, func(p ref.Place, old []byte) ([]byte, error) {
		nw := replaceRefs(units, old)
		if nw != nil {
			if edits++; at == "Edit" && edits == len(units)/2 {
				cancel()
			}
		}
		return nw, nil
	}, sessions.RewriteOptions{
		Prepare: func(ch sessions.Change) error {
			prepared[unitPlace(ch.Place)] = ch
			if at == "Prepare" && len(prepared) == len(units)/2 {
				cancel()
			}
			return nil
		},
		Committed: func(ch sessions.Change) { committed[unitPlace(ch.Place)] = true },
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("canceled rewrite returned %v, want context.Canceled", err)
	}
	if c.Changed >= int64(len(units)) || int(c.Changed) != len(committed) {
		t.Errorf("canceled rewrite counts %+v, %d committed, of %d units", c, len(committed), len(units))
	}
	var asOld, asNew int
	for _, ow := range orig {
		got := fx.Read(t, ow.place)
		ch, wasPrepared := prepared[ow.place]
		switch {
		case bytes.Equal(got, ow.data):
			asOld++
			if committed[ow.place] {
				t.Errorf("%s is committed but holds its old bytes", ow.place)
			}
		case wasPrepared && bytes.Equal(got, ch.New):
			asNew++
		default:
			t.Errorf("%s is torn by the interrupted rewrite: holds %q; was %q, prepared %q", ow.place, got, ow.data, ch.New)
		}
	}
	if asNew < len(committed) {
		t.Errorf("%d units hold their new bytes, %d were committed", asNew, len(committed))
	}
	t.Logf("interrupted after %d edits: %d units new, %d as they were, %d prepared", edits, asNew, asOld, len(prepared))
	// A journal keeps prepared changes as "old or new": the rollback works
	// from them.
	rollback(t, fx, prepared)
	sameAsWalk(t, fx, orig, "after the rollback of an interrupted rewrite")
}
