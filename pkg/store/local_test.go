package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

// newLocal returns a store on a fresh directory, which lies inside a parent folder
// that holds things outside the store for links to point at.
func newLocal(t *testing.T) (s *store.LocalStore, dir, outside string) {
	t.Helper()
	parent := t.TempDir()
	dir = filepath.Join(parent, "store")
	outside = filepath.Join(parent, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir, outside
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		if runtime.GOOS == "windows" {
			t.Skipf("symlinks unavailable: %v", err)
		}
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func listAll(t *testing.T, s store.Store, prefix string) map[string]store.Entry {
	t.Helper()
	m := map[string]store.Entry{}
	var keys []string
	err := s.List(ctx, prefix, func(e store.Entry) error {
		m[e.Key] = e
		keys = append(keys, e.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(keys) {
		t.Errorf("List not in key order: %q", keys)
	}
	return m
}

func TestLocalSymlinks(t *testing.T) {
	s, dir, outside := newLocal(t)
	writeFile(t, filepath.Join(dir, "a.png"), "inside")
	writeFile(t, filepath.Join(dir, "sub", "x"), "sub x")
	writeFile(t, filepath.Join(outside, "secret"), "outside secret")
	writeFile(t, filepath.Join(outside, "deep", "y"), "outside y")
	links := map[string]string{
		"in":        "a.png",                            // to a file inside
		"dangling":  "nothing-here",                     // to nothing
		"abs-out":   filepath.Join(outside, "secret"),   // absolute, outside
		"rel-out":   "../outside/secret",                // relative, outside
		"dirlink":   "sub",                              // to a directory inside
		"outdir":    outside,                            // to a directory outside
		"sub/up":    "../a.png",                         // nested, to a file inside
		"sub/upout": "../../outside/deep",               // nested, to a directory outside
		"loop":      "loop",                             // to itself
		"chain":     "in",                               // to a link
		"abs-in":    filepath.Join(dir, "a.png"),        // absolute, inside
		"dotdot":    "..",                               // to the parent
		"root":      "/",                                // to /
		"self-dir":  ".",                                // to the store itself
		"sub/deep":  "../../../../../../../../../../..", // far up
	}
	for l, target := range links {
		symlink(t, target, filepath.Join(dir, filepath.FromSlash(l)))
	}

	got := listAll(t, s, "")
	for l, target := range links {
		e, ok := got[l]
		if !ok {
			t.Errorf("link %s not listed", l)
			continue
		}
		if e.Mode&fs.ModeSymlink == 0 || e.Regular() || e.Link != target || e.Size != int64(len(target)) {
			t.Errorf("link %s listed as %+v; want a symlink entry with Link %q, Size %d", l, e, target, len(target))
		}
	}
	for k := range got {
		if _, isLink := links[k]; !isLink && k != "a.png" && k != "sub/x" {
			t.Errorf("listed %q: a link was followed", k)
		}
	}
	if len(got) != len(links)+2 {
		t.Errorf("listed %d entries, want %d", len(got), len(links)+2)
	}

	// Stat describes the link itself.
	e, err := s.Stat(ctx, "abs-out")
	if err != nil || e.Link != links["abs-out"] || e.Mode&fs.ModeSymlink == 0 {
		t.Errorf("Stat(abs-out) = %+v, %v", e, err)
	}

	// Nothing opens through a link, whether the link is the key or a parent.
	for _, key := range []string{"in", "dangling", "abs-out", "rel-out", "dirlink", "outdir", "sub/up", "loop", "chain", "abs-in", "root",
		"dirlink/x", "outdir/secret", "sub/upout/y", "self-dir/a.png", "dotdot/outside/secret"} {
		r, err := s.Open(ctx, key)
		if r != nil {
			r.Close()
		}
		if !errors.Is(err, store.ErrNotRegular) {
			t.Errorf("Open(%q) = %v, want ErrNotRegular", key, err)
		}
	}
	for _, key := range []string{"dirlink/x", "outdir/secret", "sub/upout/y"} {
		if _, err := s.Stat(ctx, key); !errors.Is(err, store.ErrNotRegular) {
			t.Errorf("Stat(%q) through a linked directory = %v, want ErrNotRegular", key, err)
		}
		if err := s.Delete(ctx, key); !errors.Is(err, store.ErrNotRegular) {
			t.Errorf("Delete(%q) through a linked directory = %v, want ErrNotRegular", key, err)
		}
	}

	// Put never writes through a link.
	for _, key := range []string{"outdir/new", "dirlink/new", "sub/upout/new"} {
		if err := s.Put(ctx, key, strings.NewReader("x"), store.PutOptions{}); err == nil {
			t.Errorf("Put(%q) through a linked directory succeeded", key)
		}
	}
	for _, p := range []string{filepath.Join(outside, "new"), filepath.Join(dir, "sub", "new"), filepath.Join(outside, "deep", "new")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written through a link", p)
		}
	}
	// With IfNotExist, a link (even dangling) is an existing key.
	for _, key := range []string{"in", "dangling", "rel-out"} {
		if err := s.Put(ctx, key, strings.NewReader("x"), store.PutOptions{IfNotExist: true}); !errors.Is(err, store.ErrExist) {
			t.Errorf("Put(%q, IfNotExist) = %v, want ErrExist", key, err)
		}
	}
	// Without it, the link is replaced by a file and its target is untouched.
	if err := s.Put(ctx, "rel-out", strings.NewReader("replaced"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(outside, "secret")); got != "outside secret" {
		t.Errorf("link target outside changed to %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "rel-out")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("rel-out after Put: %v, %v; want a regular file", fi, err)
	}

	// Delete removes links, not their targets, and never a directory.
	for _, key := range []string{"abs-out", "outdir", "dirlink", "in"} {
		if err := s.Delete(ctx, key); err != nil {
			t.Errorf("Delete(%q): %v", key, err)
		}
	}
	for _, p := range []string{filepath.Join(outside, "secret"), filepath.Join(outside, "deep", "y"), filepath.Join(dir, "sub", "x"), filepath.Join(dir, "a.png")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("link target %s gone after deleting the link: %v", p, err)
		}
	}
	if err := s.Delete(ctx, "sub"); !errors.Is(err, store.ErrNotRegular) {
		t.Errorf("Delete(sub) = %v, want ErrNotRegular (a directory)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "x")); err != nil {
		t.Errorf("sub/x gone: %v", err)
	}
}

func TestLocalSymlinkedStoreDir(t *testing.T) {
	// The store directory itself may be reached through a link: that is the
	// operator's choice, not a link inside the store.
	_, dir, _ := newLocal(t)
	writeFile(t, filepath.Join(dir, "k"), "v")
	alias := filepath.Join(t.TempDir(), "alias")
	symlink(t, dir, alias)
	s, err := store.OpenLocal(alias)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Dir() != alias {
		t.Errorf("Dir() = %q, want %q", s.Dir(), alias)
	}
	if got := listAll(t, s, ""); len(got) != 1 {
		t.Errorf("listing through the aliased dir: %v", got)
	}
}

func TestLocalPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	s, dir, _ := newLocal(t)
	if err := s.Put(ctx, "p/q/r.png", strings.NewReader("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "top", strings.NewReader("x"), store.PutOptions{IfNotExist: true}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{
		"p/q/r.png":                0o600,
		"top":                      0o600,
		"p":                        fs.ModeDir | 0o700,
		"p/q":                      fs.ModeDir | 0o700,
		store.InternalDir:          fs.ModeDir | 0o700,
		store.InternalDir + "/tmp": fs.ModeDir | 0o700,
	} {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode(), want)
		}
	}
	// Listing reports the lstat mode.
	if e := listAll(t, s, "")["top"]; e.Mode != 0o600 {
		t.Errorf("listed mode %v", e.Mode)
	}
	// A replaced file gets 0600 too, and an existing directory keeps its mode.
	writeFile(t, filepath.Join(dir, "shared", "f"), "old")
	if err := os.Chmod(filepath.Join(dir, "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "shared/f", strings.NewReader("new"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{"shared": fs.ModeDir | 0o755, "shared/f": 0o600} {
		if fi, _ := os.Lstat(filepath.Join(dir, p)); fi.Mode() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode(), want)
		}
	}
}

func TestLocalRename(t *testing.T) {
	s, dir, outside := newLocal(t)
	writeFile(t, filepath.Join(dir, "a"), "a")
	writeFile(t, filepath.Join(dir, "b"), "b")
	writeFile(t, filepath.Join(dir, "d", "x"), "x")
	symlink(t, "a", filepath.Join(dir, "link"))
	symlink(t, outside, filepath.Join(dir, "outlink"))

	if err := s.Rename(ctx, "a", "moved/deeper/a"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "moved", "deeper", "a")); got != "a" {
		t.Errorf("moved content %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("source still there: %v", err)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "moved")); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700 {
		t.Errorf("created directory mode %v, want 0700", fi.Mode().Perm())
	}
	// Onto an existing key: refused, nothing changes.
	if err := s.Rename(ctx, "b", "moved/deeper/a"); !errors.Is(err, store.ErrExist) {
		t.Errorf("Rename onto existing = %v, want ErrExist", err)
	}
	if err := s.Rename(ctx, "b", "b"); !errors.Is(err, store.ErrExist) {
		t.Errorf("Rename onto itself = %v, want ErrExist", err)
	}
	if readFile(t, filepath.Join(dir, "b")) != "b" || readFile(t, filepath.Join(dir, "moved", "deeper", "a")) != "a" {
		t.Error("a refused rename changed something")
	}
	// A link is moved as a link.
	if err := s.Rename(ctx, "link", "l2"); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "l2")); err != nil || target != "a" {
		t.Errorf("moved link: %q, %v", target, err)
	}
	// Not a directory, not through a linked directory, not a missing key.
	if err := s.Rename(ctx, "d", "d2"); !errors.Is(err, store.ErrNotRegular) {
		t.Errorf("Rename of a directory = %v, want ErrNotRegular", err)
	}
	// A linked folder on the way to the destination makes the destination
	// unsafe: that is not a fact about the source.
	if err := s.Rename(ctx, "b", "outlink/b"); !errors.Is(err, store.ErrUnsafePath) || errors.Is(err, store.ErrNotRegular) || errors.Is(err, store.ErrNotExist) {
		t.Errorf("Rename into a linked directory = %v, want ErrUnsafePath only", err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "b")); err == nil {
		t.Error("renamed through a link to outside")
	}
	if err := s.Rename(ctx, "nope", "x"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("Rename of a missing key = %v, want ErrNotExist", err)
	}
	if err := s.Rename(ctx, "b", "../escaped"); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("Rename to ../escaped = %v, want ErrInvalidKey", err)
	}
}

