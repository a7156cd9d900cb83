package trash_test

import (
	"slices"
	"testing"

	"github.com/mediactl/mediactl/pkg/trash"
)

// Sharded runs group into splits: one N, each shard at most once, a new split
// where a shard comes again; whole-store runs belong to none.
func TestSplits(t *testing.T) {
	run := func(name, shard string, blobs int64) trash.Run {
		return trash.Run{Run: name, Shard: shard, Blobs: blobs}
	}
	runs := []trash.Run{
		run("a", "0/4", 1), run("b", "2/4", 2), run("c", "", 5), run("d", "1/2", 1), run("e", "3/4", 3),
		run("f", "0/4", 4), // night two
		run("g", "1/4", 1),
	}
	got := trash.Splits(runs)
	if len(got) != 3 {
		t.Fatalf("%d splits: %+v", len(got), got)
	}
	names := func(s trash.Split) (out []string) {
		for _, r := range s.Runs {
			out = append(out, r.Run)
		}
		return out
	}
	if s := got[0]; s.N != 4 || !slices.Equal(names(s), []string{"a", "b", "e"}) || s.Blobs != 6 || !slices.Equal(s.Missing, []int{1}) {
		t.Errorf("first split of 4: %+v", s)
	}
	if s := got[1]; s.N != 2 || !slices.Equal(names(s), []string{"d"}) || !slices.Equal(s.Missing, []int{0}) {
		t.Errorf("split of 2: %+v", s)
	}
	if s := got[2]; s.N != 4 || !slices.Equal(names(s), []string{"f", "g"}) || !slices.Equal(s.Missing, []int{2, 3}) {
		t.Errorf("second split of 4: %+v", s)
	}
}

// A run that a shard's sweep without the trash left blobs in carries the
// shard in its name, but is no member of a split of trash runs: with it, a
// complete split of four would read as two incomplete ones.
func TestSplitsLeaveStageRunsOut(t *testing.T) {
	runs := []trash.Run{
		{Run: "20261201T000000Z-9-no-trash-shard-2-of-4", Shard: "2/4", Blobs: 1},
		{Run: "20261202T000000Z-10-shard-0-of-4", Shard: "0/4", Blobs: 5},
		{Run: "20261202T000100Z-11-shard-1-of-4", Shard: "1/4", Blobs: 5},
		{Run: "20261202T000200Z-12-shard-2-of-4", Shard: "2/4", Blobs: 5},
		{Run: "20261202T000300Z-13-shard-3-of-4", Shard: "3/4", Blobs: 5},
	}
	got := trash.Splits(runs)
	if len(got) != 1 || len(got[0].Runs) != 4 || len(got[0].Missing) != 0 || got[0].Blobs != 20 {
		t.Fatalf("splits %+v, want one complete split of the four trash runs", got)
	}
}
