package store_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// ListInternalAbove names what the internal folders above a store's prefix
// hold in the folder asked for: the bucket's root's and each parent's, not
// the store's own, nor a folder beside or below it.
func TestListInternalAbove(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s3 := storetest.StartS3(t, nil).Bucket(t, "media")
	for _, bk := range []struct{ name, root string }{{"file", "file://" + filepath.ToSlash(dir)}, {"s3", s3}} {
		t.Run(bk.name, func(t *testing.T) {
			open := func(prefix string) store.Store {
				t.Helper()
				url := bk.root + "?prefix=" + prefix
				if strings.Contains(bk.root, "?") {
					url = bk.root + "&prefix=" + prefix
				}
				if prefix == "" {
					url = bk.root
				}
				st, err := store.Open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
			for _, p := range []string{"", "a/", "a/b/", "a/c/", "a/b/d/"} {
				in := store.Unwrap(open(p)).(store.Internal)
				if err := in.PutInternal(ctx, "migrations/"+strings.ReplaceAll(p+"r", "/", "-")+".json", strings.NewReader("{}"), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := in.PutInternal(ctx, "trash/x", strings.NewReader("{}"), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			err := store.Unwrap(open("a/b/")).(store.InternalAbove).ListInternalAbove(ctx, "migrations/", func(folder string, e store.Entry) error {
				got = append(got, folder+"|"+e.Key)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if want := []string{"a/|migrations/a-r.json", "|migrations/r.json"}; !slices.Equal(got, want) {
				t.Fatalf("got %q, want %q", got, want)
			}
			if err := store.Unwrap(open("")).(store.InternalAbove).ListInternalAbove(ctx, "migrations/", func(string, store.Entry) error {
				t.Error("a store at the root has nothing above it")
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := store.Unwrap(open("a/")).(store.InternalAbove).ListInternalAbove(ctx, "../", func(string, store.Entry) error { return nil }); err == nil {
				t.Error("a name that is no folder of the internal folder was listed")
			}
			// From deeper down, every folder above: the root's, a/'s, a/b/'s.
			got = nil
			err = store.Unwrap(open("a/b/d/")).(store.InternalAbove).ListInternalAbove(ctx, "migrations/", func(folder string, e store.Entry) error {
				got = append(got, folder+"|"+e.Key)
				return nil
			})
			slices.Sort(got)
			if want := []string{"a/b/|migrations/a-b-r.json", "a/|migrations/a-r.json", "|migrations/r.json"}; err != nil || !slices.Equal(got, want) {
				t.Fatalf("from a/b/d/: got %q, want %q (%v)", got, want, err)
			}
		})
	}
}
