package trash_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mediactl/mediactl/pkg/trash"
)

// TestCheckDir: a folder for removed blobs is judged by its real path, also
// when it is a link (dangling or not) or lies below one.
func TestCheckDir(t *testing.T) {
	root := t.TempDir()
	st := filepath.Join(root, "store")
	must(t, os.MkdirAll(filepath.Join(st, "sub"), 0o700))
	must(t, os.Symlink(filepath.Join(st, "sub"), filepath.Join(root, "into")))
	must(t, os.Symlink(filepath.Join(st, "not-yet"), filepath.Join(root, "dangling")))
	must(t, os.Symlink(root, filepath.Join(root, "parent-link")))
	must(t, os.Symlink(st, filepath.Join(root, "store-link")))
	cases := []struct {
		dir, relation string
	}{
		{filepath.Join(st, "trash"), "inside"},
		{st, "inside"},
		{filepath.Join(root, "into"), "inside"},
		{filepath.Join(root, "into", "deeper", "still"), "inside"},
		{filepath.Join(root, "dangling"), "inside"},
		{filepath.Join(root, "parent-link"), "contains"},
		{root, "contains"},
		{"/", "root"},
		{filepath.Join(root, "store2"), ""}, // a sibling whose name starts with the store's
		{filepath.Join(root, "trash"), ""},
	}
	for _, c := range cases {
		err := trash.CheckDir(st, c.dir)
		var pe *trash.PlaceError
		switch {
		case c.relation == "" && err != nil:
			t.Errorf("%s: %v, want accepted", c.dir, err)
		case c.relation != "" && (!errors.As(err, &pe) || pe.Relation != c.relation):
			t.Errorf("%s: %v, want %s", c.dir, err, c.relation)
		}
	}
	// The store given through a link is the same store.
	if err := trash.CheckDir(filepath.Join(root, "store-link"), filepath.Join(st, "x")); err == nil {
		t.Error("a folder inside the store, named through a link to the store, was accepted")
	}
}
