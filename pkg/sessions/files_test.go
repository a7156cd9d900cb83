package sessions

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// walked is what a test saw of one item.
type walked struct {
	Item
	Text    []byte // a row's value: a walked each, at its column (eachValue)
	content string // a document's content, read through Open after Walk returned
}

// eachValue calls fn with every value of a row as an Item and text of its
// own, the Item's place its column's, and with every other item as it is.
func eachValue(fn func(it Item, text []byte) error) func(Item) error {
	return func(it Item) error {
		if it.Values == nil {
			return fn(it, nil)
		}
		for _, v := range it.Values {
			one := it
			one.Place, one.Values = it.ValuePlace(v), nil
			if err := fn(one, v.Text); err != nil {
				return err
			}
		}
		return nil
	}
}

// walkAll walks src and then opens every document.
func walkAll(t *testing.T, src Source) ([]walked, Counts) {
	t.Helper()
	var got []walked
	c, err := src.Walk(context.Background(), eachValue(func(it Item, text []byte) error {
		got = append(got, walked{Item: it, Text: text})
		return nil
	}))
	if err != nil {
		t.Fatalf("Walk(%s): %v", src, err)
	}
	for i := range got {
		if got[i].Open == nil {
			continue
		}
		r, err := got[i].Open()
		if err != nil {
			t.Fatalf("Open(%s): %v", got[i].Place, err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatalf("read %s: %v", got[i].Place, err)
		}
		got[i].content = string(b)
	}
	return got, c
}

func documents(items []walked) []string {
	var docs []string
	for _, it := range items {
		if it.Open != nil {
			docs = append(docs, filepath.ToSlash(it.Place.Document))
		}
	}
	return docs
}

func openFiles(t *testing.T, spec string) Source {
	t.Helper()
	src, err := Open(context.Background(), spec, Options{})
	if err != nil {
		t.Fatalf("Open(%q): %v", spec, err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFilesTestdata(t *testing.T) {
	spec := filepath.Join("testdata", "forge", "sessions")
	src := openFiles(t, spec)
	if src.String() != spec {
		t.Errorf("String() = %q, want %q", src.String(), spec)
	}
	items, c := walkAll(t, src)
	want := []string{
		"testdata/forge/sessions/archive/2026-06.jsonl",
		"testdata/forge/sessions/t-1.json",
		"testdata/forge/sessions/t-2.json",
		"testdata/forge/sessions/t-3.json.tmp",
	}
	if got := documents(items); !reflect.DeepEqual(got, want) {
		t.Errorf("documents = %q, want %q", got, want)
	}
	// t-3.json.tmp is a leftover (read, not a session); README.txt is unread.
	if c != (Counts{Documents: 3, Leftovers: 1, Unread: 1}) {
		t.Errorf("counts = %+v, want 3 documents, 1 leftover, 1 unread", c)
	}
	var docs []walked
	for _, it := range items {
		if it.Place.Source != spec || it.Place.Offset != -1 || it.Place.Table != "" {
			t.Errorf("place = %+v", it.Place)
		}
		if it.Err != nil {
			var ue *UnreadError
			if !errors.As(it.Err, &ue) || filepath.Base(it.Place.Document) != "README.txt" || ue.Path != it.Place.Document {
				t.Errorf("unexpected problem %+v", it.Item)
			}
			continue
		}
		if it.Text != nil {
			t.Errorf("unexpected item %+v", it.Item)
		}
		if it.Leftover != strings.HasSuffix(it.Place.Document, ".tmp") {
			t.Errorf("%s: Leftover = %v", it.Place.Document, it.Leftover)
		}
		if it.Size != int64(len(it.content)) {
			t.Errorf("%s: Size = %d, read %d bytes", it.Place.Document, it.Size, len(it.content))
		}
		docs = append(docs, it)
	}
	if !strings.Contains(docs[1].content, "/srv/agent/.forge/files/inbound/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png") {
		t.Errorf("t-1.json content not as expected: %s", docs[1].content)
	}
}

// forgeDoc is a session as forge writes it: json.MarshalIndent, so that & < >
// come out as \u0026 \u003c \u003e.
func forgeDoc(t *testing.T, id, uri string) string {
	t.Helper()
	type media struct {
		MimeType string `json:"mimeType"`
		URI      string `json:"uri"`
	}
	type part struct {
		Type  string `json:"type"`
		Text  string `json:"text,omitempty"`
		Media *media `json:"media,omitempty"`
	}
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Parts   []part `json:"parts,omitempty"`
	}
	doc := struct {
		TaskID   string    `json:"task_id"`
		Messages []message `json:"messages"`
	}{id, []message{
		{Role: "user", Content: "Q&A <draft>", Parts: []part{{Type: "text", Text: "Q&A <draft>"}, {Type: "image", Media: &media{"image/png", uri}}}},
		{Role: "assistant", Content: "A cat."},
	}}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func zstded(t *testing.T, s string) string {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return string(zw.EncodeAll([]byte(s), nil))
}

// outcome is what a folder's walk made of one entry.
type outcome string

const (
	isDocument outcome = "document"
	isLeftover outcome = "leftover"
	isUnread   outcome = "unread"
	isProblem  outcome = "problem"
	isReadErr  outcome = "read error" // yielded as a document; reading it fails
	isSkipped  outcome = ""           // deliberately not read, not yielded
)

// walkOutcomes walks spec and says, per path relative to dir, what came of it;
// documents' contents are read through Open.
func walkOutcomes(t *testing.T, src Source, dir string) (map[string]outcome, map[string]string, map[string]error, Counts) {
	t.Helper()
	var items []Item
	c, err := src.Walk(context.Background(), func(it Item) error { items = append(items, it); return nil })
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	got, content, errs := map[string]outcome{}, map[string]string{}, map[string]error{}
	for _, it := range items {
		rel, err := filepath.Rel(dir, it.Place.Document)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		if _, dup := got[rel]; dup {
			t.Errorf("%s yielded twice", rel)
		}
		var ue *UnreadError
		switch {
		case errors.As(it.Err, &ue):
			got[rel], errs[rel] = isUnread, it.Err
			if ue.Path != it.Place.Document || !strings.Contains(ue.Error(), it.Place.Document) {
				t.Errorf("%s: UnreadError %+v does not name the file", rel, ue)
			}
		case it.Err != nil:
			got[rel], errs[rel] = isProblem, it.Err
		case it.Open != nil:
			got[rel] = isDocument
			if it.Leftover {
				got[rel] = isLeftover
			}
			r, err := it.Open()
			if err == nil {
				var b []byte
				b, err = io.ReadAll(r)
				r.Close()
				content[rel] = string(b)
			}
			if err != nil {
				got[rel], errs[rel] = isReadErr, err
			}
		default:
			t.Errorf("%s: item with neither Open nor Err: %+v", rel, it)
		}
	}
	return got, content, errs, c
}

// TestFilesEveryEntry: every entry of a sessions folder is read, excluded or
// reported; none is skipped silently.
func TestFilesEveryEntry(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "sessions")
	outside := filepath.Join(base, "elsewhere")
	ref := func(n int) string {
		return fmt.Sprintf("/srv/My Agent & Co/.forge/files/inbound/%064x.png", n)
	}
	t1, t2, t3, t4 := forgeDoc(t, "t-1", ref(1)), forgeDoc(t, "t-2", ref(2)), forgeDoc(t, "t-3", ref(3)), forgeDoc(t, "t-4", ref(4))
	jsonl := `{"uri":"` + ref(5) + `"}` + "\n" + `{"uri":"` + ref(6) + `"}` + "\n"
	type entry struct {
		name    string
		content string // written as a file unless link is set
		link    string // symlink target, relative to the link's folder
		want    outcome
		read    string // a document's content as Open returns it
		errHas  string // a problem's or read error's message contains it
	}
	entries := []entry{
		{name: "t-1.json", content: t1, want: isDocument, read: t1},
		// The only copy of a new session: forge crashed before the rename.
		{name: "t-2.json.tmp", content: t2, want: isLeftover, read: t2},
		// A stale leftover beside its session, cut short: the runtime reads
		// the session, never this (skipped). One beside an empty session
		// file is read: the session may be what was lost.
		{name: "t-1.json.tmp", content: t1[:40], want: isSkipped},
		{name: "empty.jsonl.tmp", content: t1, want: isLeftover, read: t1},
		{name: "T-3.JSON", content: t3, want: isDocument, read: t3},
		{name: "t-4.json.gz", content: gzipped(t, t4), want: isDocument, read: t4},
		{name: "archive/2026-06.jsonl.zst", content: zstded(t, jsonl), want: isDocument, read: jsonl},
		{name: "archive/2026-05.NDJSON.GZ", content: gzipped(t, jsonl), want: isDocument, read: jsonl},
		{name: "archive/2026-04.jsonl.ZSTD", content: zstded(t, jsonl), want: isDocument, read: jsonl},
		{name: "archive/old.JSON.tmp", content: t1, want: isLeftover, read: t1},
		// mediactl's own rewriter's temporary file, left by a killed rewrite.
		{name: ".t-1.json.0123456789ab.tmp", content: t1, want: isLeftover, read: t1},
		{name: ".t-1.json.0123456789.tmp", content: t1, want: isUnread},
		{name: "corrupt.json.gz", content: gzipped(t, t4)[:30], want: isReadErr, errHas: "corrupt.json.gz"},
		{name: "notgzip.json.gz", content: t4, want: isReadErr, errHas: "gzip"},
		{name: "corrupt.json.zst", content: "\x28\xb5\x2f\xfd garbage", want: isReadErr, errHas: "corrupt.json.zst"},
		{name: "empty.json", content: "", want: isProblem, errHas: "empty file"},
		{name: "empty.json.gz", content: "", want: isProblem, errHas: "empty file"},
		{name: "empty.jsonl", content: "", want: isDocument, read: ""},
		{name: "empty.ndjson", content: "", want: isDocument, read: ""},
		{name: "README.txt", content: "not a session", want: isUnread, errHas: "not a session document"},
		{name: "t-1.json.bak", content: t1, want: isUnread},
		{name: "notes.tmp", content: "x", want: isUnread},
		{name: "json", content: "{}", want: isUnread},
		{name: "sub/deeper/x.yaml", content: "a: 1", want: isUnread},
		// Links are followed, wherever they lead.
		{name: "linked.json", link: "../elsewhere/one.json", want: isDocument, read: t1 + " "},
		{name: "linked-dir", link: "../elsewhere/folder", want: isDocument},
		{name: "linked-dir/s.json", want: isDocument, read: t2 + " "},
		{name: "linked-dir/note.md", want: isUnread},
		{name: "zz-chain.json", link: "linked.json", want: isDocument, read: t1 + " "}, // same file as linked.json: read once
		{name: "dangling.json", link: "../elsewhere/gone.json", want: isProblem, errHas: "dangling"},
		{name: "loop", link: ".", want: isProblem, errHas: "loop"},
		{name: "sub/up", link: "..", want: isProblem, errHas: "loop"},
		{name: "self.json", link: "self.json", want: isProblem, errHas: "loop"},
	}
	writeFile(t, filepath.Join(outside, "one.json"), t1+" ")
	writeFile(t, filepath.Join(outside, "folder", "s.json"), t2+" ")
	writeFile(t, filepath.Join(outside, "folder", "note.md"), "x")
	for _, e := range entries {
		p := filepath.Join(dir, filepath.FromSlash(e.name))
		switch {
		case e.link != "":
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(e.link, p); err != nil {
				t.Skipf("symlinks: %v", err)
			}
		case strings.HasPrefix(e.name, "linked-dir/"):
		default:
			writeFile(t, p, e.content)
		}
	}

	got, content, errs, c := walkOutcomes(t, openFiles(t, dir), dir)
	wantCounts := Counts{}
	for _, e := range entries {
		if e.name == "zz-chain.json" {
			if _, ok := got[e.name]; ok {
				t.Errorf("zz-chain.json: read again, though linked.json is the same file")
			}
			continue
		}
		if e.name == "linked-dir" {
			continue // a folder: its entries are listed
		}
		if got[e.name] != e.want {
			t.Errorf("%s: %q (%v), want %q", e.name, got[e.name], errs[e.name], e.want)
			continue
		}
		if e.want == isDocument || e.want == isLeftover {
			if e.read != "" || e.name != "linked-dir/s.json" {
				if content[e.name] != e.read {
					t.Errorf("%s: read %q, want %q", e.name, content[e.name], e.read)
				}
			}
		}
		if e.errHas != "" && !strings.Contains(fmt.Sprint(errs[e.name]), e.errHas) {
			t.Errorf("%s: error %v, want it to say %q", e.name, errs[e.name], e.errHas)
		}
		switch e.want {
		case isDocument, isReadErr:
			wantCounts.Documents++
		case isLeftover:
			wantCounts.Leftovers++
		case isUnread:
			wantCounts.Unread++
		case isSkipped:
			wantCounts.Skipped++
		}
	}
	for rel := range got {
		found := false
		for _, e := range entries {
			found = found || e.name == rel
		}
		if !found {
			t.Errorf("unexpected item for %s: %s %v", rel, got[rel], errs[rel])
		}
	}
	if c != wantCounts {
		t.Errorf("counts = %+v, want %+v", c, wantCounts)
	}
}

// TestFilesEmptyLeftover: a 0-byte leftover holds nothing to read; it is not
// an error, and it is counted.
func TestFilesEmptyLeftover(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "t-1.json.tmp"), "")
	got, _, _, c := walkOutcomes(t, openFiles(t, dir), dir)
	if len(got) != 0 || c != (Counts{Leftovers: 1}) {
		t.Errorf("items %v, counts %+v; want none and 1 leftover", got, c)
	}
}

func TestFilesExclude(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "t-1.json"), `{}`)
	writeFile(t, filepath.Join(dir, "README.txt"), `x`)
	writeFile(t, filepath.Join(dir, "sub", "README.txt"), `x`)
	writeFile(t, filepath.Join(dir, "sub", "keep.json"), `{}`)
	writeFile(t, filepath.Join(dir, "sub", "notes.md"), `x`)
	writeFile(t, filepath.Join(dir, "cache", "a.json"), `{}`)
	writeFile(t, filepath.Join(dir, "cache", "b.bin"), `x`)
	writeFile(t, filepath.Join(dir, "other", "notes.md"), `x`)
	for _, tc := range []struct {
		exclude []string
		want    map[string]outcome
		counts  Counts
	}{
		{nil, map[string]outcome{"t-1.json": isDocument, "README.txt": isUnread, "sub/README.txt": isUnread, "sub/keep.json": isDocument,
			"sub/notes.md": isUnread, "cache/a.json": isDocument, "cache/b.bin": isUnread, "other/notes.md": isUnread},
			Counts{Documents: 3, Unread: 5}},
		// A base name pattern matches at any depth; a folder excluded is not entered;
		// a slash pattern matches the path relative to the folder.
		{[]string{"README.txt", "cache", "sub/*.md"}, map[string]outcome{"t-1.json": isDocument, "sub/keep.json": isDocument, "other/notes.md": isUnread},
			Counts{Documents: 2, Unread: 1, Excluded: 4}},
		{[]string{"*.txt", "*.md", "*.bin"}, map[string]outcome{"t-1.json": isDocument, "sub/keep.json": isDocument, "cache/a.json": isDocument},
			Counts{Documents: 3, Excluded: 5}},
	} {
		src, err := Open(context.Background(), dir, Options{Exclude: tc.exclude})
		if err != nil {
			t.Fatal(err)
		}
		got, _, _, c := walkOutcomes(t, src, dir)
		if !reflect.DeepEqual(got, tc.want) || c != tc.counts {
			t.Errorf("exclude %q: %v, counts %+v; want %v, %+v", tc.exclude, got, c, tc.want, tc.counts)
		}
	}
	if _, err := Open(context.Background(), dir, Options{Exclude: []string{"[a-"}}); !errors.Is(err, ErrUsage) {
		t.Errorf("a malformed pattern: err = %v, want a usage error", err)
	}
}

