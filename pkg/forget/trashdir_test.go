package forget

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/target"
	"github.com/mediactl/mediactl/pkg/trash"
)

// gcInto moves keys into a trash run, as gc --delete does: into the
// folder dir outside the store (gc --trash-dir), or into the store's own
// trash when dir is "". It returns the run.
func (w *work) gcInto(dir string, keys ...string) string {
	w.t.Helper()
	return w.gcOf(w.inbox, dir, keys...)
}

// gcOf is gcInto for the store in the folder storeDir.
func (w *work) gcOf(storeDir, dir string, keys ...string) string {
	w.t.Helper()
	ctx := context.Background()
	st := storeOf(w.t, storeDir)
	var items trash.List
	for _, k := range keys {
		fi, err := os.Stat(filepath.Join(storeDir, k))
		if err != nil {
			w.t.Fatal(err)
		}
		items = append(items, trash.Item{Key: k, Size: fi.Size(), ModTime: fi.ModTime()})
	}
	var run string
	err := storelock.Do(ctx, st, "gc", func(l *storelock.Lock) error {
		if dir != "" {
			var err error
			if l, err = trash.OpenDir(l, dir); err != nil {
				return err
			}
		}
		res, err := trash.Move(ctx, l, items, trash.Options{})
		if res != nil {
			run = res.Run
		}
		return err
	})
	if err != nil || run == "" {
		w.t.Fatal(err, run)
	}
	return run
}

// runsInFolder is runsIn for the trash folder dir of the store in storeDir.
func runsInFolder(t *testing.T, storeDir, dir string) map[string]int64 {
	t.Helper()
	ts, err := trash.AtDir(storeOf(t, storeDir), dir, trash.Owned)
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	return runsIn(t, ts)
}

