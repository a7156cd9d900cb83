//go:build linux

package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestRaceMoveTo: MoveTo into another store (gc's trash directory, verify's
// quarantine) while the quarantine folder and a blob's parent folder are
// swapped for links to a victim outside both stores, which holds files of
// the blobs' names: the victim never changes, nothing of it enters either
// store, and every blob is in exactly one of them. Then the same for
// DeleteInternal while folders of the internal folder are swapped. Both
// with openat2 and with the walk taken where it is refused.
func TestRaceMoveTo(t *testing.T) {
	t.Run("openat2", func(t *testing.T) { raceMoveTo(t, false) })
	t.Run("walk", func(t *testing.T) { raceMoveTo(t, true) })
}

func raceMoveTo(t *testing.T, walkOnly bool) {
	root := t.TempDir()
	srcDir, dstDir, victim := filepath.Join(root, "store"), filepath.Join(root, "quarantine"), filepath.Join(root, "victim")
	blobs := map[string]string{}
	for i := range 1000 {
		key := fmt.Sprintf("s%02d/blob-%04d.png", i%10, i)
		content := fmt.Sprintf("blob %d", i)
		writeFile(t, filepath.Join(srcDir, filepath.FromSlash(key)), content)
		blobs[key] = content
		if i%2 == 0 {
			writeFile(t, filepath.Join(victim, filepath.Base(key)), "victim "+key)
			writeFile(t, filepath.Join(victim, filepath.FromSlash(key)), "victim deep "+key)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dstDir, "Q"), 0o700))
	src, err := store.OpenLocal(srcDir)
	must(err)
	defer src.Close()
	dst, err := store.OpenLocal(dstDir)
	must(err)
	defer dst.Close()
	if walkOnly {
		store.WalkOnly(src)
		store.WalkOnly(dst)
	}
	before := storetest.Tree(t, victim)
	ctx := context.Background()

	stop := storetest.SwapFolders(t, []string{filepath.Join(dstDir, "Q"), filepath.Join(srcDir, "s02"), filepath.Join(srcDir, "s05")}, victim, time.Second, 200_000)
	moved, unsafe, refused := 0, 0, 0
	for pass := 0; pass < 20 && moved < len(blobs); pass++ {
		for key := range blobs {
			err := src.MoveTo(ctx, key, dst, "Q/"+key)
			switch {
			case err == nil:
				moved++
			case errors.Is(err, store.ErrUnsafePath):
				unsafe++
			case errors.Is(err, store.ErrNotExist), errors.Is(err, store.ErrNotRegular), errors.Is(err, store.ErrExist):
				refused++ // already moved, or its folder is a link or aside
			default:
				t.Fatalf("MoveTo(%s): %v", key, err)
			}
		}
	}
	swaps := stop()
	t.Logf("MoveTo: %d swaps; %d moved, %d unsafe destinations, %d refused sources", swaps, moved, unsafe, refused)
	checkRace(t, victim, before, blobs, nil, srcDir, dstDir)

	// DeleteInternal (gc purge) while folders of the internal folder are
	// swapped: only the store's own files go.
	for key := range blobs {
		if !strings.HasPrefix(key, "s0") {
			continue
		}
		if err := src.PutInternal(ctx, "trash/R/"+key, strings.NewReader("trashed "+key), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	internal := filepath.Join(srcDir, store.InternalDir, "trash", "R")
	stop = storetest.SwapFolders(t, []string{filepath.Join(internal, "s01"), filepath.Join(internal, "s04"), filepath.Join(internal, "s07")}, victim, time.Second, 200_000)
	deleted := 0
	for pass := 0; pass < 20; pass++ {
		for key := range blobs {
			if err := src.DeleteInternal(ctx, "trash/R/"+key); err == nil {
				deleted++
			} else if !errors.Is(err, store.ErrNotExist) && !errors.Is(err, store.ErrNotRegular) {
				t.Fatalf("DeleteInternal(%s): %v", key, err)
			}
		}
	}
	swaps = stop()
	t.Logf("DeleteInternal: %d swaps; %d deleted", swaps, deleted)
	checkRace(t, victim, before, blobs, nil, srcDir, dstDir)
}

func checkRace(t *testing.T, victim string, before map[string]string, blobs map[string]string, gone func(string) bool, dirs ...string) {
	t.Helper()
	if after := storetest.Tree(t, victim); fmt.Sprint(after) != fmt.Sprint(before) {
		for k, v := range after {
			if before[k] != v {
				t.Errorf("victim %s: %s (was %q)", k, v, before[k])
			}
		}
		t.Errorf("the victim changed: %d entries before, %d after", len(before), len(after))
	}
	found := storetest.FilesByContent(t, dirs...)
	for c, where := range found {
		if strings.HasPrefix(c, "victim ") {
			t.Errorf("a file from outside entered a store: %v", where)
		}
	}
	lost, twice := 0, 0
	for key, c := range blobs {
		switch n := len(found[c]); {
		case gone != nil && gone(key):
		case n == 0:
			lost++
		case n > 1:
			twice++
		}
	}
	if lost+twice > 0 {
		t.Errorf("of %d blobs, %d are in neither store, %d in two places", len(blobs), lost, twice)
	}
}