func TestLocalInternal(t *testing.T) {
	s, dir, _ := newLocal(t)
	writeFile(t, filepath.Join(dir, "blob"), "blob")
	writeFile(t, filepath.Join(dir, store.InternalDir, "state.json"), "{}")
	writeFile(t, filepath.Join(dir, "x", store.InternalDir, "y"), "not internal")

	if got := listAll(t, s, ""); len(got) != 2 || got["blob"].Key == "" || got["x/"+store.InternalDir+"/y"].Key == "" {
		t.Errorf("listing = %v; want blob and x/.mediactl/y only", got)
	}
	r, err := s.InternalRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := r.ReadFile("state.json")
	r.Close()
	if err != nil || string(data) != "{}" {
		t.Errorf("InternalRoot ReadFile = %q, %v", data, err)
	}
	if err := s.MoveToInternal(ctx, "blob", "trash/1/blob"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, store.InternalDir, "trash", "1", "blob")); got != "blob" {
		t.Errorf("trashed content %q", got)
	}
	if err := s.MoveFromInternal(ctx, "trash/1/blob", "back"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "back")); got != "blob" {
		t.Errorf("restored content %q", got)
	}
	if err := s.PutInternal(ctx, "journal/j1", strings.NewReader("j"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, store.InternalDir, "journal", "j1")); got != "j" {
		t.Errorf("journal %q", got)
	}
	if err := s.PutInternal(ctx, "../escape", strings.NewReader("j"), store.PutOptions{}); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("PutInternal(../escape) = %v", err)
	}

	// An InternalDir that is a link is not used.
	s2, dir2, outside2 := newLocal(t)
	symlink(t, outside2, filepath.Join(dir2, store.InternalDir))
	if r, err := s2.InternalRoot(); !errors.Is(err, store.ErrNotRegular) {
		if r != nil {
			r.Close()
		}
		t.Errorf("InternalRoot with a linked %s = %v, want ErrNotRegular", store.InternalDir, err)
	}
	if err := s2.Put(ctx, "k", strings.NewReader("k"), store.PutOptions{}); !errors.Is(err, store.ErrNotRegular) {
		t.Errorf("Put staging through a linked %s = %v, want ErrNotRegular", store.InternalDir, err)
	}
	if des, _ := os.ReadDir(outside2); len(des) != 0 {
		t.Errorf("something was written through the linked internal folder: %v", des)
	}
}