func runsIn(t *testing.T, st store.Store) map[string]int64 {
	t.Helper()
	runs, err := trash.Runs(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range runs {
		out[r.Run] = r.Blobs
	}
	return out
}

// The runs gc keeps in --trash-dir are searched too: a run there that held
// only the owner's blob is deleted whole, a run there that also holds a
// blob another owner names keeps it; the store's own runs are searched as
// before, and forget's own run goes into the folder and is deleted.
func TestForgetTrashDir(t *testing.T) {
	w := newWork(t)
	dir := filepath.Join(t.TempDir(), "trash")
	inDir := w.blob("alice's, in a run in the trash folder", "")
	mixed := w.blob("alice's, beside bob's in a run there", "")
	bobs := w.blob("alice's and bob's, trashed by mistake", "")
	own := w.blob("alice's, in the store's own trash", "")
	live := w.blob("alice's, still in the store", "")
	w.session("alice", "", inDir, mixed, own, live, bobs)
	w.session("bob", "hello")
	r1 := w.gcInto(dir, inDir)
	r2 := w.gcInto(dir, mixed, bobs)
	r3 := w.gcInto("", own)
	w.session("bob", "", bobs)

	// Without the folder, its runs are not searched (gc records nothing
	// in the store that would say where they are).
	rep := w.forget(false, "alice")
	if slices.Contains(keysOf(rep.Erased), inDir) || !slices.Contains(keysOf(rep.Erased), own) {
		t.Fatalf("without the folder: %v", keysOf(rep.Erased))
	}

	dry := w.run(Options{Owners: []string{"alice"}, TrashDirs: []string{dir}})
	if b := findErased(dry, inDir); b == nil || !slices.Equal(b.Where, []string{"trash run " + r1 + " in " + dir}) {
		t.Fatalf("dry run: %+v", dry.Erased)
	}
	if _, err := os.Stat(filepath.Join(dir, r1, inDir)); err != nil {
		t.Fatal("the dry run removed a blob")
	}

	rep = w.run(Options{Owners: []string{"alice"}, Delete: true, TrashDirs: []string{dir}})
	if rep.Outcome != outcome.OK || rep.TrashDir != dir {
		t.Fatalf("%s %+v", rep.Outcome, rep)
	}
	want := map[string]string{inDir: "trash run " + r1 + " in " + dir, mixed: "trash run " + r2 + " in " + dir, own: "trash run " + r3, live: "store"}
	for k, where := range want {
		if b := findErased(rep, k); b == nil || !slices.Equal(b.Where, []string{where}) || b.RemovedAt == nil {
			t.Errorf("%s: %+v, want from %s", k, b, where)
		}
	}
	if len(rep.Erased) != len(want) {
		t.Errorf("erased %v", keysOf(rep.Erased))
	}
	if keptReason(rep, bobs) != KeptNamedPrecisely {
		t.Errorf("bob's blob: %+v", rep.Kept)
	}
	if got := runsInFolder(t, w.inbox, dir); len(got) != 1 || got[r2] != 1 {
		t.Errorf("runs in the folder: %v, want %s with bob's blob alone (%s emptied and deleted, forget's own deleted)", got, r2, r1)
	}
	if _, err := os.Stat(filepath.Join(dir, r2, bobs)); err != nil {
		t.Errorf("bob's blob in %s: %v", r2, err)
	}
	if got := runsIn(t, storeOf(t, w.inbox)); len(got) != 0 {
		t.Errorf("runs in the store's own trash: %v", got)
	}
	if w.exists(live) {
		t.Error("the blob in the store is still there")
	}
	// forget made no run in the store's own trash folder either.
	if ents, _ := os.ReadDir(filepath.Join(w.inbox, store.InternalDir, trash.Dir)); len(ents) != 0 {
		t.Errorf("left in the store's trash: %v", ents)
	}
}

// A folder that holds no trash of the store (or another store's) is
// refused before anything is read.
func TestForgetTrashDirRefused(t *testing.T) {
	w := newWork(t)
	k := w.blob("alice's", "")
	w.session("alice", "", k)
	ctx := context.Background()
	tg, err := target.Open(ctx, target.Spec{Layout: "forge", Root: w.root})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	stores := []scan.Target{{Store: tg.Stores[0], Resolver: tg.Resolver(tg.Stores[0])}}
	empty := t.TempDir()
	for dir, want := range map[string]func(error) bool{
		filepath.Join(empty, "none"): func(err error) bool { return errors.Is(err, trash.ErrNoTrashFolder) },
		empty:                        func(err error) bool { var u *trash.UnclaimedError; return errors.As(err, &u) },
		filepath.Join(w.inbox, "t"):  func(err error) bool { var p *trash.PlaceError; return errors.As(err, &p) },
	} {
		_, err := Run(ctx, Options{Stores: stores, Sources: tg.Sources, Rule: owner.Rule{Layout: "forge"}, Owners: []string{"alice"}, Delete: true, TrashDirs: []string{dir}})
		if !want(err) {
			t.Errorf("%s: %v", dir, err)
		}
	}
	if !w.exists(k) {
		t.Error("a refused run removed a blob")
	}
	if _, err := os.Stat(filepath.Join(w.inbox, store.InternalDir, "lock")); err == nil {
		t.Error("the lock was left behind")
	}
}

// migrate --delete-source --trash-dir records the folder in its journal:
// forget run without it says that those runs were not searched
// (incomplete), and with it erases from them.
func TestForgetTrashDirOfMigrate(t *testing.T) {
	w := newWork(t)
	bk := buckets(t, w)[0]
	dir := filepath.Join(t.TempDir(), "trash")
	mine := w.blob("alice's", "")
	w.session("alice", "", mine)
	w.session("bob", "hello")
	w.migrated(bk.url, bk.template, dir, false)

	rep := w.run(Options{Owners: []string{"alice"}, Delete: true})
	if rep.Outcome != outcome.Incomplete || !slices.Equal(rep.TrashNotSearched, []string{dir}) ||
		!slices.ContainsFunc(rep.Problems, func(p string) bool { return strings.Contains(p, dir) && strings.Contains(p, "not search") }) {
		t.Fatalf("without the folder: %s %+v", rep.Outcome, rep)
	}
	// The rest is erased all the same: the copy only alice names.
	if b := findErased(rep, mine); b == nil || b.Bucket == "" || copyThere(t, bk.url, mine) {
		t.Fatalf("without the folder, the copy: %+v", rep.Erased)
	}
	rep = w.run(Options{Owners: []string{"alice"}, Delete: true, TrashDirs: []string{dir}})
	if rep.Outcome != outcome.OK || len(rep.TrashNotSearched) != 0 {
		t.Fatalf("with the folder: %s %+v", rep.Outcome, rep)
	}
	b := findErased(rep, mine)
	if b == nil || !slices.Equal(b.Where, []string{"trash run " + rep.Erased[0].runs[0].name + " in " + dir}) {
		t.Fatalf("%+v", rep.Erased)
	}
	if got := runsInFolder(t, w.inbox, dir); len(got) != 0 {
		t.Errorf("runs left in the folder: %v", got)
	}
}

// forge's two stores, their trash runs in three folders outside them (the
// inbound store's in two: gc ran with one --trash-dir, later with
// another): one forget run given all three erases from each, keeps the
// blob bob names in whichever folder it is, and moves its own run of a
// store into the first folder given for that store. A folder given twice
// (through a symlink, a relative path, a trailing slash) is searched once;
// a blob not named by its digest is hashed from its run in a folder.
func TestForgetSeveralTrashDirs(t *testing.T) {
	w := newWork(t)
	gen := filepath.Join(w.root, ".forge", "files", "generated")
	if err := os.MkdirAll(gen, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	dirA, dirB, dirG := filepath.Join(tmp, "a"), filepath.Join(tmp, "b"), filepath.Join(tmp, "g")
	alias := filepath.Join(tmp, "a-again")
	inA := w.blob("alice's, in the first folder", "")
	inB := w.blob("alice's, in the second folder", "")
	shared := w.blob("alice's and bob's, in the second folder", "")
	live := w.blob("alice's, still in the store", "")
	inG := "generated-by-alice.png"
	if err := os.WriteFile(filepath.Join(gen, inG), []byte("a picture made for alice"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.uris("alice", "", filepath.Join(w.inbox, inA), filepath.Join(w.inbox, inB), filepath.Join(w.inbox, shared),
		filepath.Join(w.inbox, live), filepath.Join(gen, inG))
	w.session("bob", "", shared)
	rA := w.gcInto(dirA, inA)
	rB := w.gcInto(dirB, inB, shared)
	rG := w.gcOf(gen, dirG, inG)
	if err := os.Symlink(dirA, alias); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dirB)
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{dirA, dirG, dirB, alias, rel, dirA + "/"}

	dry := w.run(Options{Owners: []string{"alice"}, TrashDirs: dirs})
	if dry.Outcome != outcome.OK || !slices.Equal(dry.TrashDirs, dirs[:3]) || dry.TrashDir != dirA {
		t.Fatalf("dry run: %s, folders %v (%s)", dry.Outcome, dry.TrashDirs, dry.TrashDir)
	}

	// Where forget's own run of the inbound store goes: look while it
	// holds the blob still in the store, for runs that were not there
	// before (by folder: runs in two folders may share a name).
	runDirs := func(d string) []string {
		var out []string
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				out = append(out, e.Name())
			}
		}
		return out
	}
	before := map[string][]string{dirA: runDirs(dirA), dirB: runDirs(dirB)}
	if !slices.Equal(before[dirA], []string{rA}) || !slices.Equal(before[dirB], []string{rB}) {
		t.Fatalf("runs before: %v", before)
	}
	var ownRuns map[string][]string
	phaseHook = func(p string) {
		if p != "moved" {
			return
		}
		ownRuns = map[string][]string{}
		for _, d := range []string{dirA, dirB} {
			for _, name := range runDirs(d) {
				if !slices.Contains(before[d], name) {
					ownRuns[d] = append(ownRuns[d], name)
				}
			}
		}
	}
	t.Cleanup(func() { phaseHook = nil })
	rep := w.run(Options{Owners: []string{"alice"}, Delete: true, TrashDirs: dirs})
	if rep.Outcome != outcome.OK {
		t.Fatalf("%s %+v", rep.Outcome, rep.Problems)
	}
	if len(ownRuns[dirA]) != 1 || len(ownRuns[dirB]) != 0 {
		t.Errorf("forget's own run: %v, want one in %s (the first folder of the store) and none in %s", ownRuns, dirA, dirB)
	}
	want := map[string]string{inA: "trash run " + rA + " in " + dirA, inB: "trash run " + rB + " in " + dirB,
		inG: "trash run " + rG + " in " + dirG, live: "store"}
	for k, where := range want {
		if b := findErased(rep, k); b == nil || !slices.Equal(b.Where, []string{where}) || b.RemovedAt == nil {
			t.Errorf("%s: %+v, want from %s", k, b, where)
		}
	}
	// Not named by its digest: hashed from its trash run in the folder.
	if b, sum := findErased(rep, inG), sha256.Sum256([]byte("a picture made for alice")); b == nil || b.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("%s: %+v, want sha256 %x", inG, b, sum)
	}
	if len(rep.Erased) != len(want) || keptReason(rep, shared) != KeptNamedPrecisely {
		t.Errorf("erased %v, kept %+v", keysOf(rep.Erased), rep.Kept)
	}
	for st, dir := range map[string]string{w.inbox: dirA, gen: dirG} {
		if got := runsInFolder(t, st, dir); len(got) != 0 {
			t.Errorf("runs left in %s: %v", dir, got)
		}
	}
	if got := runsInFolder(t, w.inbox, dirB); len(got) != 1 || got[rB] != 1 {
		t.Errorf("runs in %s: %v, want %s with bob's blob alone", dirB, got, rB)
	}
	if _, err := os.Stat(filepath.Join(dirB, rB, shared)); err != nil {
		t.Errorf("bob's blob: %v", err)
	}
}