// TestFilesReadOnce: a folder reached twice (a link to a folder walked
// elsewhere) and a file reached twice (a hard link) are read once.
func TestFilesReadOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "real", "t-1.json"), `{"a":1}`)
	if err := os.Symlink("real", filepath.Join(dir, "alias")); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	if err := os.Link(filepath.Join(dir, "real", "t-1.json"), filepath.Join(dir, "t-1-hard.json")); err != nil {
		t.Skipf("hard links: %v", err)
	}
	got, _, _, c := walkOutcomes(t, openFiles(t, dir), dir)
	// "alias" sorts first: the folder is walked through it.
	if !reflect.DeepEqual(got, map[string]outcome{"alias/t-1.json": isDocument}) || c != (Counts{Documents: 1}) {
		t.Errorf("items %v, counts %+v; want alias/t-1.json once", got, c)
	}
}

// TestFilesMovedDuringWalk: a session moved from a folder not yet walked into
// one already walked is found by the listing after the walk.
func TestFilesMovedDuringWalk(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "t-1.json"), `{"a":1}`)
	writeFile(t, filepath.Join(dir, "b", "t-2.json"), `{"b":2}`)
	moved := false
	walkDirHook = func(p string) {
		if p == filepath.Join(dir, "b") && !moved {
			moved = true
			if err := os.Rename(filepath.Join(dir, "b", "t-2.json"), filepath.Join(dir, "a", "t-2.json")); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { walkDirHook = nil }()
	got, content, _, c := walkOutcomes(t, openFiles(t, dir), dir)
	if !moved {
		t.Fatal("the hook did not run")
	}
	want := map[string]outcome{"a/t-1.json": isDocument, "a/t-2.json": isDocument}
	if !reflect.DeepEqual(got, want) || content["a/t-2.json"] != `{"b":2}` || c != (Counts{Documents: 2}) {
		t.Errorf("items %v, counts %+v; want %v", got, c, want)
	}
}

// TestFilesReplacedDuringWalk: a session renamed over (forge's atomic write)
// after it was listed is read again; a new file is reported.
func TestFilesReplacedDuringWalk(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "t-1.json"), `{"v":1}`)
	writeFile(t, filepath.Join(dir, "b", "t-2.json"), `{}`)
	done := false
	walkDirHook = func(p string) {
		if p == filepath.Join(dir, "b") && !done {
			done = true
			if err := forgeWrite(filepath.Join(dir, "a", "t-1.json"), `{"v":2}`); err != nil {
				t.Error(err)
			}
			writeFile(t, filepath.Join(dir, "a", "core"), "x")
		}
	}
	defer func() { walkDirHook = nil }()
	var items []Item
	c, err := openFiles(t, dir).Walk(context.Background(), func(it Item) error { items = append(items, it); return nil })
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, it := range items {
		rel, _ := filepath.Rel(dir, it.Place.Document)
		seen = append(seen, filepath.ToSlash(rel))
	}
	want := []string{"a/t-1.json", "b/t-2.json", "a/core", "a/t-1.json"}
	if !reflect.DeepEqual(seen, want) || c != (Counts{Documents: 3, Unread: 1}) {
		t.Errorf("items %q, counts %+v; want %q", seen, c, want)
	}
}

