//go:build unix

package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

// TestFileBucketRemovesNothingThroughALink: on a file:// bucket a folder
// swapped for a link to outside the bucket (by another process, after the
// plan) does not send a removal through it: Delete, DeleteMany and
// DeleteInternal fail for a key below it, never as "not there" (which gc
// would count as removed), and the files outside are left; a key that is
// not below a link is still removed, with its attributes file.
func TestFileBucketRemovesNothingThroughALink(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "bucket")
	outside := filepath.Join(base, "outside")
	writeFile(t, filepath.Join(outside, "t", "f.png"), "precious")
	writeFile(t, filepath.Join(outside, "g.png"), "precious")
	writeFile(t, filepath.Join(outside, "h.png"), "precious")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	st := openT(t, "file://"+root)
	defer st.Close()
	in, _ := store.AsInternal(st)
	br, _ := store.AsBatchRemover(st)
	for _, err := range []error{
		in.PutInternal(ctx, "trash/RUN/u/t/f.png", strings.NewReader("x"), store.PutOptions{}),
		st.Put(ctx, "v/g.png", strings.NewReader("x"), store.PutOptions{}),
		st.Put(ctx, "v/h.png", strings.NewReader("x"), store.PutOptions{}),
		st.Put(ctx, "w/kept.png", strings.NewReader("x"), store.PutOptions{}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, swap := range []string{filepath.Join(root, store.InternalDir, "trash", "RUN", "u"), filepath.Join(root, "v")} {
		if err := os.RemoveAll(swap); err != nil {
			t.Fatal(err)
		}
		symlink(t, outside, swap)
	}
	errs := map[string]error{
		"DeleteInternal": in.DeleteInternal(ctx, "trash/RUN/u/t/f.png"),
		"Delete":         st.Delete(ctx, "v/g.png"),
		"DeleteMany":     br.DeleteMany(ctx, []string{"v/h.png"}, nil, nil)[0],
	}
	for op, err := range errs {
		if err == nil || errors.Is(err, store.ErrNotExist) {
			t.Errorf("%s below a link to outside: %v, want an error that is not ErrNotExist", op, err)
		}
	}
	for _, f := range []string{"t/f.png", "g.png", "h.png"} {
		if b, err := os.ReadFile(filepath.Join(outside, f)); err != nil || string(b) != "precious" {
			t.Errorf("outside/%s: %q, %v; a removal went through the link", f, b, err)
		}
	}
	if err := st.Delete(ctx, "w/kept.png"); err != nil {
		t.Fatalf("Delete of a key below no link: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(root, "w", "*"))
	if len(left) != 0 {
		t.Errorf("left after Delete: %v", left)
	}

	// A prefixed bucket removes below its prefix; a key fileblob keeps under
	// an escaped file name is not guessed at: it stays, and the error says why.
	sub := openT(t, "file://"+root+"?prefix=p/")
	defer sub.Close()
	for _, k := range []string{"x/y.png", "a__0x41__.png"} {
		if err := sub.Put(ctx, k, strings.NewReader("x"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sub.Delete(ctx, "x/y.png"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "p", "x", "y.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("p/x/y.png after Delete: %v", err)
	}
	if err := sub.Delete(ctx, "a__0x41__.png"); err == nil || errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), "escaped file name") {
		t.Errorf("Delete of a key with an escaped file name: %v", err)
	}
	if _, err := sub.Stat(ctx, "a__0x41__.png"); err != nil {
		t.Errorf("the key with an escaped file name: %v, want it kept", err)
	}
}