// One folder of several that holds no trash of the stores refuses the
// whole run, naming that folder, before anything is read or removed.
func TestForgetSeveralTrashDirsOneRefused(t *testing.T) {
	w := newWork(t)
	dir := filepath.Join(t.TempDir(), "trash")
	k := w.blob("alice's", "")
	live := w.blob("alice's, in the store", "")
	w.session("alice", "", k, live)
	r := w.gcInto(dir, k)
	empty := t.TempDir()
	_, err := w.runErr(Options{Owners: []string{"alice"}, Delete: true, TrashDirs: []string{dir, empty}})
	var te *TrashDirError
	var ue *trash.UnclaimedError
	if !errors.As(err, &te) || te.Dir != empty || !errors.As(err, &ue) {
		t.Fatalf("got %v, want a TrashDirError naming %s", err, empty)
	}
	if !w.exists(live) {
		t.Error("a refused run removed a blob from the store")
	}
	if _, err := os.Stat(filepath.Join(dir, r, k)); err != nil {
		t.Errorf("a refused run removed a blob from a trash run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.inbox, store.InternalDir, "lock")); err == nil {
		t.Error("the lock was left behind")
	}
}

// A folder that holds the trash of one store (generated/) but lies inside
// another store given (inbound/) is refused: its runs would be listed as
// that store's blobs.
func TestForgetTrashDirInsideAnotherStore(t *testing.T) {
	w := newWork(t)
	gen := filepath.Join(w.root, ".forge", "files", "generated")
	if err := os.MkdirAll(gen, 0o755); err != nil {
		t.Fatal(err)
	}
	k := "made-for-alice.png"
	if err := os.WriteFile(filepath.Join(gen, k), []byte("a picture"), 0o644); err != nil {
		t.Fatal(err)
	}
	live := w.blob("alice's, in the store", "")
	w.uris("alice", "", filepath.Join(gen, k), filepath.Join(w.inbox, live))
	inside := filepath.Join(w.inbox, "old-trash")
	w.gcOf(gen, inside, k)
	_, err := w.runErr(Options{Owners: []string{"alice"}, Delete: true, TrashDirs: []string{inside}})
	var te *TrashDirError
	var pe *trash.PlaceError
	if !errors.As(err, &te) || te.Dir != inside || !errors.As(err, &pe) {
		t.Fatalf("got %v, want a TrashDirError with a PlaceError for %s", err, inside)
	}
	if !w.exists(live) {
		t.Error("a refused run removed a blob")
	}
}

// A live runtime names two of the owner's blobs while forget holds them, one
// moved from the store into forget's own run in the first folder, one in
// gc's older run in the second folder: the first is put back into the
// store, the second stays in its run; the rest is erased.
func TestForgetNamedDuringRunTrashDirs(t *testing.T) {
	w := newWork(t)
	tmp := t.TempDir()
	dirA, dirB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	mine := w.blob("alice's, in the store", "")
	inB := w.blob("alice's, in a run in the second folder", "")
	gone := w.blob("alice's other, in the store", "")
	older := w.blob("alice's, in a run in the first folder", "")
	w.session("alice", "", mine, inB, gone, older)
	w.session("bob", "hello")
	rA := w.gcInto(dirA, older)
	rB := w.gcInto(dirB, inB)
	phaseHook = func(p string) {
		if p == "moved" {
			w.session("bob", "", mine, inB)
		}
	}
	t.Cleanup(func() { phaseHook = nil })
	rep := w.run(Options{Owners: []string{"alice"}, Delete: true, TrashDirs: []string{dirA, dirB}})
	if rep.Outcome != outcome.OK {
		t.Fatalf("%s %+v", rep.Outcome, rep.Problems)
	}
	if !w.exists(mine) {
		t.Fatal("the blob named during the run is not back in the store")
	}
	if _, err := os.Stat(filepath.Join(dirB, rB, inB)); err != nil {
		t.Fatalf("the blob named during the run is gone from its run in %s: %v", dirB, err)
	}
	for _, k := range []string{mine, inB} {
		if got := keptReason(rep, k); got != KeptNamedDuringRun {
			t.Errorf("%s kept %q, want %q", k, got, KeptNamedDuringRun)
		}
	}
	if got := keysOf(rep.Erased); len(got) != 2 || !slices.Contains(got, gone) || !slices.Contains(got, older) {
		t.Errorf("erased %v, want %s and %s", got, gone, older)
	}
	if w.exists(gone) {
		t.Error("the other blob stayed")
	}
	if got := runsInFolder(t, w.inbox, dirA); len(got) != 0 {
		t.Errorf("runs left in %s: %v (%s emptied, forget's own put back and deleted)", dirA, got, rA)
	}
	if got := runsInFolder(t, w.inbox, dirB); len(got) != 1 || got[rB] != 1 {
		t.Errorf("runs in %s: %v, want %s with the blob named during the run", dirB, got, rB)
	}
}