// TestFilesKeepsChanging: a folder that changes in every listing makes the
// read incomplete.
func TestFilesKeepsChanging(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "t-0.json"), `{}`)
	n := 0
	walkDirHook = func(p string) {
		if p == filepath.Join(dir, "a") {
			n++
			writeFile(t, filepath.Join(dir, "a", fmt.Sprintf("t-%d.json", n)), `{}`)
		}
	}
	defer func() { walkDirHook = nil }()
	got, _, errs, c := walkOutcomes(t, openFiles(t, dir), dir)
	if got["."] != isProblem || !strings.Contains(errs["."].Error(), "kept changing") {
		t.Fatalf("items %v; want a problem for the folder saying it kept changing", got)
	}
	if c.Documents != int64(filesRelists+2) || n != filesRelists+1 {
		t.Errorf("counts %+v after %d listings; want every file that appeared read", c, n)
	}
}

func TestFilesSingleCompressed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t-1.json.gz")
	doc := forgeDoc(t, "t-1", "/x.png")
	writeFile(t, path, gzipped(t, doc))
	items, c := walkAll(t, openFiles(t, path))
	if len(items) != 1 || items[0].content != doc || c != (Counts{Documents: 1}) {
		t.Fatalf("items %+v, counts %+v", items, c)
	}
	empty := filepath.Join(t.TempDir(), "t.json")
	writeFile(t, empty, "")
	var got []Item
	if _, err := openFiles(t, empty).Walk(context.Background(), func(it Item) error { got = append(got, it); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !errors.Is(got[0].Err, errEmptyJSON) {
		t.Errorf("an empty file as the spec: %+v, want the empty-file problem", got)
	}
}

func TestFilesSymlinkedRoot(t *testing.T) {
	real := t.TempDir()
	writeFile(t, filepath.Join(real, "t-1.json"), `{}`)
	link := filepath.Join(t.TempDir(), "sessions")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("symlinks not supported: %v", err)
	}
	items, c := walkAll(t, openFiles(t, link))
	if got, want := documents(items), []string{filepath.ToSlash(filepath.Join(link, "t-1.json"))}; !reflect.DeepEqual(got, want) {
		t.Errorf("documents = %q, want %q", got, want)
	}
	if c.Documents != 1 {
		t.Errorf("counts = %+v", c)
	}
}

func TestFilesSingleFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.txt") // any name: the operator chose it
	writeFile(t, path, `{"task_id":"t-9"}`)
	items, c := walkAll(t, openFiles(t, path))
	if len(items) != 1 || items[0].Place.Document != path || items[0].content != `{"task_id":"t-9"}` || items[0].Size != 17 {
		t.Fatalf("items = %+v", items)
	}
	if c != (Counts{Documents: 1}) {
		t.Errorf("counts = %+v", c)
	}
}

func TestFilesMissingRoot(t *testing.T) {
	src := openFiles(t, filepath.Join(t.TempDir(), "nope"))
	_, err := src.Walk(context.Background(), func(Item) error { return nil })
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Walk of a missing folder: err = %v, want not-exist", err)
	}
}

// TestFilesVanishedSubdir: a folder removed after its parent was listed and
// before the walk reaches it is gone, not a problem: the listing after the walk
// confirms it (had it moved into a walked folder, that listing would find it).
func TestFilesVanishedSubdir(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), `{}`)
	writeFile(t, filepath.Join(dir, "b", "x.json"), `{}`)
	writeFile(t, filepath.Join(dir, "c.json"), `{}`)
	var got []Item
	c, err := openFiles(t, dir).Walk(context.Background(), func(it Item) error {
		got = append(got, it)
		if it.Place.Document == filepath.Join(dir, "a.json") {
			if err := os.RemoveAll(filepath.Join(dir, "b")); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v (a vanished subfolder must not stop the walk)", err)
	}
	if len(got) != 2 || got[0].Place.Document != filepath.Join(dir, "a.json") || got[1].Place.Document != filepath.Join(dir, "c.json") {
		t.Fatalf("items = %+v, want a.json, c.json", got)
	}
	if c != (Counts{Documents: 2}) {
		t.Errorf("counts = %+v", c)
	}
}

func TestFilesStopsOnCallbackError(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), `{}`)
	writeFile(t, filepath.Join(dir, "b.json"), `{}`)
	stop := errors.New("stop")
	n := 0
	_, err := openFiles(t, dir).Walk(context.Background(), func(Item) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("err = %v after %d items, want the callback's error after 1", err, n)
	}
}

