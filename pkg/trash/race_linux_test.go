//go:build linux

package trash_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// The tests of this file run gc's moves while another goroutine keeps
// swapping folders for symbolic links to a victim folder outside the store,
// and back: the trash run folder, a blob's parent folder, the trash
// directory's run folder, a restore's source and destination folders, a
// purged run's folder. Whatever the interleaving, the victim is never
// changed, every blob ends in the store or in the trash (none lost, none
// outside, none twice), and nothing from outside ever enters the store.

const (
	raceBlobs    = 2000
	raceFolders  = 20
	raceAttack   = 1500 * time.Millisecond
	raceMaxSwaps = 200_000
)

// raceStore writes raceBlobs small blobs into raceFolders folders of a new
// store below root/store, and a victim folder root/victim beside it holding
// files named like the blobs of some folders, with other contents.
type raceStore struct {
	root, dir, victim string
	st                *store.LocalStore
	blobs             map[string]string // key -> content
}

func newRaceStore(t *testing.T) *raceStore {
	t.Helper()
	r := &raceStore{root: t.TempDir(), blobs: map[string]string{}}
	r.dir = filepath.Join(r.root, "store")
	r.victim = filepath.Join(r.root, "victim")
	old := time.Now().Add(-72 * time.Hour)
	for i := range raceBlobs {
		content := fmt.Sprintf("blob %d", i)
		key := fmt.Sprintf("s%02d/%s", i%raceFolders, name(content))
		p := filepath.Join(r.dir, filepath.FromSlash(key))
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(content), 0o600))
		must(t, os.Chtimes(p, old, old))
		r.blobs[key] = content
		if i%2 == 0 {
			// The victim holds a file of the same name in a folder of the same
			// name, and directly: a move through a link finds one either way.
			base := filepath.Base(key)
			for _, v := range []string{filepath.Join(r.victim, base), filepath.Join(r.victim, filepath.Dir(key), base)} {
				must(t, os.MkdirAll(filepath.Dir(v), 0o700))
				must(t, os.WriteFile(v, []byte("victim "+v), 0o600))
			}
		}
	}
	var err error
	r.st, err = store.OpenLocal(r.dir)
	must(t, err)
	t.Cleanup(func() { r.st.Close() })
	return r
}

// candidates lists the regular blobs now in the store. A listing that met
// a swapped folder is refused (as it would make a plan incomplete): the list
// is then nil.
func (r *raceStore) candidates(t *testing.T) trash.List {
	var out trash.List
	if err := r.st.List(context.Background(), "", func(e store.Entry) error {
		if e.Regular() {
			out = append(out, trash.Item{Key: e.Key, Size: e.Size, ModTime: e.ModTime})
		}
		return nil
	}); err != nil {
		return nil
	}
	return out
}

// snapshot describes every entry below dir, links not followed: its type and
// check asserts the invariants: the victim is as it was, nothing of it is in
// the store, and every blob is exactly once in the store or the trash (below
// trash, when it is outside the store), unless purged.
func (r *raceStore) check(t *testing.T, victimBefore map[string]string, trash string, purged func(key string) bool) {
	t.Helper()
	if after := storetest.Tree(t, r.victim); fmt.Sprint(after) != fmt.Sprint(victimBefore) {
		t.Errorf("the victim folder changed: %d entries before, %d after", len(victimBefore), len(after))
		for k, v := range after {
			if victimBefore[k] != v {
				t.Errorf("  victim %s: %s (was %q)", k, v, victimBefore[k])
			}
		}
	}
	inStore := storetest.FilesByContent(t, r.dir)
	inTrash := map[string][]string{}
	if trash != "" {
		inTrash = storetest.FilesByContent(t, trash)
	}
	for c, where := range inStore {
		if strings.HasPrefix(c, "victim ") {
			t.Errorf("a file from outside entered the store: %s", where)
		}
	}
	for c, where := range inTrash {
		if strings.HasPrefix(c, "victim ") {
			t.Errorf("a file from outside entered the trash: %s", where)
		}
	}
	lost, twice := 0, 0
	for key, c := range r.blobs {
		n := len(inStore[c]) + len(inTrash[c])
		switch {
		case purged != nil && purged(key):
			if n != 0 {
				t.Errorf("purged blob %s still at %v %v", key, inStore[c], inTrash[c])
			}
		case n == 0:
			lost++
		case n > 1:
			twice++
		}
	}
	if lost+twice > 0 {
		t.Errorf("of %d blobs, %d are neither in the store nor in the trash, %d are in two places", len(r.blobs), lost, twice)
	}
}

