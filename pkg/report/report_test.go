package report_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/mediactl/mediactl/internal/realworld"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/report"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/target"
)

// run reports on a layout the way the command does.
func run(t *testing.T, layout, root string, rule owner.Rule) *report.Report {
	t.Helper()
	ctx := context.Background()
	tg, err := target.Open(ctx, target.Spec{Layout: layout, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	var stores []scan.Target
	for _, s := range tg.Stores {
		stores = append(stores, scan.Target{Store: s, Resolver: tg.Resolver(s)})
	}
	rule.Layout = tg.Layout.Name
	rep, err := report.Run(ctx, report.Options{Stores: stores, Sources: tg.Sources, Owners: rule,
		Companion: func(s store.Store) func(string) (string, bool) { return tg.Companion(s) }})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// checkSums: the owners' exclusive bytes, the shared bytes and the
// unattributed ones add up to the referenced bytes; referenced and orphaned
// to the stored ones; every per-store table to the store.
func checkSums(t *testing.T, rep *report.Report) {
	t.Helper()
	var excl report.Count
	for _, o := range rep.Owners {
		excl.Blobs += o.Exclusive.Blobs
		excl.Bytes += o.Exclusive.Bytes
		if o.Exclusive.Bytes > o.Referenced.Bytes {
			t.Errorf("owner %s: exclusive %d > referenced %d", o.ID, o.Exclusive.Bytes, o.Referenced.Bytes)
		}
	}
	tot := rep.Totals
	if got := excl.Bytes + tot.Shared.Bytes + rep.Unattributed.Exclusive.Bytes; got != tot.Referenced.Bytes {
		t.Errorf("exclusive %d + shared %d + unattributed %d = %d, referenced %d", excl.Bytes, tot.Shared.Bytes, rep.Unattributed.Exclusive.Bytes, got, tot.Referenced.Bytes)
	}
	if tot.Referenced.Bytes+tot.Orphaned.Bytes != tot.Stored.Bytes || tot.Referenced.Blobs+tot.Orphaned.Blobs != tot.Stored.Blobs {
		t.Errorf("referenced %+v + orphaned %+v != stored %+v", tot.Referenced, tot.Orphaned, tot.Stored)
	}
	for _, s := range rep.Stores {
		sum := func(name string, n int64) {
			if n != s.Stored.Bytes {
				t.Errorf("%s: %s adds up to %d bytes, the store holds %d", s.Store, name, n, s.Stored.Bytes)
			}
		}
		var a, b, c, d int64
		for _, x := range s.ByModified {
			a += x.Referenced.Bytes + x.Orphaned.Bytes
		}
		for _, x := range s.ByLastReference {
			b += x.Referenced.Bytes + x.Orphaned.Bytes
		}
		for _, x := range s.ByMediaType {
			c += x.Bytes
		}
		for _, x := range s.BySize {
			d += x.Bytes
		}
		sum("by_modified", a)
		sum("by_last_reference", b)
		sum("by_media_type", c)
		sum("by_size", d)
		if len(s.Growth.Days) != report.GrowthDays || len(s.Growth.Weeks) != 13 {
			t.Errorf("%s: %d days, %d weeks of growth", s.Store, len(s.Growth.Days), len(s.Growth.Weeks))
		}
		if s.Kind != "local" || s.Growth.Filesystem == nil {
			t.Errorf("%s: a local store without its file system: %+v", s.Store, s.Growth)
		}
	}
}

func TestForge(t *testing.T) {
	root, truth := realworld.Forge(t)
	rep := run(t, "forge", root, owner.Rule{})
	if !rep.Complete || rep.Outcome() != outcome.Found {
		t.Fatalf("complete %v, outcome %v (dangling references: found): %v", rep.Complete, rep.Outcome(), rep.Problems)
	}
	checkSums(t, rep)
	// Orphaned is what gc without a fence would remove; the refcount
	// policy what gc at its default fence would.
	if want := int64(len(truth["expect_gc_delete_min_age_0"].([]any))); rep.Totals.Orphaned.Blobs != want {
		t.Errorf("orphaned %d, the truth says gc removes %d", rep.Totals.Orphaned.Blobs, want)
	}
	var refcount int64
	for _, s := range rep.Stores {
		if p := s.Policies[0]; p.Name == "refcount" {
			refcount += p.Free.Blobs
		}
	}
	if want := int64(len(truth["expect_gc_delete_default"].([]any))); refcount != want {
		t.Errorf("refcount frees %d, the truth says gc removes %d", refcount, want)
	}
	if rep.Totals.DanglingReferences != int64(len(truth["dangling_refs"].([]any))) {
		t.Errorf("dangling %d, truth %d", rep.Totals.DanglingReferences, len(truth["dangling_refs"].([]any)))
	}
	// Owners are the tasks forge writes in each session, not the file names.
	byID := map[string]*report.OwnerStats{}
	for _, o := range rep.Owners {
		byID[o.ID] = o
	}
	for _, f := range truth["session_files"].([]any) {
		sf := f.(map[string]any)
		if sf["media_parts"].(float64) > 0 && byID[sf["task_id"].(string)] == nil {
			t.Errorf("task %s (%s) has media parts and no owner entry", sf["task_id"], sf["file"])
		}
	}
	if o := byID["slack:C0FC49A7F:1755287296.600528"]; o == nil || o.LastActivity == nil {
		t.Errorf("a slack task: %+v", o)
	}
}

func TestCoffer(t *testing.T) {
	home, truth := realworld.Coffer(t)
	rep := run(t, "coffer", home+"/.coffer", owner.Rule{})
	checkSums(t, rep)
	legacy := truth["legacy"].(map[string]any)
	conversations := int(legacy["conversations"].(float64))
	if rep.OwnerCount == 0 || rep.OwnerCount > conversations {
		t.Errorf("%d owners for %d conversations", rep.OwnerCount, conversations)
	}
	for _, o := range rep.Owners {
		if o.Agent == "" {
			t.Errorf("conversation %s without its agent", o.ID)
		}
	}
	// The paths coffer pruned dangle; the user's notes.tmp, which coffer
	// saved as <uuid>.tmp and a session names, is there and does not.
	if want := int64(len(legacy["dangling_paths"].([]any))); rep.Totals.DanglingBlobs != want {
		t.Errorf("%d blobs missing, the truth says %d", rep.Totals.DanglingBlobs, want)
	}
}

// A column no row has leaves every unit unattributed, listed, never
// dropped: their bytes are the unattributed bytes.
func TestUnattributed(t *testing.T) {
	root, _ := realworld.Forge(t)
	rep := run(t, "forge", root, owner.Rule{Pointer: "/no/such/member"})
	checkSums(t, rep)
	if len(rep.Owners) != 0 || rep.Unattributed.Units == 0 || int64(len(rep.Unattributed.UnitList)) != rep.Unattributed.Units {
		t.Fatalf("owners %d, unattributed %d units (%d listed)", len(rep.Owners), rep.Unattributed.Units, len(rep.Unattributed.UnitList))
	}
	if rep.Unattributed.Exclusive.Bytes != rep.Totals.Referenced.Bytes {
		t.Errorf("unattributed %d bytes, referenced %d", rep.Unattributed.Exclusive.Bytes, rep.Totals.Referenced.Bytes)
	}
}

// Pairs resolved a few at a time count as resolved all at once: the owners,
// the unattributed units and the totals are the same.
func TestResolveBlocks(t *testing.T) {
	for _, layout := range []string{"forge", "coffer"} {
		var root string
		if layout == "forge" {
			root, _ = realworld.Forge(t)
		} else {
			home, _ := realworld.Coffer(t)
			root = home + "/.coffer"
		}
		whole := run(t, layout, root, owner.Rule{})
		old := *report.ResolveBlock
		*report.ResolveBlock = 3
		blocks := run(t, layout, root, owner.Rule{})
		*report.ResolveBlock = old
		if len(whole.Owners) == 0 {
			t.Fatalf("%s: no owners", layout)
		}
		if !reflect.DeepEqual(whole.Owners, blocks.Owners) || !reflect.DeepEqual(whole.Unattributed, blocks.Unattributed) || whole.Totals != blocks.Totals {
			t.Errorf("%s: in blocks of 3 pairs: owners %d, unattributed %+v, totals %+v; at once: %d, %+v, %+v",
				layout, len(blocks.Owners), blocks.Unattributed, blocks.Totals, len(whole.Owners), whole.Unattributed, whole.Totals)
		}
	}
}