func TestFilesOpenRefusesSwappedLink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	writeFile(t, path, `{}`)
	outside := filepath.Join(t.TempDir(), "secret.json")
	writeFile(t, outside, `{"outside":true}`)
	var item Item
	if _, err := openFiles(t, dir).Walk(context.Background(), func(it Item) error { item = it; return nil }); err != nil {
		t.Fatal(err)
	}
	// After the listing, the session file is replaced by a link.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, path); err != nil {
		t.Skipf("symlinks not supported: %v", err)
	}
	if r, err := item.Open(); err == nil {
		r.Close()
		t.Fatal("Open followed a link that replaced the listed file")
	}
}

func TestFilesCanceled(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), `{}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := openFiles(t, dir).Walk(ctx, func(Item) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// rewritable is a folder source walked the way the rewriter walks it.
type rewritable struct{ *filesSource }

func (r rewritable) Walk(ctx context.Context, fn func(Item) error) (Counts, error) {
	return r.walkRewritable(ctx, fn)
}

// TestFilesRewritable: the rewriter's walk keeps to files it can rewrite in
// place, and counts what it leaves.
func TestFilesRewritable(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "t-1.json"), `{}`)
	writeFile(t, filepath.Join(dir, "T-2.JSON"), `{}`)
	writeFile(t, filepath.Join(dir, "t-3.json.tmp"), `{}`)
	writeFile(t, filepath.Join(dir, "t-4.json.gz"), gzipped(t, `{}`))
	writeFile(t, filepath.Join(dir, "README.txt"), `x`)
	writeFile(t, filepath.Join(dir, "sub", "t-5.jsonl"), `{}`)
	if err := os.Symlink("t-1.json", filepath.Join(dir, "link.json")); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	items, c := walkAll(t, rewritable{openFiles(t, dir).(*filesSource)})
	var want []string
	for _, p := range []string{"T-2.JSON", "sub/t-5.jsonl", "t-1.json"} {
		want = append(want, filepath.ToSlash(filepath.Join(dir, p)))
	}
	if got := documents(items); !reflect.DeepEqual(got, want) || len(items) != 3 {
		t.Errorf("documents = %q, want %q", got, want)
	}
	// link.json, linkdir, t-3.json.tmp, t-4.json.gz
	if c != (Counts{Documents: 3, Skipped: 4}) {
		t.Errorf("counts = %+v", c)
	}
}

// FuzzDocumentFormat: a file's name decides how it is read, in any letter
// case, and a leftover is exactly a document's name plus ".tmp".
func FuzzDocumentFormat(f *testing.F) {
	for _, s := range []string{".t-1.json.0123456789ab.tmp", ".x.0123456789ab.tmp", "t-1.json", "T-1.JSON", "a.jsonl.gz", "a.NDJSON.ZSTD", "a.json.zst", "t-1.json.tmp", ".json", "json", "a.gz", "a.tmp", "a.json.tmp.tmp", "a.json.bak"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		df, ok := documentFormat(name)
		uf, uok := documentFormat(strings.ToUpper(name))
		lf, lok := documentFormat(strings.ToLower(name))
		if isASCII(name) && (ok != uok || ok != lok || df != uf || df != lf) {
			t.Errorf("%q: the letter case changes how it is read: %v %v, upper %v %v, lower %v %v", name, df, ok, uf, uok, lf, lok)
		}
		if ok && !documentExt(name) {
			t.Errorf("%q: documentExt disagrees", name)
		}
		lo, isLeft := leftoverFormat(name)
		if isLeft {
			base := name[:len(name)-4]
			if strings.HasPrefix(base, ".") && !documentExt(base) {
				base = base[1 : len(base)-13] // the rewriter's ".<name>.<hex>"
			}
			bf, baseOK := documentFormat(base)
			if !baseOK || bf != lo || !strings.EqualFold(name[len(name)-4:], ".tmp") {
				t.Errorf("%q: a leftover, but not a document's name + .tmp", name)
			}
		}
		if ok && isLeft {
			t.Errorf("%q: both a document and a leftover", name)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestFilesPathHashCollisions: the walk keeps a hash of each path, not the
// path, and under it a hash of the document's identity. With every path given
// the same hash (and then every identity too), and a session replaced while
// the walk runs, every document is still read, in its latest version, and the
// walk ends incomplete (the tree looks as if it kept changing) rather than
// calling the collisions "unchanged".
func TestFilesPathHashCollisions(t *testing.T) {
	t.Run("paths", func(t *testing.T) { testPathHashCollisions(t, false) })
	t.Run("paths and identities", func(t *testing.T) { testPathHashCollisions(t, true) })
}

func testPathHashCollisions(t *testing.T, identitiesToo bool) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "t-1.json"), `{"v":1}`)
	writeFile(t, filepath.Join(dir, "a", "t-2.json"), `{"t":2}`)
	writeFile(t, filepath.Join(dir, "b", "t-3.jsonl"), `{"t":3}`+"\n")
	writeFile(t, filepath.Join(dir, "b", "notes.txt"), "not a session")
	if err := os.Link(filepath.Join(dir, "a", "t-2.json"), filepath.Join(dir, "c-t-2.json")); err != nil {
		t.Fatal(err)
	}
	defer func(h func(maphash.Seed, string) uint64) { pathHash = h }(pathHash)
	pathHash = func(maphash.Seed, string) uint64 { return 7 }
	if identitiesToo {
		defer func(h func(maphash.Seed, docKey) uint64) { versionHash = h }(versionHash)
		versionHash = func(maphash.Seed, docKey) uint64 { return 7 }
	}
	replaced := false
	walkDirHook = func(p string) {
		if p == filepath.Join(dir, "b") && !replaced {
			replaced = true
			if err := forgeWrite(filepath.Join(dir, "a", "t-1.json"), `{"v":2}`); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { walkDirHook = nil }()

	// Each document is read when it is yielded, as the scan does: what a
	// walk passes over is not read later.
	read := map[string]string{}
	keptChanging := false
	_, err := openFiles(t, dir).Walk(context.Background(), func(it Item) error {
		switch {
		case it.Err != nil && strings.Contains(it.Err.Error(), "kept changing"):
			keptChanging = true
		case it.Open != nil:
			r, err := it.Open()
			if err != nil {
				return err
			}
			b, _ := io.ReadAll(r)
			r.Close()
			rel, _ := filepath.Rel(dir, it.Place.Document)
			read[filepath.ToSlash(rel)] += string(b) + ";"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read["a/t-1.json"], `{"v":2}`) {
		t.Errorf("a/t-1.json read as %q, want its replacement {\"v\":2}", read["a/t-1.json"])
	}
	// t-2.json and its hard link are one file: read once, under either name.
	if read["a/t-2.json"]+read["c-t-2.json"] != `{"t":2};` || read["b/t-3.jsonl"] == "" {
		t.Errorf("read %q, want every document once", read)
	}
	if !keptChanging {
		t.Errorf("the walk ended complete with every path colliding; read %q", read)
	}
}