// runStopped tells a sweep that an unsafe trash stopped from one that went
// through, and fails the test on any other error.
func runStopped(t *testing.T, err error) bool {
	t.Helper()
	switch {
	case err == nil:
		return false
	case errors.Is(err, trash.ErrUnusable) && errors.Is(err, store.ErrUnsafePath):
		return true
	case errors.Is(err, trash.ErrLeftInRun):
		// A folder was swapped right after a blob's rename, and its sync
		// found the link: the blob is in the run and counted there (the
		// check below proves none is lost), and the run fails saying so.
		return true
	case strings.Contains(err.Error(), "write its record"):
		// The run folder was a link when the run's record was written,
		// before the first move: nothing was moved (the check below
		// proves it), and the run fails.
		return true
	case strings.Contains(err.Error(), "write manifest"):
		// The run folder was a link when the manifest was written: Put
		// refuses it too (the victim's check below proves it), and the run
		// fails.
		return true
	}
	t.Fatalf("sweep: %v", err)
	return false
}

// TestRaceSweep: gc's batch sweep into the store's trash while the trash run
// folder and a blob's parent folder are swapped for links.
func TestRaceSweep(t *testing.T) {
	r := newRaceStore(t)
	victim := storetest.Tree(t, r.victim)
	now := time.Now()
	run := trash.RunID(now)
	runDir := filepath.Join(r.dir, store.InternalDir, trash.Dir, run)
	must(t, os.MkdirAll(runDir, 0o700))
	stop := storetest.SwapFolders(t, []string{runDir, filepath.Join(r.dir, "s04"), filepath.Join(r.dir, "s10")}, r.victim, raceAttack, raceMaxSwaps)
	ctx := context.Background()
	trashed, unusable := int64(0), 0
	for deadline := time.Now().Add(raceAttack); time.Now().Before(deadline); {
		cands := r.candidates(t)
		if len(cands) == 0 {
			continue
		}
		res, err := trash.Move(ctx, locktest.Of(t, r.st), cands, trash.Options{Now: now})
		if runStopped(t, err) {
			unusable++
		}
		trashed += res.Trashed
	}
	swaps := stop()
	t.Logf("%d swaps; %d blobs trashed, %d runs stopped by an unusable trash", swaps, trashed, unusable)
	r.check(t, victim, "", nil)
}

// TestRaceRestore: gc restore while a restore destination's parent folder and
// a source folder in the trash run are swapped for links.
func TestRaceRestore(t *testing.T) {
	r := newRaceStore(t)
	victim := storetest.Tree(t, r.victim)
	ctx := context.Background()
	res, err := trash.Move(ctx, locktest.Of(t, r.st), r.candidates(t), trash.Options{})
	must(t, err)
	if res.Trashed != raceBlobs {
		t.Fatalf("trashed %d", res.Trashed)
	}
	// The emptied folders stay; without one, restore must create it again.
	must(t, os.Remove(filepath.Join(r.dir, "s03")))
	runDir := filepath.Join(r.dir, store.InternalDir, trash.Dir, res.Run)
	stop := storetest.SwapFolders(t, []string{filepath.Join(r.dir, "s03"), filepath.Join(r.dir, "s06"), filepath.Join(runDir, "s05"), filepath.Join(runDir, "s08")}, r.victim, raceAttack, raceMaxSwaps)
	restored, failed := int64(0), 0
	for deadline := time.Now().Add(raceAttack); time.Now().Before(deadline); {
		rr, err := trash.Restore(ctx, locktest.Of(t, r.st), res.Run)
		if rr != nil {
			restored += rr.Restored
		}
		if err == nil && len(rr.Kept) == 0 {
			break
		}
		if err != nil && strings.Contains(err.Error(), "no run") {
			break
		}
		failed++
	}
	swaps := stop()
	t.Logf("%d swaps; %d blobs restored, %d restores stopped", swaps, restored, failed)
	r.check(t, victim, "", nil)
}

