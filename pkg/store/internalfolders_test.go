package store_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

// TestWithInternalFolders: every listing of a local store and of a file://
// bucket reports each folder named .mediactl below the root, whether it
// holds a file, only empty folders, or nothing; never the store's own, nor a
// file named like one, nor one the prefix does not reach.
func TestWithInternalFolders(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, d := range []string{
		".mediactl/trash/r0",    // the store's own
		"old-pod/.mediactl/tmp", // only empty folders
		"old-pod/.mediactl/trash/r1",
		"a/b/.mediactl",           // empty
		"full/.mediactl/trash/r2", // with a file, below
		"file",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"full/.mediactl/trash/r2/x", "file/.mediactl", "blob"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f)), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	local, err := store.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	bucket, err := store.Open(ctx, "file://"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	fb := bucket.(*store.BucketStore)
	all := []string{"a/b/.mediactl", "full/.mediactl", "old-pod/.mediactl"}
	listings := map[string]func(ctx context.Context, prefix string, fn func(store.Entry) error) error{
		"local List":          local.List,
		"local ListUnordered": local.ListUnordered,
		"local ListKeys":      local.ListKeys,
		"local ListSelected": func(ctx context.Context, prefix string, fn func(store.Entry) error) error {
			return local.ListSelected(ctx, prefix, func(string) bool { return false }, fn)
		},
		"file List":      fb.List,
		"file ListEvery": fb.ListEvery,
		"file ListSelected": func(ctx context.Context, prefix string, fn func(store.Entry) error) error {
			return fb.ListSelected(ctx, prefix, func(string) bool { return false }, fn)
		},
	}
	for name, list := range listings {
		for prefix, want := range map[string][]string{"": all, "old-pod/": all[2:], "a": all[:1], "blob": nil} {
			var got []string
			lctx := store.WithInternalFolders(ctx, func(key string) { got = append(got, key) })
			if err := list(lctx, prefix, func(store.Entry) error { return nil }); err != nil {
				t.Fatalf("%s %q: %v", name, prefix, err)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s %q: reported %q, want %q", name, prefix, got, want)
			}
		}
		// Without the context's function the listing is the same.
		keys := func(c context.Context) []string {
			var out []string
			if err := list(c, "", func(e store.Entry) error { out = append(out, e.Key); return nil }); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			slices.Sort(out)
			return out
		}
		if with, without := keys(store.WithInternalFolders(ctx, func(string) {})), keys(ctx); !slices.Equal(with, without) {
			t.Errorf("%s: listed %q with the function, %q without", name, with, without)
		}
	}
}

// TestWithInternalFoldersPlaceholders: a bucket without folders reports the
// folder of a "directory" placeholder inside another store's internal
// folder, which is all there may be of it; not one of its own.
func TestWithInternalFoldersPlaceholders(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := st.(*store.BucketStore).Blob()
	for _, k := range []string{".mediactl/trash/", "old-pod/.mediactl/trash/r1/", "x/", "x/.mediactlz/", "blob"} {
		if err := b.WriteAll(ctx, k, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	var got, keys []string
	lctx := store.WithInternalFolders(ctx, func(key string) { got = append(got, key) })
	if err := st.List(lctx, "", func(e store.Entry) error { keys = append(keys, e.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"old-pod/.mediactl"}; !slices.Equal(got, want) {
		t.Errorf("reported %q, want %q", got, want)
	}
	if strings.Join(keys, ",") != "blob" {
		t.Errorf("listed %q, want only the blob", keys)
	}
}
