package storetest

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

// capabilityTypes maps each capability to its interface, so that testFeatures
// checks FeaturesOf against the store's method set rather than against itself.
var capabilityTypes = map[store.Features]reflect.Type{
	store.FeatureInternal:       reflect.TypeFor[store.Internal](),
	store.FeatureListUnordered:  reflect.TypeFor[store.UnorderedLister](),
	store.FeatureListKeys:       reflect.TypeFor[store.KeyLister](),
	store.FeatureBatchMove:      reflect.TypeFor[store.BatchMover](),
	store.FeatureMoveTo:         reflect.TypeFor[store.LocalMover](),
	store.FeatureReportsMD5:     reflect.TypeFor[store.MD5Reporter](),
	store.FeatureBatchRemove:    reflect.TypeFor[store.BatchRemover](),
	store.FeatureListSelected:   reflect.TypeFor[store.SelectiveLister](),
	store.FeatureDeleteRecovery: reflect.TypeFor[store.RecoveryReporter](),
	store.FeatureRestoreVersion: reflect.TypeFor[store.VersionRestorer](),
}

// testFeatures: FeaturesOf reports exactly the capabilities whose interface
// the store's type implements, less those it drops, and every capability
// has a conformance subtest.
func testFeatures(t *testing.T, s store.Store) {
	got := store.FeaturesOf(s)
	var drops store.Features
	if d, ok := s.(store.Dropper); ok {
		drops = d.Drops()
	}
	var want store.Features
	for f, iface := range capabilityTypes {
		if reflect.TypeOf(s).Implements(iface) && drops&f == 0 {
			want |= f
		}
	}
	if got != want {
		t.Errorf("FeaturesOf(%T) = %s, want %s (implemented, less drops %s); a type that embeds a store of package store must implement store.Dropper", s, got, want, drops)
	}
	if len(capabilityTypes) != strings.Count(store.AllFeatures.String(), ",")+1 {
		t.Errorf("the suite covers %d capabilities; the package has %s", len(capabilityTypes), store.AllFeatures)
	}
	t.Logf("%s: %s", s.Location(), got)
}

// describedKeys are written by the listing tests: nested, with an
// internal-looking folder below the top.
var describedKeys = map[string]int{"x/1": 1, "x/22": 22, "x/y/333": 333, "b": 4, "sub/.mediactl/k": 5, "é/ü": 6}

