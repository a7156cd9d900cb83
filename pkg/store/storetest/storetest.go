// Package storetest is a conformance suite for store.Store implementations, in the
// spirit of gocloud.dev/blob/drivertest: every kind of store (local directory,
// mem://, file://, S3, GCS, Azure) runs the same tests unchanged, so that scan,
// verify, gc and migrate can rely on one behaviour.
package storetest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
)

// Run runs the conformance suite. open must return a new, empty store each time it
// is called (it is called once per subtest, with the subtest's t, and may register
// cleanups on it); Run closes the store at the end of the subtest.
//
// Features that only some stores have are tested where the store has them:
// content type and metadata on buckets ([store.Bucket]), modification times and
// Rename on local stores ([store.Local]), and each optional capability of
// [store.FeaturesOf] (the internal folder, unordered listing, ListKeys and
// OpenEntry, the batch move, MoveTo, ReportsMD5, the batch removal, what deletes
// leave behind) where the store offers it.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"Location", testLocation},
		{"RoundTrip", testRoundTrip},
		{"Overwrite", testOverwrite},
		{"ZeroByte", testZeroByte},
		{"LargeBlob", testLargeBlob},
		{"IfNotExist", testIfNotExist},
		{"IfNotExistRace", testIfNotExistRace},
		{"ListOrder", testListOrder},
		{"ListPrefix", testListPrefix},
		{"ListEntries", testListEntries},
		{"ListCallbackError", testListCallbackError},
		{"ListMany", testListMany},
		{"ListInternalMany", testListInternalMany},
		{"InternalDirHidden", testInternalDirHidden},
		{"InternalFiles", testInternalFiles},
		{"InternalPrefixes", testInternalPrefixes},
		{"InvalidKeys", testInvalidKeys},
		{"Missing", testMissing},
		{"Delete", testDelete},
		{"ConcurrentPuts", testConcurrentPuts},
		{"FailingReader", testFailingReader},
		{"CanceledContext", testCanceledContext},
		{"StatedSize", testStatedSize},
		{"Rename", testRename},
		{"Features", testFeatures},
		{"ListUnordered", testListUnordered},
		{"ListKeys", testListKeys},
		{"ListSelected", testListSelected},
		{"MoveManyToInternal", testMoveManyToInternal},
		{"CheckedInternalMove", testCheckedInternalMove},
		{"MoveTo", testMoveTo},
		{"ReportsMD5", testReportsMD5},
		{"BatchRemove", testBatchRemove},
		{"DeleteIfMatch", testDeleteIfMatch},
		{"ListedETag", testListedETag},
		{"DeleteRecovery", testDeleteRecovery},
		{"RestoreVersion", testRestoreVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

// Helpers.

// put writes data to key, stating its size as migrate does; the tests that
// call Put themselves cover unstated sizes.
func put(t *testing.T, s store.Store, key, data string, opts store.PutOptions) {
	t.Helper()
	if opts.Size == 0 {
		opts.Size = int64(len(data))
	}
	if err := s.Put(ctx, key, strings.NewReader(data), opts); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func read(t *testing.T, s store.Store, key string) string {
	t.Helper()
	r, err := s.Open(ctx, key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading %q: %v", key, err)
	}
	return string(b)
}

func list(t *testing.T, s store.Store, prefix string) []store.Entry {
	t.Helper()
	var es []store.Entry
	if err := s.List(ctx, prefix, func(e store.Entry) error {
		es = append(es, e)
		return nil
	}); err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return es
}

// testListInternalMany: ListInternal reports every file of a folder holding
// more than a page of them, beside a file whose name sorts before the
// folder's and one after ("a-x.png", "a/…", "a.png": fileblob's own listing
// dropped the first once a page ended inside the folder, and a restore of
// the run then missed it).
func testListInternalMany(t *testing.T, s store.Store) {
	in, ok := store.AsInternal(s)
	if !ok {
		t.Skip("no internal folder")
	}
	var want []string
	for i := range 1200 {
		want = append(want, fmt.Sprintf("trash/run/a/%05d.png", i))
	}
	want = append(want, "trash/run/a-x.png", "trash/run/a.png", "trash/run/.manifest.jsonl")
	putAll(t, want, func(k string) error { return in.PutInternal(ctx, k, strings.NewReader(k), store.PutOptions{}) })
	var got []string
	if err := in.ListInternal(ctx, "trash/run/", func(e store.Entry) error { got = append(got, e.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		missing := []string{}
		for _, k := range want {
			if _, found := slices.BinarySearch(got, k); !found {
				missing = append(missing, k)
			}
		}
		t.Fatalf("ListInternal reported %d of %d files; missing %q", len(got), len(want), missing[:min(5, len(missing))])
	}
}

// putAll calls put for every key, 32 at a time (a bucket takes thousands
// of small writes one by one slowly), and fails the test with the first error.
func putAll(t *testing.T, keys []string, put func(key string) error) {
	t.Helper()
	work := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 32 {
		wg.Go(func() {
			for k := range work {
				if err := put(k); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}

func listKeys(t *testing.T, s store.Store, prefix string) []string {
	t.Helper()
	keys := []string{}
	for _, e := range list(t, s, prefix) {
		keys = append(keys, e.Key)
	}
	return keys
}

func wantKeys(t *testing.T, s store.Store, prefix string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := listKeys(t, s, prefix); !slices.Equal(got, want) {
		t.Errorf("List(%q) keys:\n got %q\nwant %q", prefix, got, want)
	}
}

func wantNotExist(t *testing.T, s store.Store, key string) {
	t.Helper()
	if _, err := s.Stat(ctx, key); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("Stat(%q) = %v, want an error wrapping ErrNotExist", key, err)
	}
}

// noStaging checks that a local store left nothing in its staging folder.
func noStaging(t *testing.T, s store.Store) {
	t.Helper()
	l, ok := s.(store.Local)
	if !ok {
		return
	}
	des, err := os.ReadDir(filepath.Join(l.Dir(), store.InternalDir, "tmp"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, de := range des {
		t.Errorf("staging file left behind: %s", de.Name())
	}
}

// Tests.

func testLocation(t *testing.T, s store.Store) {
	loc := s.Location()
	if loc == "" {
		t.Fatal("Location() is empty")
	}
	if l, ok := s.(store.Local); ok {
		if !filepath.IsAbs(l.Dir()) || filepath.Clean(l.Dir()) != l.Dir() {
			t.Errorf("Dir() = %q, want an absolute clean path", l.Dir())
		}
	}
	if b, ok := s.(store.Bucket); ok {
		if !strings.HasPrefix(loc, b.Scheme()+"://") {
			t.Errorf("Location() = %q, want it to start with %q", loc, b.Scheme()+"://")
		}
		if strings.Contains(loc, "@") {
			t.Errorf("Location() = %q looks like it holds credentials", loc)
		}
		if p := b.Prefix(); p != "" && !strings.HasSuffix(p, "/") {
			t.Errorf("Prefix() = %q, want \"\" or a trailing /", p)
		}
	}
}

func testRoundTrip(t *testing.T, s store.Store) {
	data := "\x89PNG\r\n\x1a\nnot really a png"
	opts := store.PutOptions{
		ContentType: "image/png",
		Metadata:    map[string]string{"sha256": "0123abcd"},
	}
	_, local := s.(store.Local)
	mtime := time.Date(2023, 4, 5, 6, 7, 8, 0, time.UTC)
	if local {
		opts.ModTime = mtime
	}
	before := time.Now().Add(-time.Hour)
	put(t, s, "u/t/uploads/f.png", data, opts)

	e, err := s.Stat(ctx, "u/t/uploads/f.png")
	if err != nil {
		t.Fatal(err)
	}
	if e.Key != "u/t/uploads/f.png" || e.Size != int64(len(data)) || !e.Regular() || e.Link != "" {
		t.Errorf("Stat = %+v, want key, size %d, regular, no link", e, len(data))
	}
	if local {
		if !e.ModTime.Equal(mtime) {
			t.Errorf("ModTime = %v, want %v (PutOptions.ModTime)", e.ModTime, mtime)
		}
	} else if e.ModTime.Before(before) {
		t.Errorf("ModTime = %v, want about now", e.ModTime)
	}
	if _, ok := s.(store.Bucket); ok {
		if e.ContentType != "image/png" {
			t.Errorf("ContentType = %q, want image/png", e.ContentType)
		}
		if got := e.Metadata["sha256"]; got != "0123abcd" {
			t.Errorf("Metadata = %v, want sha256=0123abcd", e.Metadata)
		}
	}
	if e.MD5 != nil {
		if sum := md5.Sum([]byte(data)); !bytes.Equal(e.MD5, sum[:]) {
			t.Errorf("MD5 = %x, want %x", e.MD5, sum)
		}
	}
	if got := read(t, s, "u/t/uploads/f.png"); got != data {
		t.Errorf("Open read %q, want %q", got, data)
	}
	es := list(t, s, "")
	if len(es) != 1 || es[0].Key != "u/t/uploads/f.png" || es[0].Size != int64(len(data)) || !es[0].Regular() {
		t.Errorf("List = %+v, want the one blob", es)
	}
	noStaging(t, s)
}

func testOverwrite(t *testing.T, s store.Store) {
	put(t, s, "k", "first", store.PutOptions{})
	put(t, s, "k", "second, longer", store.PutOptions{})
	if got := read(t, s, "k"); got != "second, longer" {
		t.Errorf("after overwrite read %q", got)
	}
	if e, err := s.Stat(ctx, "k"); err != nil || e.Size != int64(len("second, longer")) {
		t.Errorf("Stat = %+v, %v", e, err)
	}
}

func testZeroByte(t *testing.T, s store.Store) {
	put(t, s, "empty", "", store.PutOptions{})
	e, err := s.Stat(ctx, "empty")
	if err != nil || e.Size != 0 || !e.Regular() {
		t.Fatalf("Stat = %+v, %v; want a regular zero-byte blob", e, err)
	}
	if got := read(t, s, "empty"); got != "" {
		t.Errorf("read %q, want nothing", got)
	}
	es := list(t, s, "")
	if len(es) != 1 || es[0].Key != "empty" || es[0].Size != 0 {
		t.Errorf("List = %+v", es)
	}
}

func testLargeBlob(t *testing.T, s store.Store) {
	data := make([]byte, 3<<20+17)
	rand.Read(data)
	if err := s.Put(ctx, "big.bin", bytes.NewReader(data), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "big.bin"); got != string(data) {
		t.Errorf("read %d bytes, not the %d written", len(got), len(data))
	}
	if e, err := s.Stat(ctx, "big.bin"); err != nil || e.Size != int64(len(data)) {
		t.Errorf("Stat = %+v, %v", e, err)
	}
}

func testIfNotExist(t *testing.T, s store.Store) {
	put(t, s, "a/b.png", "original", store.PutOptions{IfNotExist: true})
	for _, size := range []int64{0, int64(len("replacement"))} {
		err := s.Put(ctx, "a/b.png", strings.NewReader("replacement"), store.PutOptions{IfNotExist: true, Size: size})
		if !errors.Is(err, store.ErrExist) {
			t.Fatalf("second Put with IfNotExist (Size %d) = %v, want an error wrapping ErrExist", size, err)
		}
		if !strings.Contains(err.Error(), "a/b.png") {
			t.Errorf("error %q does not name the key", err)
		}
	}
	if got := read(t, s, "a/b.png"); got != "original" {
		t.Errorf("content after refused Put = %q, want original", got)
	}
	wantKeys(t, s, "", "a/b.png")
	noStaging(t, s)
}

func testIfNotExistRace(t *testing.T, s store.Store) {
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			data := "writer " + strconv.Itoa(i)
			size := int64(len(data)) * int64(i%2) // every other writer states the size
			errs[i] = s.Put(ctx, "race", strings.NewReader(data), store.PutOptions{IfNotExist: true, Size: size})
		})
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if won >= 0 {
				t.Errorf("writers %d and %d both succeeded with IfNotExist", won, i)
			}
			won = i
		case !errors.Is(err, store.ErrExist):
			t.Errorf("writer %d: %v, want nil or ErrExist", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no writer succeeded")
	}
	if got := read(t, s, "race"); got != "writer "+strconv.Itoa(won) {
		t.Errorf("content %q, want that of writer %d", got, won)
	}
}

// orderKeys sort differently as keys than as a naive per-directory walk would
// report them ("a-c" < "a.b" < "a/b" < "a0" in byte order).
var orderKeys = []string{"a/b", "a-c", "a.b", "a0", "ab/c/d", "b", "a/b0/c", "a/b-", "A", "z/z/z/z", "é"}

func testListOrder(t *testing.T, s store.Store) {
	for _, k := range orderKeys {
		put(t, s, k, k, store.PutOptions{})
	}
	want := slices.Clone(orderKeys)
	slices.Sort(want)
	wantKeys(t, s, "", want...)
}

func testListPrefix(t *testing.T, s store.Store) {
	for _, k := range orderKeys {
		put(t, s, k, k, store.PutOptions{})
	}
	for _, prefix := range []string{"a", "a/", "a/b", "ab/c/", "ab/c/d", "z/", "zz", "a/b0/", "é"} {
		var want []string
		for _, k := range orderKeys {
			if strings.HasPrefix(k, prefix) {
				want = append(want, k)
			}
		}
		slices.Sort(want)
		wantKeys(t, s, prefix, want...)
	}
}

func testListEntries(t *testing.T, s store.Store) {
	sizes := map[string]int{"x/1": 1, "x/22": 22, "x/y/333": 333}
	for k, n := range sizes {
		put(t, s, k, strings.Repeat(".", n), store.PutOptions{})
	}
	for _, e := range list(t, s, "") {
		if e.Size != int64(sizes[e.Key]) || !e.Regular() || e.ModTime.IsZero() {
			t.Errorf("entry %+v: want size %d, regular, a ModTime", e, sizes[e.Key])
		}
	}
}

func testListCallbackError(t *testing.T, s store.Store) {
	for _, k := range []string{"1", "2", "3/4", "5"} {
		put(t, s, k, k, store.PutOptions{})
	}
	stop := errors.New("stop here")
	var seen []string
	err := s.List(ctx, "", func(e store.Entry) error {
		seen = append(seen, e.Key)
		if e.Key == "2" {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("List returned %v, want the callback's error as is", err)
	}
	if !slices.Equal(seen, []string{"1", "2"}) {
		t.Errorf("callback saw %q, want [1 2]", seen)
	}
}

// ManyKeys is the number of blobs ListMany writes: more than the 1,000-object page
// that the gocloud drivers request, so the listing spans several pages.
const ManyKeys = 2500

func testListMany(t *testing.T, s store.Store) {
	keys := make([]string, ManyKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("m/%d/%05d.bin", i%7, i)
	}
	putAll(t, keys, func(k string) error { return s.Put(ctx, k, strings.NewReader(k), store.PutOptions{}) })

	slices.Sort(keys)
	got := listKeys(t, s, "")
	if !slices.Equal(got, keys) {
		t.Fatalf("List returned %d keys (first %q), want %d in order", len(got), got[:min(3, len(got))], len(keys))
	}
	// Entries arrive as they are listed, and stopping early stops the listing.
	n := 0
	stop := errors.New("enough")
	err := s.List(ctx, "m/3/", func(store.Entry) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	if err != stop || n != 10 {
		t.Errorf("early stop: List = %v after %d entries, want %v after 10", err, n, stop)
	}
	var want []string
	for _, k := range keys {
		if strings.HasPrefix(k, "m/3/") {
			want = append(want, k)
		}
	}
	wantKeys(t, s, "m/3/", want...)
}

func testInternalDirHidden(t *testing.T, s store.Store) {
	put(t, s, "a", "a", store.PutOptions{})
	put(t, s, ".mediactlz", "look-alike", store.PutOptions{})
	put(t, s, ".mediactl-x/y", "look-alike", store.PutOptions{})
	put(t, s, "sub/.mediactl/x", "only the top-level folder is internal", store.PutOptions{})
	in, ok := store.AsInternal(s)
	if ok {
		if err := in.PutInternal(ctx, "journal/1.json", strings.NewReader("{}"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := in.PutInternal(ctx, "z", strings.NewReader("z"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	all := []string{".mediactl-x/y", ".mediactlz", "a", "sub/.mediactl/x"}
	wantKeys(t, s, "", all...)
	wantKeys(t, s, ".mediactl", ".mediactl-x/y", ".mediactlz")
	wantKeys(t, s, ".mediactl/")
	wantKeys(t, s, ".mediactl/journal/")
	if !ok {
		return
	}

	// Moving a blob into the internal folder hides it; moving it back restores it.
	if err := in.MoveToInternal(ctx, "a", "trash/a"); err != nil {
		t.Fatal(err)
	}
	wantNotExist(t, s, "a")
	wantKeys(t, s, "", ".mediactl-x/y", ".mediactlz", "sub/.mediactl/x")
	put(t, s, "b", "b", store.PutOptions{})
	if err := in.MoveFromInternal(ctx, "trash/a", "b"); !errors.Is(err, store.ErrExist) {
		t.Errorf("MoveFromInternal onto an existing key = %v, want ErrExist", err)
	}
	if got := read(t, s, "b"); got != "b" {
		t.Errorf("existing key changed by a refused restore: %q", got)
	}
	if err := in.MoveFromInternal(ctx, "trash/a", "restored/a"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "restored/a"); got != "a" {
		t.Errorf("restored content %q", got)
	}
	for _, bad := range []string{"", "../x", "/x", "a/../../x", "a//b"} {
		if err := in.PutInternal(ctx, bad, strings.NewReader("x"), store.PutOptions{}); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("PutInternal(%q) = %v, want ErrInvalidKey", bad, err)
		}
	}
}

// testInternalFiles: mediactl's own files (locks, journals, trash) can be
// written, read, listed and deleted in the internal folder, and never show up
// as blobs.
func testInternalFiles(t *testing.T, s store.Store) {
	in, ok := store.AsInternal(s)
	if !ok {
		t.Skip("not an internal-folder store")
	}
	var names []string
	if err := in.ListInternal(ctx, "", func(e store.Entry) error { names = append(names, e.Key); return nil }); err != nil || len(names) != 0 {
		t.Fatalf("empty internal folder lists %v, %v", names, err)
	}
	for _, n := range []string{"lock", "trash/run-1/a.png", "trash/run-1/sub/b.png", "trash/run-2/c.png"} {
		if err := in.PutInternal(ctx, n, strings.NewReader("x:"+n), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names = nil
	if err := in.ListInternal(ctx, "trash/run-1/", func(e store.Entry) error {
		names = append(names, e.Key)
		if e.Size != int64(len("x:"+e.Key)) {
			t.Errorf("%s: size %d", e.Key, e.Size)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if fmt.Sprint(names) != "[trash/run-1/a.png trash/run-1/sub/b.png]" {
		t.Fatalf("ListInternal(trash/run-1/) = %v", names)
	}
	rc, err := in.OpenInternal(ctx, "lock")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "x:lock" {
		t.Fatalf("OpenInternal(lock) = %q", b)
	}
	if err := in.DeleteInternal(ctx, "lock"); err != nil {
		t.Fatal(err)
	}
	if _, err := in.OpenInternal(ctx, "lock"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("deleted lock opens: %v", err)
	}
	// Conditional creation is what makes a lock exclusive.
	if err := in.PutInternal(ctx, "lock", strings.NewReader("1"), store.PutOptions{IfNotExist: true}); err != nil {
		t.Fatal(err)
	}
	if err := in.PutInternal(ctx, "lock", strings.NewReader("2"), store.PutOptions{IfNotExist: true}); !errors.Is(err, store.ErrExist) {
		t.Fatalf("second conditional PutInternal = %v, want ErrExist", err)
	}
	wantKeys(t, s, "")
}

// InvalidKeys are keys every store must refuse.
var InvalidKeys = []string{
	"", "/", "/abs", "/etc/passwd", ".", "..", "../escape", "../../escape", "a/../b",
	"a/..", "./a", "a/./b", "a//b", "a/", "//a", "a\\b", "..\\escape", "a\x00b",
	store.InternalDir, store.InternalDir + "/x", store.InternalDir + "/tmp/x",
}

func testInvalidKeys(t *testing.T, s store.Store) {
	put(t, s, "ok", "ok", store.PutOptions{})
	check := func(method, key string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("%s(%q) = %v, want an error wrapping ErrInvalidKey", method, key, err)
		} else if !strings.Contains(err.Error(), strconv.Quote(key)) {
			t.Errorf("%s(%q) error %q does not name the key", method, key, err)
		}
	}
	for _, key := range InvalidKeys {
		if store.ValidKey(key) == nil {
			t.Errorf("ValidKey(%q) = nil", key)
		}
		_, err := s.Stat(ctx, key)
		check("Stat", key, err)
		r, err := s.Open(ctx, key)
		if r != nil {
			r.Close()
		}
		check("Open", key, err)
		check("Put", key, s.Put(ctx, key, strings.NewReader("x"), store.PutOptions{}))
		check("Put(IfNotExist)", key, s.Put(ctx, key, strings.NewReader("x"), store.PutOptions{IfNotExist: true}))
		check("Put(Size)", key, s.Put(ctx, key, strings.NewReader("x"), store.PutOptions{Size: 1}))
		check("Delete", key, s.Delete(ctx, key))
		if l, ok := s.(store.Local); ok {
			check("Rename from", key, l.Rename(ctx, key, "ok2"))
			check("Rename to", key, l.Rename(ctx, "ok", key))
		}
		if in, ok := store.AsInternal(s); ok {
			check("MoveToInternal", key, in.MoveToInternal(ctx, key, "trash/x"))
			check("MoveFromInternal", key, in.MoveFromInternal(ctx, "trash/x", key))
		}
	}
	for _, key := range []string{"ok", "a/b", ".mediactlx", "x/.mediactl", "..a", "a..", ".a/b.", "a b/c d", "ü/ß"} {
		if err := store.ValidKey(key); err != nil {
			t.Errorf("ValidKey(%q) = %v, want nil", key, err)
		}
	}
	wantKeys(t, s, "", "ok")
	if got := read(t, s, "ok"); got != "ok" {
		t.Errorf("ok = %q", got)
	}
	if l, ok := s.(store.Local); ok {
		for _, name := range []string{"escape", "etc"} {
			if _, err := os.Lstat(filepath.Join(filepath.Dir(l.Dir()), name)); err == nil {
				t.Errorf("%s was created outside the store", name)
			}
		}
	}
}

func testMissing(t *testing.T, s store.Store) {
	put(t, s, "present/x", "x", store.PutOptions{})
	for _, key := range []string{"missing", "no/such/dir/key", "present/y", "present/x/below"} {
		_, err := s.Stat(ctx, key)
		if !errors.Is(err, store.ErrNotExist) && !(key == "present/x/below" && err != nil) {
			t.Errorf("Stat(%q) = %v, want ErrNotExist", key, err)
		}
		if key == "present/x/below" {
			continue // below a file: some stores say ENOTDIR; an error is all we ask
		}
		r, err := s.Open(ctx, key)
		if r != nil {
			r.Close()
		}
		if !errors.Is(err, store.ErrNotExist) {
			t.Errorf("Open(%q) = %v, want ErrNotExist", key, err)
		}
		if err := s.Delete(ctx, key); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("Delete(%q) = %v, want ErrNotExist", key, err)
		}
	}
	if err := s.Delete(ctx, "present"); err == nil {
		t.Error("Delete of a directory-like prefix succeeded")
	}
	wantKeys(t, s, "", "present/x")
}

func testDelete(t *testing.T, s store.Store) {
	put(t, s, "d/x", "x", store.PutOptions{})
	put(t, s, "d/y", "y", store.PutOptions{})
	if err := s.Delete(ctx, "d/x"); err != nil {
		t.Fatal(err)
	}
	wantNotExist(t, s, "d/x")
	wantKeys(t, s, "", "d/y")
	if err := s.Delete(ctx, "d/x"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("second Delete = %v, want ErrNotExist", err)
	}
	if err := s.Delete(ctx, "d/y"); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, s, "")
	// A deleted key can be written again, even with IfNotExist.
	put(t, s, "d/x", "again", store.PutOptions{IfNotExist: true})
	if got := read(t, s, "d/x"); got != "again" {
		t.Errorf("read %q", got)
	}
}

func testConcurrentPuts(t *testing.T, s store.Store) {
	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("c/%d/%02d", i%3, i)
			data := strings.Repeat(key, 100)
			size := int64(len(data)) * int64(i/2%2)
			errs[i] = s.Put(ctx, key, strings.NewReader(data), store.PutOptions{IfNotExist: i%2 == 0, Size: size})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Put %d: %v", i, err)
		}
	}
	got := listKeys(t, s, "")
	if len(got) != n {
		t.Errorf("listed %d keys, want %d", len(got), n)
	}
	for _, k := range got {
		if data := read(t, s, k); data != strings.Repeat(k, 100) {
			t.Errorf("%s holds %d bytes of something else", k, len(data))
		}
	}
	noStaging(t, s)
}

var errBoom = errors.New("reader failed midway")

// failingReader returns n bytes, then errBoom.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errBoom
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

func testFailingReader(t *testing.T, s store.Store) {
	for _, opts := range []store.PutOptions{{}, {IfNotExist: true}, {Size: 100 << 10}, {IfNotExist: true, Size: 200 << 10}} {
		err := s.Put(ctx, "partial", &failingReader{n: 100 << 10}, opts)
		if !errors.Is(err, errBoom) {
			t.Errorf("Put with a failing reader (IfNotExist=%v, Size %d) = %v, want an error wrapping the reader's", opts.IfNotExist, opts.Size, err)
		}
		wantNotExist(t, s, "partial")
	}
	// A failed overwrite leaves the old object in place.
	put(t, s, "kept", "old content", store.PutOptions{})
	for _, size := range []int64{0, 10} {
		if err := s.Put(ctx, "kept", &failingReader{n: 10}, store.PutOptions{Size: size}); !errors.Is(err, errBoom) {
			t.Errorf("overwrite with a failing reader (Size %d) = %v", size, err)
		}
	}
	if got := read(t, s, "kept"); got != "old content" {
		t.Errorf("after failed overwrite: %q, want the old content", got)
	}
	wantKeys(t, s, "", "kept")
	noStaging(t, s)
}

// cancelingReader cancels its context while it hands out data.
type cancelingReader struct {
	cancel context.CancelFunc
}

func (r *cancelingReader) Read(p []byte) (int, error) {
	r.cancel()
	for i := range p {
		p[i] = 'y'
	}
	return len(p), nil
}

func testCanceledContext(t *testing.T, s store.Store) {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for _, size := range []int64{0, 1} {
		if err := s.Put(cctx, "never", strings.NewReader("x"), store.PutOptions{Size: size}); err == nil {
			t.Errorf("Put with a canceled context (Size %d) succeeded", size)
		}
	}
	wantNotExist(t, s, "never")

	for _, n := range []int64{1 << 20, 300 << 10} {
		cctx, cancel = context.WithCancel(ctx)
		err := s.Put(cctx, "midway", io.LimitReader(&cancelingReader{cancel: cancel}, n), store.PutOptions{Size: n})
		cancel()
		if err == nil {
			t.Errorf("Put of %d bytes canceled midway succeeded", n)
		} else if !errors.Is(err, context.Canceled) {
			t.Errorf("Put of %d bytes canceled midway = %v, want an error wrapping context.Canceled", n, err)
		}
	}
	wantNotExist(t, s, "midway")
	wantKeys(t, s, "")
	noStaging(t, s)
}

func testRename(t *testing.T, s store.Store) {
	l, ok := s.(store.Local)
	if !ok {
		t.Skip("not a local store")
	}
	put(t, s, "from", "data", store.PutOptions{})
	if err := l.Rename(ctx, "from", "x/y/to"); err != nil {
		t.Fatal(err)
	}
	wantNotExist(t, s, "from")
	if got := read(t, s, "x/y/to"); got != "data" {
		t.Errorf("renamed content %q", got)
	}
	put(t, s, "other", "other", store.PutOptions{})
	if err := l.Rename(ctx, "other", "x/y/to"); !errors.Is(err, store.ErrExist) {
		t.Errorf("Rename onto an existing key = %v, want ErrExist", err)
	}
	if got := read(t, s, "x/y/to"); got != "data" {
		t.Errorf("target changed by a refused rename: %q", got)
	}
	if err := l.Rename(ctx, "missing", "elsewhere"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("Rename of a missing key = %v, want ErrNotExist", err)
	}
	wantKeys(t, s, "", "other", "x/y/to")
}

// testStatedSize checks that PutOptions.Size changes nothing a store keeps:
// the content written is what the reader holds, whether the stated size is
// right, too small (by a little, or past a buffer a store might size from it)
// or too large, and the object has the content type, metadata and MD5 it
// has when no size is stated.
func testStatedSize(t *testing.T, s store.Store) {
	opts := store.PutOptions{ContentType: "Text/Plain; charset=utf-8", Metadata: map[string]string{"sha256": "0123abcd", "origin": "test"}}
	for _, c := range []struct {
		name string
		n    int
		size int64
	}{
		{"exact", 5000, 5000},
		{"too small", 5000, 4000},
		{"too small past 64 KiB", 200 << 10, 10},
		{"fills 64 KiB", 64 << 10, 64<<10 - 1},
		{"too large", 100, 50000},
		{"past 1 MiB", 1<<20 + 1, 1<<20 - 1},
	} {
		data := make([]byte, c.n)
		rand.Read(data)
		key := "sized/" + strings.ReplaceAll(c.name, " ", "-")
		o := opts
		o.Size = c.size
		if err := s.Put(ctx, key, bytes.NewReader(data), o); err != nil {
			t.Fatalf("%s: Put of %d bytes with Size %d: %v", c.name, c.n, c.size, err)
		}
		if got := read(t, s, key); got != string(data) {
			t.Errorf("%s: read %d bytes, not the %d written", c.name, len(got), len(data))
		}
		if _, ok := s.(store.Bucket); !ok {
			continue
		}
		if err := s.Put(ctx, key+".unsized", bytes.NewReader(data), opts); err != nil {
			t.Fatal(err)
		}
		sized, err := s.Stat(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		unsized, err := s.Stat(ctx, key+".unsized")
		if err != nil {
			t.Fatal(err)
		}
		if sized.Size != int64(c.n) || sized.ContentType != unsized.ContentType ||
			!bytes.Equal(sized.MD5, unsized.MD5) || !maps.Equal(sized.Metadata, unsized.Metadata) {
			t.Errorf("%s: Stat with Size stated = size %d, %q, MD5 %x, %v; without = %q, MD5 %x, %v",
				c.name, sized.Size, sized.ContentType, sized.MD5, sized.Metadata, unsized.ContentType, unsized.MD5, unsized.Metadata)
		}
	}
	// A content type left to the store is sniffed alike.
	for _, size := range []int64{0, 20} {
		key := fmt.Sprintf("sniffed-%d", size)
		if err := s.Put(ctx, key, strings.NewReader("<html><body></body>"), store.PutOptions{Size: size}); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(store.Bucket); !ok {
			continue
		}
		if e, err := s.Stat(ctx, key); err != nil || !strings.HasPrefix(e.ContentType, "text/html") {
			t.Errorf("Stat(%s) = %q, %v; want a sniffed text/html", key, e.ContentType, err)
		}
	}
}
