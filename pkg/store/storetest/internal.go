package storetest

import (
	"errors"

	"io"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

// testInternalPrefixes: ListInternal lists every internal file whose name
// starts with the prefix, whatever the prefix cuts (nothing, part of a
// folder's name, a whole folder), on a local store in lexical order. A
// wrapper that routes some folders elsewhere (the trash of --trash-dir)
// lists them as the store it stands for would.
func testInternalPrefixes(t *testing.T, s store.Store) {
	in, ok := store.AsInternal(s)
	if !ok {
		t.Skip("no internal folder")
	}
	names := []string{"journal/1.jsonl", "lock", "marks/m1", "trash/run-1/a.png", "trash/run-1/sub/b.png", "trash/run-2/c.png", "trashy", "zz"}
	for _, n := range names {
		if err := in.PutInternal(ctx, n, strings.NewReader("x:"+n), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, ordered := s.(store.Local)
	if w, ok := s.(store.Wrapper); ok {
		_, ordered = store.Unwrap(w).(store.Local)
	}
	for _, prefix := range []string{"", "t", "tra", "trash", "trash/", "trash/run-1", "trash/run-1/", "trash/run-1/s", "j", "z", "nothing"} {
		var want []string
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				want = append(want, n)
			}
		}
		var got []string
		if err := in.ListInternal(ctx, prefix, func(e store.Entry) error {
			got = append(got, e.Key)
			if e.Size != int64(len("x:"+e.Key)) {
				t.Errorf("ListInternal(%q): %s has size %d, want %d", prefix, e.Key, e.Size, len("x:"+e.Key))
			}
			return nil
		}); err != nil {
			t.Fatalf("ListInternal(%q): %v", prefix, err)
		}
		if !ordered {
			slices.Sort(got)
		}
		if !slices.Equal(got, want) {
			t.Errorf("ListInternal(%q) = %q, want %q", prefix, got, want)
		}
	}
	wantKeys(t, s, "")
}

// testCheckedInternalMove: a store that moves one blob at a time into its
// internal folder only if it is still as described (the trash of
// --trash-dir) moves what is unchanged, leaves in place what changed, is
// missing or would replace something, and refuses invalid names; a blob
// moved is read back through the internal folder and restored by
// MoveFromInternal.
func testCheckedInternalMove(t *testing.T, s store.Store) {
	cm, ok := s.(store.CheckedInternalMover)
	if !ok {
		t.Skip("no checked move")
	}
	in, ok := store.AsInternal(s)
	if !ok {
		t.Fatal("a checked move into the internal folder without an internal folder")
	}
	for _, k := range []string{"a", "sub/b", "changed", "older", "taken"} {
		put(t, s, k, "content of "+k, store.PutOptions{})
	}
	if err := in.PutInternal(ctx, "trash/r/taken", strings.NewReader("already there"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	describe := func(key, name string) store.InternalMove {
		e, err := s.Stat(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return store.InternalMove{Key: key, Name: name, Size: e.Size, ModTime: e.ModTime}
	}
	changed := describe("changed", "trash/r/changed")
	changed.Size++
	older := describe("older", "trash/r/older")
	older.ModTime = older.ModTime.Add(-1)
	missing := describe("a", "trash/r/missing")
	missing.Key = "missing"
	escape := describe("a", "trash/r/escape")
	escape.Key = "../escape"
	outside := describe("a", "../../escape")
	for _, c := range []struct {
		m    store.InternalMove
		want error
	}{
		{describe("a", "trash/r/a"), nil},
		{describe("sub/b", "trash/r/sub/b"), nil},
		{changed, store.ErrChanged},
		{older, store.ErrChanged},
		{missing, store.ErrNotExist},
		{describe("taken", "trash/r/taken"), store.ErrExist},
		{escape, store.ErrInvalidKey},
		{outside, errRefused},
	} {
		err := cm.MoveToInternalIf(ctx, c.m)
		if c.want == errRefused && err != nil {
			continue
		}
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("MoveToInternalIf(%s to %s) = %v, want %v", c.m.Key, c.m.Name, err, c.want)
		}
	}
	wantKeys(t, s, "", "changed", "older", "taken")
	for name, want := range map[string]string{"trash/r/a": "content of a", "trash/r/sub/b": "content of sub/b", "trash/r/taken": "already there"} {
		if got := readInternal(t, in, name); got != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
	if err := in.MoveFromInternal(ctx, "trash/r/sub/b", "sub/b"); err != nil {
		t.Fatalf("MoveFromInternal: %v", err)
	}
	if got := read(t, s, "sub/b"); got != "content of sub/b" {
		t.Errorf("restored sub/b holds %q", got)
	}
	if _, err := in.OpenInternal(ctx, "trash/r/sub/b"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("restored blob still in the internal folder: %v", err)
	}
}

// errRefused stands for any error: a name outside the internal folder is
// refused, whichever way.
var errRefused = errors.New("any error")

func readInternal(t *testing.T, in store.Internal, name string) string {
	t.Helper()
	rc, err := in.OpenInternal(ctx, name)
	if err != nil {
		t.Fatalf("OpenInternal(%s): %v", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return string(b)
}