func putDescribed(t *testing.T, s store.Store) {
	t.Helper()
	for k, n := range describedKeys {
		put(t, s, k, strings.Repeat("x", n), store.PutOptions{})
	}
	if in, ok := store.AsInternal(s); ok {
		if err := in.PutInternal(ctx, "journal/1.json", strings.NewReader("{}"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func collect(t *testing.T, list func(prefix string, fn func(store.Entry) error) error, prefix string) []store.Entry {
	t.Helper()
	var es []store.Entry
	if err := list(prefix, func(e store.Entry) error { es = append(es, e); return nil }); err != nil {
		t.Fatalf("listing %q: %v", prefix, err)
	}
	slices.SortFunc(es, func(a, b store.Entry) int { return strings.Compare(a.Key, b.Key) })
	return es
}

// sameDescription compares what a listing describes.
func sameDescription(a, b store.Entry) bool {
	return a.Key == b.Key && a.Size == b.Size && a.ModTime.Equal(b.ModTime) && a.Mode == b.Mode && a.Link == b.Link
}

// testListUnordered: the unordered listing reports what List reports, each
// entry once and described alike, whatever its order.
func testListUnordered(t *testing.T, s store.Store) {
	ul, ok := store.AsUnorderedLister(s)
	if !ok {
		t.Skip("no unordered listing")
	}
	putDescribed(t, s)
	if l, ok := s.(store.Local); ok {
		if err := os.Symlink("x/1", filepath.Join(l.Dir(), "link")); err != nil {
			t.Fatal(err)
		}
	}
	unordered := func(prefix string, fn func(store.Entry) error) error { return ul.ListUnordered(ctx, prefix, fn) }
	for _, prefix := range []string{"", "x", "x/", "x/y/", "sub/", "é", ".mediactl", ".mediactl/", "zz"} {
		want := list(t, s, prefix)
		got := collect(t, unordered, prefix)
		if !slices.EqualFunc(got, want, sameDescription) {
			t.Errorf("ListUnordered(%q) =\n %+v\nList =\n %+v", prefix, got, want)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := ul.ListUnordered(ctx, "", func(store.Entry) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("ListUnordered with a failing callback = %v after %d entries, want the callback's error after 1", err, n)
	}
}

// testListSelected: the selective listing reports exactly what List reports
// that keep accepts, in List's order and described alike; keep is asked about
// blobs only, never about a folder; store.ListSelected does the same for a
// store without the capability.
func testListSelected(t *testing.T, s store.Store) {
	putDescribed(t, s)
	if l, ok := s.(store.Local); ok {
		if err := os.Symlink("x/1", filepath.Join(l.Dir(), "x", "link")); err != nil {
			t.Fatal(err)
		}
	}
	var all []store.Entry
	if err := s.List(ctx, "", func(e store.Entry) error { all = append(all, e); return nil }); err != nil {
		t.Fatal(err)
	}
	keeps := map[string]func(string) bool{
		"none":            func(string) bool { return false },
		"all":             func(string) bool { return true },
		"below x/":        func(k string) bool { return strings.HasPrefix(k, "x/") },
		"odd-length keys": func(k string) bool { return len(k)%2 == 1 },
		"not x/y/333":     func(k string) bool { return k != "x/y/333" },
	}
	lists := map[string]func(prefix string, keep func(string) bool, fn func(store.Entry) error) error{
		"store.ListSelected": func(prefix string, keep func(string) bool, fn func(store.Entry) error) error {
			return store.ListSelected(ctx, s, prefix, keep, fn)
		},
	}
	if sl, ok := store.AsSelectiveLister(s); ok {
		lists["ListSelected"] = func(prefix string, keep func(string) bool, fn func(store.Entry) error) error {
			return sl.ListSelected(ctx, prefix, keep, fn)
		}
	}
	isBlob := map[string]bool{}
	for _, e := range all {
		isBlob[e.Key] = true
	}
	for lname, listSelected := range lists {
		for kname, keep := range keeps {
			for _, prefix := range []string{"", "x", "x/", "x/y/", "é", ".mediactl/", "zz"} {
				var asked []string
				ask := func(k string) bool { asked = append(asked, k); return keep(k) }
				var got []store.Entry
				if err := listSelected(prefix, ask, func(e store.Entry) error { got = append(got, e); return nil }); err != nil {
					t.Fatalf("%s(%q, %s): %v", lname, prefix, kname, err)
				}
				var want []store.Entry
				for _, e := range all {
					if strings.HasPrefix(e.Key, prefix) && keep(e.Key) {
						want = append(want, e)
					}
				}
				if !slices.EqualFunc(got, want, sameDescription) {
					t.Errorf("%s(%q, %s) =\n %+v\nwant List's, filtered =\n %+v", lname, prefix, kname, got, want)
				}
				for _, k := range asked {
					if !isBlob[k] {
						t.Errorf("%s(%q, %s) asked keep about %q, which List does not report", lname, prefix, kname, k)
					}
				}
			}
		}
	}
	for lname, listSelected := range lists {
		var got []store.Entry
		if err := listSelected("", nil, func(e store.Entry) error { got = append(got, e); return nil }); err != nil {
			t.Fatalf("%s with a nil keep: %v", lname, err)
		}
		if !slices.EqualFunc(got, all, sameDescription) {
			t.Errorf("%s with a nil keep =\n %+v\nwant List's =\n %+v", lname, got, all)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := store.ListSelected(ctx, s, "", func(string) bool { return true }, func(store.Entry) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("ListSelected with a failing callback = %v after %d entries, want the callback's error after 1", err, n)
	}
}

// testListKeys: ListKeys reports the keys List reports; OpenEntry opens like
// Open and describes what it opened as Stat does.
func testListKeys(t *testing.T, s store.Store) {
	kl, ok := store.AsKeyLister(s)
	if !ok {
		t.Skip("no ListKeys/OpenEntry")
	}
	putDescribed(t, s)
	l, local := s.(store.Local)
	if local {
		if err := os.Symlink("x/1", filepath.Join(l.Dir(), "link")); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(prefix string, fn func(store.Entry) error) error { return kl.ListKeys(ctx, prefix, fn) }
	for _, prefix := range []string{"", "x/", "sub/", ".mediactl/"} {
		want := list(t, s, prefix)
		got := collect(t, keys, prefix)
		if !slices.EqualFunc(got, want, func(g, w store.Entry) bool {
			if g.Key != w.Key {
				return false
			}
			if w.Regular() {
				// A regular blob may be left undescribed.
				return g.Regular() && (g.Size == -1 || g.Size == w.Size)
			}
			return sameDescription(g, w)
		}) {
			t.Errorf("ListKeys(%q) =\n %+v\nList =\n %+v", prefix, got, want)
		}
	}
	stop := errors.New("stop")
	if err := kl.ListKeys(ctx, "", func(store.Entry) error { return stop }); err != stop {
		t.Errorf("ListKeys with a failing callback = %v, want the callback's error", err)
	}

	for k, n := range describedKeys {
		rc, e, err := kl.OpenEntry(ctx, k)
		if err != nil {
			t.Errorf("OpenEntry(%q): %v", k, err)
			continue
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != strings.Repeat("x", n) {
			t.Errorf("OpenEntry(%q) read %q, %v", k, b, err)
		}
		st, err := s.Stat(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if !sameDescription(e, st) || e.Size != int64(n) {
			t.Errorf("OpenEntry(%q) describes %+v; Stat %+v", k, e, st)
		}
	}
	if _, _, err := kl.OpenEntry(ctx, "missing"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("OpenEntry(missing) = %v, want ErrNotExist", err)
	}
	if _, _, err := kl.OpenEntry(ctx, "x"); err == nil {
		t.Error("OpenEntry of a folder: no error")
	}
	for _, bad := range []string{"../x", store.InternalDir + "/journal/1.json", "a//b"} {
		if _, _, err := kl.OpenEntry(ctx, bad); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("OpenEntry(%q) = %v, want ErrInvalidKey", bad, err)
		}
	}
	if local {
		if _, _, err := kl.OpenEntry(ctx, "link"); !errors.Is(err, store.ErrNotRegular) {
			t.Errorf("OpenEntry of a symlink = %v, want ErrNotRegular", err)
		}
	}
}

// testMoveManyToInternal: the batch move moves what is still as described,
// into the internal folder, and leaves in place what changed, what is
// missing and what would replace something.
func testMoveManyToInternal(t *testing.T, s store.Store) {
	bm, ok := store.AsBatchMover(s)
	if !ok {
		t.Skip("no batch move")
	}
	in, ok := store.AsInternal(s)
	if !ok {
		t.Fatal("a batch move into the internal folder without an internal folder")
	}
	for _, k := range []string{"a", "sub/b", "changed", "taken"} {
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
	moves := []store.InternalMove{
		describe("a", "trash/r/a"),
		describe("sub/b", "trash/r/sub/b"),
		changed,
		{Key: "missing", Name: "trash/r/missing"},
		describe("taken", "trash/r/taken"),
		{Key: "../escape", Name: "trash/r/escape"},
		{Key: "a2", Name: "../../escape"},
	}
	errs := bm.MoveManyToInternal(ctx, moves)
	if len(errs) != len(moves) {
		t.Fatalf("MoveManyToInternal returned %d errors for %d moves", len(errs), len(moves))
	}
	for i, want := range []error{nil, nil, store.ErrChanged, store.ErrNotExist, store.ErrExist, store.ErrInvalidKey, store.ErrInvalidKey} {
		if want == nil && errs[i] != nil || want != nil && !errors.Is(errs[i], want) {
			t.Errorf("move %s to %s: %v, want %v", moves[i].Key, moves[i].Name, errs[i], want)
		}
	}
	wantKeys(t, s, "", "changed", "taken")
	for name, want := range map[string]string{"trash/r/a": "content of a", "trash/r/sub/b": "content of sub/b", "trash/r/taken": "already there"} {
		rc, err := in.OpenInternal(ctx, name)
		if err != nil {
			t.Errorf("OpenInternal(%s): %v", name, err)
			continue
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if string(b) != want {
			t.Errorf("%s holds %q, want %q", name, b, want)
		}
	}
	// A caller that plans nothing (zero ModTime) moves whatever is there.
	if errs := bm.MoveManyToInternal(ctx, []store.InternalMove{{Key: "changed", Name: "trash/r2/changed"}}); errs[0] != nil {
		t.Errorf("move without a description: %v", errs[0])
	}
	if errs := bm.MoveManyToInternal(ctx, nil); len(errs) != 0 {
		t.Errorf("empty batch: %v", errs)
	}

	// A destination folder that is a link fails its move and ends the batch;
	// nothing lands where the link points.
	l, local := s.(store.Local)
	if !local {
		return
	}
	outside := t.TempDir()
	if err := in.PutInternal(ctx, "trash/placeholder", strings.NewReader(""), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(l.Dir(), store.InternalDir, "trash", "r3")); err != nil {
		t.Fatal(err)
	}
	put(t, s, "c", "c", store.PutOptions{})
	errs = bm.MoveManyToInternal(ctx, []store.InternalMove{{Key: "taken", Name: "trash/r3/taken"}, {Key: "c", Name: "trash/r4/c"}})
	if !errors.Is(errs[0], store.ErrUnsafePath) || !errors.Is(errs[1], store.ErrNotAttempted) {
		t.Errorf("moves through a linked folder: %v; %v; want ErrUnsafePath, then ErrNotAttempted", errs[0], errs[1])
	}
	wantKeys(t, s, "", "c", "taken")
	if des, err := os.ReadDir(outside); err != nil || len(des) != 0 {
		t.Errorf("the folder the link points to holds %v (%v)", des, err)
	}
}

// testMoveTo: a blob renamed into another local store is in one store or the
// other, never replaces anything and is never a link.
func testMoveTo(t *testing.T, s store.Store) {
	lm, ok := store.AsLocalMover(s)
	if !ok {
		t.Skip("no MoveTo")
	}
	// The destination on the source's file system where we can: beside it.
	parent := t.TempDir()
	if l, ok := s.(store.Local); ok {
		parent = filepath.Dir(l.Dir())
	}
	dstDir, err := os.MkdirTemp(parent, "moveto-dst")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dstDir) })
	dst, err := store.OpenLocal(dstDir)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()

	put(t, s, "u/a.png", "a", store.PutOptions{})
	err = lm.MoveTo(ctx, "u/a.png", dst, "q/run/u/a.png")
	if errors.Is(err, store.ErrCrossDevice) {
		t.Skipf("the destination is on another file system: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	wantNotExist(t, s, "u/a.png")
	if got := read(t, dst, "q/run/u/a.png"); got != "a" {
		t.Errorf("moved content %q", got)
	}
	put(t, s, "b", "b", store.PutOptions{})
	put(t, dst, "taken", "taken", store.PutOptions{})
	if err := lm.MoveTo(ctx, "b", dst, "taken"); !errors.Is(err, store.ErrExist) {
		t.Errorf("MoveTo onto an existing key = %v, want ErrExist", err)
	}
	if got := read(t, dst, "taken"); got != "taken" {
		t.Errorf("destination replaced: %q", got)
	}
	if err := lm.MoveTo(ctx, "missing", dst, "m"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("MoveTo of a missing key = %v, want ErrNotExist", err)
	}
	for _, c := range [][2]string{{"../b", "x"}, {"b", "../x"}, {"b", store.InternalDir + "/x"}} {
		if err := lm.MoveTo(ctx, c[0], dst, c[1]); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("MoveTo(%q, %q) = %v, want ErrInvalidKey", c[0], c[1], err)
		}
	}
	if l, ok := s.(store.Local); ok {
		if err := os.Symlink("b", filepath.Join(l.Dir(), "link")); err != nil {
			t.Fatal(err)
		}
		if err := lm.MoveTo(ctx, "link", dst, "link"); !errors.Is(err, store.ErrNotRegular) {
			t.Errorf("MoveTo of a symlink = %v, want ErrNotRegular", err)
		}
		outside := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(dstDir, "linked")); err != nil {
			t.Fatal(err)
		}
		if err := lm.MoveTo(ctx, "b", dst, "linked/b"); !errors.Is(err, store.ErrUnsafePath) {
			t.Errorf("MoveTo through a linked destination folder = %v, want ErrUnsafePath", err)
		}
		if des, _ := os.ReadDir(outside); len(des) != 0 {
			t.Errorf("the folder the link points to holds %v", des)
		}
	}
	if _, ok := s.(store.Local); ok {
		wantKeys(t, s, "", "b", "link")
		wantKeys(t, dst, "", "linked", "q/run/u/a.png", "taken")
	} else {
		wantKeys(t, s, "", "b")
		wantKeys(t, dst, "", "q/run/u/a.png", "taken")
	}
}

// testReportsMD5: where ReportsMD5 says Stat reports an MD5, Stat reports the
// MD5 of the content.
func testReportsMD5(t *testing.T, s store.Store) {
	mr, ok := store.AsMD5Reporter(s)
	if !ok {
		t.Skip("does not say when it reports an MD5")
	}
	reported := 0
	for _, n := range []int{0, 1, 5000, 1<<20 + 3} {
		data := make([]byte, n)
		rand.Read(data)
		key := fmt.Sprintf("md5/%d", n)
		if err := s.Put(ctx, key, bytes.NewReader(data), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		e, err := s.Stat(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !mr.ReportsMD5(int64(n)) {
			continue
		}
		reported++
		if sum := md5.Sum(data); !bytes.Equal(e.MD5, sum[:]) {
			t.Errorf("%d bytes: ReportsMD5 is true, Stat's MD5 is %x, want %x", n, e.MD5, sum)
		}
	}
	if reported == 0 {
		t.Error("ReportsMD5 is false for every size up to 1 MiB: the capability says nothing")
	}
}

// testBatchRemove: ListRange describes exactly the blobs of the range, as
// List does; CopyToInternal copies and leaves the blob; DeleteMany removes
// what it says it removed, reports the rest, and touches nothing else.
func testBatchRemove(t *testing.T, s store.Store) {
	br, ok := store.AsBatchRemover(s)
	if !ok {
		t.Skip("no batch removal")
	}
	in, ok := store.AsInternal(s)
	if !ok {
		t.Fatal("a batch removal without an internal folder to copy into")
	}
	putDescribed(t, s)
	for _, k := range []string{"w", "x0", "x/0", "x/1a", "x/2", "xa", "y"} {
		put(t, s, k, "content of "+k, store.PutOptions{})
	}
	ranged := func(first, last string) []store.Entry {
		t.Helper()
		var es []store.Entry
		if err := br.ListRange(ctx, first, last, func(e store.Entry) error { es = append(es, e); return nil }); err != nil {
			t.Fatalf("ListRange(%q, %q): %v", first, last, err)
		}
		return es
	}
	all := list(t, s, "")
	for _, r := range [][2]string{{"x/1", "x/22"}, {"x/1a", "x/y/333"}, {"w", "xa"}, {"a", "z"}, {"x/1", "x/1"}, {"x/2", "x/1"}, {"sub/-", "sub/zz"}, {"-", "b"}, {"x/0", "x0"}, {"é/ü", "é/ü"}} {
		var want []store.Entry
		for _, e := range all {
			if e.Key >= r[0] && e.Key <= r[1] {
				want = append(want, e)
			}
		}
		if got := ranged(r[0], r[1]); !slices.EqualFunc(got, want, sameDescription) {
			t.Errorf("ListRange(%q, %q) =\n %+v\nwant\n %+v", r[0], r[1], got, want)
		}
	}
	stop := errors.New("stop")
	if err := br.ListRange(ctx, "a", "z", func(store.Entry) error { return stop }); err != stop {
		t.Errorf("ListRange with a failing callback = %v, want the callback's error", err)
	}
	if err := br.ListRange(ctx, "../a", "z", func(store.Entry) error { return nil }); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("ListRange from ../a = %v, want ErrInvalidKey", err)
	}

	if err := br.CopyToInternal(ctx, "x/2", "trash/r/x/2"); err != nil {
		t.Fatalf("CopyToInternal: %v", err)
	}
	if got := read(t, s, "x/2"); got != "content of x/2" {
		t.Errorf("after CopyToInternal the blob holds %q", got)
	}
	rc, err := in.OpenInternal(ctx, "trash/r/x/2")
	if err != nil {
		t.Fatalf("the copy: %v", err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "content of x/2" {
		t.Errorf("the copy holds %q", b)
	}
	// Keys whose names a URL spells in more than one way: each copy holds
	// its own blob's bytes. (gocloud named an S3 copy's source with
	// url.QueryEscape: SeaweedFS read "a b.png" as "a+b.png".)
	odd := []string{"a b.png", "a+b.png", "x%41.png", "xA.png", "é.png", "q?x.png", "h#1.png", "s;t&u=v.png"}
	for _, k := range odd {
		put(t, s, k, "content of "+k, store.PutOptions{})
	}
	for _, k := range odd {
		if err := br.CopyToInternal(ctx, k, "trash/odd/"+k); err != nil {
			t.Errorf("CopyToInternal(%q): %v", k, err)
			continue
		}
		rc, err := in.OpenInternal(ctx, "trash/odd/"+k)
		if err != nil {
			t.Errorf("the copy of %q: %v", k, err)
			continue
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if string(b) != "content of "+k {
			t.Errorf("the copy of %q holds %q", k, b)
		}
	}
	for _, k := range odd {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := br.CopyToInternal(ctx, "missing", "trash/r/missing"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("CopyToInternal of a missing key = %v, want ErrNotExist", err)
	}
	for _, c := range [][2]string{{"../x", "trash/r/a"}, {"x/2", "../../escape"}} {
		if err := br.CopyToInternal(ctx, c[0], c[1]); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("CopyToInternal(%q, %q) = %v, want ErrInvalidKey", c[0], c[1], err)
		}
	}

	// Many keys: more than one DeleteObjects request on S3.
	var many []string
	for i := range 1003 {
		k := fmt.Sprintf("many/%04d", i)
		put(t, s, k, "m", store.PutOptions{})
		many = append(many, k)
	}
	keys := append([]string{"w", "x/1a", "../escape", store.InternalDir + "/journal/1.json", "é/ü"}, many...)
	errs := br.DeleteMany(ctx, keys, nil, nil)
	if len(errs) != len(keys) {
		t.Fatalf("DeleteMany returned %d errors for %d keys", len(errs), len(keys))
	}
	for i, k := range keys {
		bad := i == 2 || i == 3
		if bad && !errors.Is(errs[i], store.ErrInvalidKey) || !bad && errs[i] != nil {
			t.Errorf("DeleteMany: %s: %v", k, errs[i])
		}
	}
	if errs := br.DeleteMany(ctx, []string{"missing"}, nil, nil); errs[0] != nil && !errors.Is(errs[0], store.ErrNotExist) {
		t.Errorf("DeleteMany of a missing key = %v, want nil or ErrNotExist", errs[0])
	}
	if errs := br.DeleteMany(ctx, nil, nil, nil); len(errs) != 0 {
		t.Errorf("empty DeleteMany: %v", errs)
	}
	wantKeys(t, s, "", "b", "sub/.mediactl/k", "x/0", "x/1", "x/2", "x/22", "x/y/333", "x0", "xa", "y")
	if rc, err := in.OpenInternal(ctx, "journal/1.json"); err != nil {
		t.Errorf("the internal file named by an invalid key: %v", err)
	} else {
		rc.Close()
	}
}

// testDeleteIfMatch: where DeletesIfMatch is true, Stat and ListRange report
// the same ETag, an upload of the same content gives a new one, and
// DeleteMany with the old one keeps the new upload (ErrChanged) while the
// current one deletes it; where it is false, the etags change nothing. Etags
// that do not match the keys one for one delete nothing.
func testDeleteIfMatch(t *testing.T, s store.Store) {
	br, ok := store.AsBatchRemover(s)
	if !ok {
		t.Skip("no batch removal")
	}
	const key, content = "ab/blob.png", "the same content"
	put(t, s, key, content, store.PutOptions{})
	old, err := s.Stat(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if errs := br.DeleteMany(ctx, []string{key}, []string{old.ETag, old.ETag}, nil); len(errs) != 1 || errs[0] == nil {
		t.Errorf("DeleteMany of 1 key with 2 etags: %v, want an error", errs)
	}
	wantKeys(t, s, "", key)
	if !br.DeletesIfMatch() {
		if errs := br.DeleteMany(ctx, []string{key}, []string{"not its etag"}, nil); errs[0] != nil {
			t.Fatalf("DeleteMany, etags not used here: %v", errs[0])
		}
		wantKeys(t, s, "")
		return
	}
	if old.ETag == "" {
		t.Fatal("Stat reports no ETag where DeleteMany deletes on condition of it")
	}
	var listed []store.Entry
	if err := br.ListRange(ctx, key, key, func(e store.Entry) error { listed = append(listed, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].ETag != old.ETag {
		t.Fatalf("ListRange: %+v, want one entry with Stat's ETag %q", listed, old.ETag)
	}
	// The runtime saves the same blob again (a user sends the image again).
	put(t, s, key, content, store.PutOptions{})
	now, err := s.Stat(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if now.ETag == old.ETag {
		t.Fatalf("an upload of the same content kept ETag %q", old.ETag)
	}
	errs := br.DeleteMany(ctx, []string{key}, []string{old.ETag}, nil)
	if !errors.Is(errs[0], store.ErrChanged) {
		t.Errorf("DeleteMany with the ETag of the upload before: %v, want ErrChanged", errs[0])
	}
	if got := read(t, s, key); got != content {
		t.Errorf("after a refused delete %s holds %q", key, got)
	}
	if errs := br.DeleteMany(ctx, []string{key}, []string{now.ETag}, nil); errs[0] != nil {
		t.Errorf("DeleteMany with the current ETag: %v", errs[0])
	}
	wantKeys(t, s, "")
}

// testListedETag: where a bucket's listings give an ETag (List, and
// ListRange where the store removes in batches), it is the very string Stat
// gives of the same write, before and after the blob is written again: the
// check right before a delete compares a listed tag with one a Stat saw
// (trash's stillGoes), and a deleted run's record keeps the listed one to
// find the blob's version. On S3 and Azure the listings must give it.
func testListedETag(t *testing.T, s store.Store) {
	if _, ok := s.(store.Bucket); !ok {
		t.Skip("not a bucket: no ETags")
	}
	scheme := ""
	if sc, ok := s.(interface{ Scheme() string }); ok {
		scheme = sc.Scheme()
	}
	required := scheme == "s3" || scheme == "azblob"
	keys := []string{"ab/one.png", "ab/two.png", "empty.png", "zz.bin"}
	write := func(round string) map[string]string {
		t.Helper()
		stat := map[string]string{}
		for _, k := range keys {
			content := round + " bytes of " + k
			if k == "empty.png" {
				content = ""
			}
			if err := s.Put(ctx, k, strings.NewReader(content), store.PutOptions{}); err != nil {
				t.Fatalf("Put(%q): %v", k, err)
			}
			e, err := s.Stat(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if required && e.ETag == "" {
				t.Fatalf("Stat(%q) on %s gives no ETag", k, scheme)
			}
			stat[k] = e.ETag
		}
		return stat
	}
	check := func(how string, stat map[string]string, es []store.Entry) {
		t.Helper()
		if len(es) != len(keys) {
			t.Fatalf("%s listed %+v, want %v", how, es, keys)
		}
		for _, e := range es {
			switch {
			case e.ETag == "" && required:
				t.Errorf("%s: %s listed without an ETag on %s (Stat: %s)", how, e.Key, scheme, stat[e.Key])
			case e.ETag != "" && e.ETag != stat[e.Key]:
				t.Errorf("%s: %s listed with ETag %s, Stat gives %s", how, e.Key, e.ETag, stat[e.Key])
			}
		}
	}
	for _, round := range []string{"first", "second"} {
		stat := write(round)
		check("List after the "+round+" write", stat, list(t, s, ""))
		if br, ok := store.AsBatchRemover(s); ok {
			var es []store.Entry
			if err := br.ListRange(ctx, keys[0], keys[len(keys)-1], func(e store.Entry) error { es = append(es, e); return nil }); err != nil {
				t.Fatal(err)
			}
			check("ListRange after the "+round+" write", stat, es)
		}
	}
}

// recoveryKinds are the kinds a RecoveryReporter may answer.
var recoveryKinds = []string{store.RecoveryNone, store.RecoveryUnknown, store.RecoveryS3Versioning, store.RecoveryS3VersioningSuspended,
	store.RecoveryGCSVersioning, store.RecoveryGCSSoftDelete, store.RecoveryAzureVersioning, store.RecoveryAzureSoftDelete}

// testDeleteRecovery: a store that says whether its service keeps deleted
// objects answers with a known kind and a detail, on a server that lets the
// test's credentials read the setting without "unknown"; a retention only
// where something is kept; and "unknown", at once, on a cancelled context.
func testDeleteRecovery(t *testing.T, s store.Store) {
	rr, ok := store.AsRecoveryReporter(s)
	if !ok {
		t.Skip("does not say whether deleted objects are kept")
	}
	put(t, s, "a", "a", store.PutOptions{})
	r := rr.DeleteRecovery(ctx)
	if !slices.Contains(recoveryKinds, r.Kind) || r.Detail == "" {
		t.Fatalf("DeleteRecovery = %+v: want one of %q, with a detail", r, recoveryKinds)
	}
	if r.Kind == store.RecoveryUnknown {
		t.Errorf("DeleteRecovery = %+v: the test server should let its credentials read the setting", r)
	}
	if r.Retention < 0 || r.Retention > 0 && !r.Keeps() {
		t.Errorf("DeleteRecovery = %+v: a retention where nothing is kept", r)
	}
	t.Logf("%s: %s, retention %v: %s", s.Location(), r.Kind, r.Retention, r.Detail)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if r := rr.DeleteRecovery(cancelled); r.Kind != store.RecoveryUnknown && r.Kind != store.RecoveryNone {
		t.Errorf("DeleteRecovery on a cancelled context = %+v, want unknown (or none where nothing is asked)", r)
	}
}