func TestLocalStatDirectory(t *testing.T) {
	s, dir, _ := newLocal(t)
	writeFile(t, filepath.Join(dir, "d", "f"), "f")
	e, err := s.Stat(ctx, "d")
	if err != nil || !e.Mode.IsDir() || e.Regular() {
		t.Errorf("Stat(d) = %+v, %v; want a directory entry", e, err)
	}
	if r, err := s.Open(ctx, "d"); !errors.Is(err, store.ErrNotRegular) {
		if r != nil {
			r.Close()
		}
		t.Errorf("Open(d) = %v, want ErrNotRegular", err)
	}
	// A key below a file.
	if err := s.Put(ctx, "d/f/g", strings.NewReader("g"), store.PutOptions{}); err == nil {
		t.Error("Put below a file succeeded")
	}
}

func TestOpenLocalErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := store.OpenLocal(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenLocal(missing) = %v", err)
	}
	writeFile(t, filepath.Join(dir, "file"), "x")
	if _, err := store.OpenLocal(filepath.Join(dir, "file")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("OpenLocal(file) = %v", err)
	}
	s, err := store.OpenLocal(dir + "/./sub/..")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Dir() != dir || s.Location() != dir {
		t.Errorf("Dir() = %q, want %q", s.Dir(), dir)
	}
}

