package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

// A directory larger than one stat-ahead batch (1,024 entries) is described
// by goroutines ahead of the listing: the listing must still give every
// entry once, in key order, described as itself (a size of its own, folders
// listed where their keys sort, a symbolic link as a link, a file removed
// since the directory was read skipped), and stop early without loss when
// the callback says so.
func TestListLargeDirectory(t *testing.T) {
	s, dir, _ := newLocal(t)
	const n = 5000
	var want []string
	for i := range n {
		name := fmt.Sprintf("%05d-%s.png", i, strings.Repeat("x", i%7))
		writeFile(t, filepath.Join(dir, name), strings.Repeat("b", i%97))
		want = append(want, name)
	}
	for _, sub := range []string{"02500", "04999-", "00000-"} {
		writeFile(t, filepath.Join(dir, sub, "inner"), "in")
		want = append(want, sub+"/inner")
	}
	if err := os.Symlink("00001-x.png", filepath.Join(dir, "03000-link")); err != nil {
		t.Fatal(err)
	}
	want = append(want, "03000-link")
	slices.Sort(want)

	var got []string
	err := s.List(ctx, "", func(e store.Entry) error {
		got = append(got, e.Key)
		switch {
		case e.Key == "03000-link":
			if e.Link != "00001-x.png" || e.Regular() {
				t.Errorf("%s: described as %+v, want the link", e.Key, e)
			}
		case strings.HasSuffix(e.Key, "/inner"):
			if e.Size != 2 {
				t.Errorf("%s: size %d", e.Key, e.Size)
			}
		default:
			var i int
			fmt.Sscanf(e.Key, "%05d", &i)
			if e.Size != int64(i%97) || !e.Regular() {
				t.Errorf("%s: size %d regular %v, want %d", e.Key, e.Size, e.Regular(), i%97)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %d keys, want %d; first difference near %q", len(got), len(want), firstDiff(got, want))
	}

	// The unordered listing describes in batches too: the same entries,
	// described alike.
	listed := map[string]store.Entry{}
	err = s.List(ctx, "", func(e store.Entry) error { listed[e.Key] = e; return nil })
	if err != nil {
		t.Fatal(err)
	}
	unordered := 0
	err = s.ListUnordered(ctx, "", func(e store.Entry) error {
		unordered++
		if l, ok := listed[e.Key]; !ok || l.Size != e.Size || l.Mode != e.Mode || l.Link != e.Link || !l.ModTime.Equal(e.ModTime) {
			t.Errorf("ListUnordered: %+v, List: %+v", e, l)
		}
		return nil
	})
	if err != nil || unordered != len(want) {
		t.Fatalf("ListUnordered: %v, %d entries, want %d", err, unordered, len(want))
	}

	// The selective listing keeps a third of the names while it sorts (the
	// stat-ahead batches then hold fewer entries than the directory): the
	// same entries as List's, in List's order, described alike.
	third := func(key string) bool { return len(key)%3 == 0 }
	var selected []string
	err = s.ListSelected(ctx, "", third, func(e store.Entry) error {
		selected = append(selected, e.Key)
		if l := listed[e.Key]; l.Size != e.Size || l.Mode != e.Mode || l.Link != e.Link || !l.ModTime.Equal(e.ModTime) {
			t.Errorf("ListSelected: %+v, List: %+v", e, l)
		}
		return nil
	})
	wantSelected := slices.DeleteFunc(slices.Clone(want), func(k string) bool { return !third(k) })
	if err != nil || !slices.Equal(selected, wantSelected) {
		t.Fatalf("ListSelected: %v, %d keys, want %d; first difference near %q", err, len(selected), len(wantSelected), firstDiff(selected, wantSelected))
	}

	stop := errors.New("enough")
	for name, list := range map[string]func(context.Context, string, func(store.Entry) error) error{
		"List": s.List, "ListUnordered": s.ListUnordered,
	} {
		seen := 0
		err = list(ctx, "", func(e store.Entry) error {
			if seen++; seen == 2100 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || seen != 2100 {
			t.Fatalf("%s after the callback stopped it: %v, %d entries", name, err, seen)
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " / " + b[i]
		}
	}
	return "the end"
}
