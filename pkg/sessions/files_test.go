package sessions

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// walked is what a test saw of one item.
type walked struct {
	Item
	content string // a document's content, read through Open after Walk returned
}

// walkAll walks src and then opens every document.
func walkAll(t *testing.T, src Source) ([]walked, Counts) {
	t.Helper()
	var got []walked
	c, err := src.Walk(context.Background(), func(it Item) error {
		got = append(got, walked{Item: it})
		return nil
	})
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
	}
	if got := documents(items); !reflect.DeepEqual(got, want) {
		t.Errorf("documents = %q, want %q", got, want)
	}
	if c != (Counts{Documents: 3, Skipped: 1}) {
		t.Errorf("counts = %+v, want 3 documents, 1 skipped (t-3.json.tmp)", c)
	}
	for _, it := range items {
		if it.Err != nil || it.Text != nil {
			t.Errorf("unexpected item %+v", it.Item)
		}
		if it.Place.Source != spec || it.Place.Offset != -1 || it.Place.Table != "" {
			t.Errorf("place = %+v", it.Place)
		}
		if it.Size != int64(len(it.content)) {
			t.Errorf("%s: Size = %d, read %d bytes", it.Place.Document, it.Size, len(it.content))
		}
	}
	if !strings.Contains(items[1].content, "/srv/agent/.forge/files/inbound/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png") {
		t.Errorf("t-1.json content not as expected: %s", items[1].content)
	}
}

func TestFilesTree(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.json"), `{"b":1}`)
	writeFile(t, filepath.Join(dir, "a", "z.ndjson"), `{"z":1}`+"\n")
	writeFile(t, filepath.Join(dir, "a", "y.json.tmp"), `{"y":`)
	writeFile(t, filepath.Join(dir, "a", "notes.md"), `# notes`)
	writeFile(t, filepath.Join(dir, "c", "d", "e.jsonl"), `{"e":1}`+"\n")
	writeFile(t, filepath.Join(dir, "C.json"), `{}`) // upper case sorts first
	writeFile(t, filepath.Join(dir, "json"), `{}`)   // no extension: ignored
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.json"), `{"outside":true}`)
	if err := os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Skipf("symlinks not supported: %v", err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}

	items, c := walkAll(t, openFiles(t, dir))
	var want []string
	for _, p := range []string{"C.json", "a/z.ndjson", "b.json", "c/d/e.jsonl"} {
		want = append(want, filepath.ToSlash(filepath.Join(dir, p)))
	}
	if got := documents(items); !reflect.DeepEqual(got, want) {
		t.Errorf("documents = %q, want %q", got, want)
	}
	// y.json.tmp, link.json and linkdir.
	if c != (Counts{Documents: 4, Skipped: 3}) {
		t.Errorf("counts = %+v, want 4 documents, 3 skipped", c)
	}
	for _, it := range items {
		if strings.Contains(it.content, "outside") {
			t.Errorf("a symbolic link was followed: %s", it.Place.Document)
		}
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

// TestFilesVanishedSubdir provokes a folder that cannot be listed in a way that
// works as root too: it is removed after its parent was listed and before the walk
// reaches it.
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
	if len(got) != 3 {
		t.Fatalf("items = %+v, want a.json, an error for b, c.json", got)
	}
	if got[1].Err == nil || got[1].Place.Document != filepath.Join(dir, "b") || got[1].Open != nil {
		t.Errorf("item for b = %+v, want an Err naming the folder", got[1])
	}
	if got[2].Place.Document != filepath.Join(dir, "c.json") || got[2].Open == nil {
		t.Errorf("walk did not go on after the error: %+v", got[2])
	}
	if c.Documents != 2 {
		t.Errorf("counts = %+v", c)
	}
}

func TestFilesUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permission bits do not stop root from reading (TestFilesVanishedSubdir covers the listing error)")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "x.json"), `{}`)
	writeFile(t, filepath.Join(dir, "b.json"), `{}`)
	writeFile(t, filepath.Join(dir, "c.json"), `{}`)
	if err := os.Chmod(filepath.Join(dir, "a"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(dir, "a"), 0o755)
	if err := os.Chmod(filepath.Join(dir, "b.json"), 0); err != nil {
		t.Fatal(err)
	}
	var got []Item
	c, err := openFiles(t, dir).Walk(context.Background(), func(it Item) error {
		got = append(got, it)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if len(got) != 3 || got[0].Err == nil || got[0].Place.Document != filepath.Join(dir, "a") ||
		got[1].Err == nil || got[1].Place.Document != filepath.Join(dir, "b.json") || got[2].Open == nil {
		t.Fatalf("items = %+v, want errors for a and b.json, then c.json", got)
	}
	if c.Documents != 1 {
		t.Errorf("counts = %+v", c)
	}

	// An unreadable top folder is the source failing, not an item.
	if err := os.Chmod(filepath.Join(dir, "a"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := openFiles(t, filepath.Join(dir, "a")).Walk(context.Background(), func(Item) error { return nil }); err == nil {
		t.Error("Walk of an unreadable top folder: no error")
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