// TestListKeysAndOpenEntry: ListKeys reports the keys List reports (regular
// files undescribed), OpenEntry opens each with the description List gives,
// and neither ever opens or follows a symbolic link, even one on the way.
func TestListKeysAndOpenEntry(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	for k, v := range map[string]string{"a.bin": "a", "sub/b.bin": "bb", "sub/deeper/c.bin": "ccc"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(k)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.bin"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.bin"), filepath.Join(dir, "link.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var listed, keyed []string
	if err := st.List(ctx, "", func(e store.Entry) error {
		listed = append(listed, fmt.Sprintf("%s %d %v", e.Key, e.Size, e.Mode))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.ListKeys(ctx, "", func(e store.Entry) error {
		if e.Size < 0 {
			rc, desc, err := st.OpenEntry(ctx, e.Key)
			if err != nil {
				t.Errorf("%s: %v", e.Key, err)
				return nil
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil || int64(len(b)) != desc.Size {
				t.Errorf("%s: read %q, %v", e.Key, b, err)
			}
			e = desc
		}
		keyed = append(keyed, fmt.Sprintf("%s %d %v", e.Key, e.Size, e.Mode))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(listed)
	sort.Strings(keyed) // ListKeys comes in directory order
	if fmt.Sprint(listed) != fmt.Sprint(keyed) || len(listed) != 5 {
		t.Fatalf("List %v\nListKeys %v", listed, keyed)
	}
	for _, k := range []string{"link.bin", "linkdir/secret.bin"} {
		if rc, _, err := st.OpenEntry(ctx, k); err == nil || !errors.Is(err, store.ErrNotRegular) {
			if rc != nil {
				rc.Close()
			}
			t.Errorf("OpenEntry(%s) = %v, want ErrNotRegular", k, err)
		}
	}
}

// TestDeleteManyInternal: the files named go, and with them the folders from
// under down that they leave empty; a folder still holding a file stays, a
// name outside under is refused, a name already gone is no error, and a
// folder is never removed as a file.
func TestDeleteManyInternal(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, n := range []string{"trash/r/a", "trash/r/x/y/b", "trash/r/x/z/c", "trash/r/x/z/kept", "trash/other/d", "trash/r/dir/e"} {
		if err := st.PutInternal(ctx, n, strings.NewReader(n), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	errs := st.DeleteManyInternal(ctx, "trash/r", []string{"trash/r/a", "trash/r/x/y/b", "trash/r/x/z/c", "trash/other/d", "trash/r/gone", "trash/r/dir", "../escape"})
	for i, want := range []error{nil, nil, nil, errors.New("not below"), nil, store.ErrNotRegular, store.ErrInvalidKey} {
		switch {
		case want == nil && errs[i] != nil:
			t.Errorf("delete %d: %v", i, errs[i])
		case want != nil && errs[i] == nil:
			t.Errorf("delete %d: no error, want %v", i, want)
		case want != nil && !errors.Is(errs[i], want) && !strings.Contains(errs[i].Error(), want.Error()):
			t.Errorf("delete %d: %v, want %v", i, errs[i], want)
		}
	}
	var left []string
	filepath.WalkDir(filepath.Join(dir, store.InternalDir, "trash"), func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			rel, _ := filepath.Rel(dir, p)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	want := []string{".mediactl/trash", ".mediactl/trash/other", ".mediactl/trash/other/d", ".mediactl/trash/r", ".mediactl/trash/r/dir", ".mediactl/trash/r/dir/e", ".mediactl/trash/r/x", ".mediactl/trash/r/x/z", ".mediactl/trash/r/x/z/kept"}
	if fmt.Sprint(left) != fmt.Sprint(want) {
		t.Errorf("left %v\nwant %v", left, want)
	}
	// Once nothing is left, the run folder goes too.
	for _, err := range st.DeleteManyInternal(ctx, "trash/r", []string{"trash/r/x/z/kept", "trash/r/dir/e"}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, store.InternalDir, "trash", "r")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the emptied run folder: %v, want it gone", err)
	}
}

// TestMoveManyToInternal: moves are renames checked against the caller's
// description; a changed blob, a missing one and an occupied destination are
// refused one by one, and nothing is replaced.
func TestMoveManyToInternal(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	describe := func(k string) store.Entry {
		e, err := st.Stat(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, k := range []string{"a", "b", "sub/c", "d"} {
		if err := st.Put(ctx, k, strings.NewReader("content of "+k), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c, d := describe("a"), describe("b"), describe("sub/c"), describe("d")
	// b is rewritten after it was described; d's destination is taken.
	if err := os.WriteFile(filepath.Join(dir, "b"), []byte("rewritten, longer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := st.PutInternal(ctx, "trash/r/d", strings.NewReader("occupied"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	errs := st.MoveManyToInternal(ctx, []store.InternalMove{
		{Key: "a", Name: "trash/r/a", Size: a.Size, ModTime: a.ModTime},
		{Key: "b", Name: "trash/r/b", Size: b.Size, ModTime: b.ModTime},
		{Key: "sub/c", Name: "trash/r/sub/c", Size: c.Size, ModTime: c.ModTime},
		{Key: "d", Name: "trash/r/d", Size: d.Size, ModTime: d.ModTime},
		{Key: "gone", Name: "trash/r/gone"},
	})
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("moves failed: %v %v", errs[0], errs[2])
	}
	if !errors.Is(errs[1], store.ErrChanged) || !errors.Is(errs[3], fs.ErrExist) || !errors.Is(errs[4], fs.ErrNotExist) {
		t.Fatalf("errors %v", errs)
	}
	for k, want := range map[string]string{".mediactl/trash/r/a": "content of a", ".mediactl/trash/r/sub/c": "content of sub/c", ".mediactl/trash/r/d": "occupied", "b": "rewritten, longer", "d": "content of d"} {
		got, err := os.ReadFile(filepath.Join(dir, k))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", k, got, err, want)
		}
	}
	for _, k := range []string{"a", "sub/c"} {
		if _, err := os.Stat(filepath.Join(dir, k)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still in the store", k)
		}
	}
}

// TestDeleteManyInternalFolderMovedAway: a file of the run is gone already
// only when its folder is there. A folder that another process moved away
// (here back into the store) or replaced by a file makes the removals through
// it fail: the file is somewhere else, not deleted, and must not be counted
// as deleted.
func TestDeleteManyInternalFolderMovedAway(t *testing.T) {
	s, dir, _ := newLocal(t)
	ctx := context.Background()
	for _, n := range []string{"trash/r/sub/x.png", "trash/r/f/y.png", "trash/r/z.png"} {
		if err := s.PutInternal(ctx, n, strings.NewReader(n), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	run := filepath.Join(dir, store.InternalDir, "trash", "r")
	if err := os.Rename(filepath.Join(run, "sub"), filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(run, "f"), filepath.Join(dir, "f")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(run, "f"), "a file where the folder was")
	errs := s.DeleteManyInternal(ctx, "trash/r", []string{"trash/r/sub/x.png", "trash/r/f/y.png", "trash/r/z.png", "trash/r/gone.png"})
	for i, wantErr := range []bool{true, true, false, false} {
		if (errs[i] != nil) != wantErr {
			t.Errorf("delete %d: %v, want an error: %v", i, errs[i], wantErr)
		}
	}
	for _, p := range []string{filepath.Join(dir, "sub", "x.png"), filepath.Join(dir, "f", "y.png")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s, moved away with its folder: %v, want it untouched", p, err)
		}
	}
}