// TestRacePurge: gc purge while folders of the purged run are swapped for
// links to a victim holding files of the same names.
func TestRacePurge(t *testing.T) {
	r := newRaceStore(t)
	victim := storetest.Tree(t, r.victim)
	ctx := context.Background()
	var some trash.List
	for _, c := range r.candidates(t) {
		if !strings.HasPrefix(c.Key, "s00/") {
			some = append(some, c)
		}
	}
	res, err := trash.Move(ctx, locktest.Of(t, r.st), some, trash.Options{Now: time.Now().Add(-30 * 24 * time.Hour)})
	must(t, err)
	runDir := filepath.Join(r.dir, store.InternalDir, trash.Dir, res.Run)
	// A link planted in the run is removed as a link, its target untouched.
	must(t, os.Symlink(r.victim, filepath.Join(runDir, "planted")))
	stop := storetest.SwapFolders(t, []string{filepath.Join(runDir, "s02"), filepath.Join(runDir, "s09"), filepath.Join(runDir, "s12")}, r.victim, raceAttack, raceMaxSwaps)
	purges, failed := 0, 0
	for deadline := time.Now().Add(raceAttack); time.Now().Before(deadline); {
		pr, err := trash.Purge(ctx, locktest.Of(t, r.st), time.Now().Add(-7*24*time.Hour), store.Recovery{})
		if err != nil {
			failed++
			continue
		}
		purges++
		if len(pr.Runs) == 0 {
			break
		}
	}
	swaps := stop()
	// Whatever the swaps left, one more purge takes the rest.
	if _, err := trash.Purge(ctx, locktest.Of(t, r.st), time.Now().Add(-7*24*time.Hour), store.Recovery{}); err != nil {
		t.Fatalf("final purge: %v", err)
	}
	t.Logf("%d swaps; %d purges, %d stopped", swaps, purges, failed)
	r.check(t, victim, "", func(key string) bool { return !strings.HasPrefix(key, "s00/") })
	if _, err := os.Lstat(filepath.Join(runDir, "planted")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the planted link is still in the trash: %v", err)
	}
}

// TestRaceTrashDir: gc with a trash directory of its own (store.MoveTo on
// both sides) while the trash directory's run folder and a blob's parent are
// swapped for links; then a restore while the store's folders are.
func TestRaceTrashDir(t *testing.T) {
	r := newRaceStore(t)
	victim := storetest.Tree(t, r.victim)
	tdPath := filepath.Join(r.root, "trashdir")
	must(t, os.MkdirAll(tdPath, 0o700))
	td, err := store.OpenLocal(tdPath)
	must(t, err)
	defer td.Close()
	st := trash.WithDir(r.st, td)
	ctx := context.Background()
	now := time.Now()
	run := trash.RunID(now)
	must(t, os.MkdirAll(filepath.Join(tdPath, run), 0o700))
	stop := storetest.SwapFolders(t, []string{filepath.Join(tdPath, run), filepath.Join(r.dir, "s01"), filepath.Join(r.dir, "s04")}, r.victim, raceAttack, raceMaxSwaps)
	trashed, unusable := int64(0), 0
	for deadline := time.Now().Add(raceAttack); time.Now().Before(deadline); {
		cands := r.candidates(t)
		if len(cands) == 0 {
			continue
		}
		res, err := trash.Move(ctx, locktest.Of(t, st), cands, trash.Options{Now: now})
		if runStopped(t, err) {
			unusable++
		}
		trashed += res.Trashed
	}
	swaps := stop()
	t.Logf("sweep: %d swaps; %d blobs trashed, %d runs stopped by an unusable trash", swaps, trashed, unusable)
	r.check(t, victim, tdPath, nil)

	stop = storetest.SwapFolders(t, []string{filepath.Join(r.dir, "s01"), filepath.Join(r.dir, "s02"), filepath.Join(tdPath, run, "s03")}, r.victim, raceAttack, raceMaxSwaps)
	restored := int64(0)
	for deadline := time.Now().Add(raceAttack); time.Now().Before(deadline); {
		rr, err := trash.Restore(ctx, locktest.Of(t, st), run)
		if rr != nil {
			restored += rr.Restored
		}
		if (err == nil && len(rr.Kept) == 0) || (err != nil && strings.Contains(err.Error(), "no run")) {
			break
		}
	}
	swaps = stop()
	t.Logf("restore: %d swaps; %d blobs restored", swaps, restored)
	r.check(t, victim, tdPath, nil)
}
