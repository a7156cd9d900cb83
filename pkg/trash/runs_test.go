package trash_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
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

// Runs that name their split are grouped by the name, not by their order: on
// a quiet night a shard that removed nothing leaves no run, and by order the
// next night's run of that shard was counted in this night's split, which
// then read "all shards ran" while the next one missed the shard that ran.
// A shard run twice in one named split (a pod retried) is in it twice.
func TestSplitsByName(t *testing.T) {
	run := func(name, shard, split string) trash.Run {
		return trash.Run{Run: name, Shard: shard, Split: split, Blobs: 1}
	}
	runs := []trash.Run{
		run("a", "1/2", "gc-29412000"),                                 // night one: shard 0 had nothing to remove
		run("b", "0/2", "gc-29413440"), run("c", "1/2", "gc-29413440"), // night two
		run("d", "1/2", "gc-29413440"),           // night two's shard 1, retried
		run("e", "0/2", ""), run("f", "1/2", ""), // unnamed: by order, as before
	}
	got := trash.Splits(runs)
	if len(got) != 3 {
		t.Fatalf("%d splits: %+v", len(got), got)
	}
	if s := got[0]; s.ID != "gc-29412000" || len(s.Runs) != 1 || !slices.Equal(s.Missing, []int{0}) {
		t.Errorf("night one: %+v", s)
	}
	if s := got[1]; s.ID != "gc-29413440" || len(s.Runs) != 3 || len(s.Missing) != 0 || s.Blobs != 3 {
		t.Errorf("night two: %+v", s)
	}
	if s := got[2]; s.ID != "" || len(s.Runs) != 2 || len(s.Missing) != 0 {
		t.Errorf("unnamed: %+v", s)
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

// TestOnlyRunNamesAreRuns: in a trash folder the runs are the folders named
// as Move names them (time, process id, -no-trash, shard), with or without a
// manifest (a run killed before it wrote one has none). A folder of any other
// name, one that starts with a time stamp too, is no run: not listed, not
// restored into the store, not purged.
func TestOnlyRunNamesAreRuns(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	must(t, os.Mkdir(filepath.Join(base, "store"), 0o700))
	ls, err := store.OpenLocal(filepath.Join(base, "store"))
	must(t, err)
	content := "a blob"
	must(t, ls.Put(ctx, name(content), strings.NewReader(content), store.PutOptions{}))
	e, err := ls.Stat(ctx, name(content))
	must(t, err)
	dir := filepath.Join(base, "trash")
	st, err := trash.DirStore(ls, dir)
	must(t, err)
	l := locktest.Of(t, st)
	res, err := trash.Move(ctx, l, trash.List{{Key: e.Key, Size: e.Size, ModTime: e.ModTime}}, trash.Options{})
	must(t, err)

	put := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(content), 0o600))
	}
	// Runs killed between their moves and their manifest.
	killed := []string{
		"20261201T020304Z-4242-no-trash",
		"20261201T020305Z-1-shard-3-of-16",
		"20261201T020306Z-77-no-trash-shard-0-of-2",
		"20261201T020307Z-1-shard-1-of-4-in-gc-nightly-29412345",
	}
	for _, r := range killed {
		put(r+"/"+name(r), r)
	}
	foreign := []string{
		"20260101T000000Z-nightly",
		"20260101T000000Z",
		"20260101T000000Z-12-extra",
		"20260101T000000Z-012",
		"20260101T000000Z-12-shard-4-of-4",
		"20260101T000000Z-12-shard-1-of-2-no-trash",
		"20261301T000000Z-12",
		"20260101T000000Z-12-in-nightly",
		"20260101T000000Z-12-shard-1-of-2-in-",
		"20260101T000000Z-12-shard-1-of-2-in-Nightly_1",
	}
	for _, f := range foreign {
		put(f+"/db/dump.sql", "dump of "+f)
	}

	runs, err := trash.Runs(ctx, st)
	must(t, err)
	var got []string
	for _, r := range runs {
		got = append(got, r.Run)
	}
	want := append(slices.Clone(killed), res.Run)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("runs %q, want %q", got, want)
	}
	if runs[0].Shard != "" || runs[1].Shard != "3/16" || runs[2].Shard != "0/2" || runs[0].Blobs != 1 ||
		runs[3].Shard != "1/4" || runs[3].Split != "gc-nightly-29412345" || runs[2].Split != "" {
		t.Errorf("runs %+v", runs)
	}

	for _, f := range foreign {
		rr, err := trash.Restore(ctx, l, f)
		var nr *trash.NoRunError
		if !errors.As(err, &nr) {
			t.Errorf("restore %s = %+v, %v, want a *NoRunError", f, rr, err)
		}
	}
	if _, err := ls.Stat(ctx, "db/dump.sql"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("a folder that is no run was restored into the store: %v", err)
	}

	pr, err := trash.Purge(ctx, l, time.Now().Add(time.Hour), store.Recovery{})
	must(t, err)
	if !slices.Equal(pr.Runs, want) || pr.Blobs != 5 {
		t.Errorf("purged %+v, want the runs %q", pr, want)
	}
	for _, f := range foreign {
		if b, err := os.ReadFile(filepath.Join(dir, f, "db", "dump.sql")); err != nil || string(b) != "dump of "+f {
			t.Errorf("%s: %q, %v", f, b, err)
		}
	}
	for _, r := range want {
		filepath.WalkDir(filepath.Join(dir, r), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				t.Errorf("run %s not purged: %s", r, p)
			}
			return nil
		})
	}
}
