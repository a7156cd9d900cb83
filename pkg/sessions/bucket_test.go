package sessions

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gocloud.dev/blob"

	"github.com/mediactl/mediactl/pkg/store"
)

// memSource is a session source over a new mem:// bucket, and the bucket to
// write its objects into.
func memSource(t *testing.T) (*bucketSource, *blob.Bucket) {
	t.Helper()
	bs, err := store.OpenBucket(context.Background(), "mem://")
	if err != nil {
		t.Fatal(err)
	}
	src := newBucketSource(bs)
	t.Cleanup(func() { src.Close() })
	return src, bs.Blob()
}

// A bucket of sessions is read by the rules of a sessions folder: every
// object is read, excluded or reported.
func TestBucketMem(t *testing.T) {
	ctx := context.Background()
	src, b := memSource(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"task_id":"t-3"}`))
	zw.Close()
	objects := map[string]string{
		"agent/sessions/t-1.json":     `{"task_id":"t-1"}`,
		"agent/sessions/t-1.json.tmp": `{"task_id":`, // an update never renamed: skipped
		"agent/sessions/T-2.JSON":     `{"task_id":"t-2"}`,
		"agent/sessions/t-3.json.gz":  gz.String(),
		"agent/sessions/t-4.json.tmp": `{"task_id":"t-4"}`, // the only copy: read
		"agent/sessions/README.md":    `not a session`,
		"agent/sessions/empty.json":   ``,
		"agent/sessions/old.jsonl":    `{"a":1}` + "\n" + `{"b":2}` + "\n",
		"agent/archive/2025.bak":      `excluded`,
		"a.ndjson":                    `{}`,
	}
	for k, v := range objects {
		if err := b.WriteAll(ctx, k, []byte(v), nil); err != nil {
			t.Fatal(err)
		}
	}
	src.exclude = []string{"agent/archive/*"}
	items, c := walkAll(t, src) // opens every document after Walk returned
	want := []string{"a.ndjson", "agent/sessions/T-2.JSON", "agent/sessions/old.jsonl", "agent/sessions/t-1.json", "agent/sessions/t-3.json.gz", "agent/sessions/t-4.json.tmp"}
	if got := documents(items); !reflect.DeepEqual(got, want) {
		t.Errorf("documents = %q, want %q", got, want)
	}
	if c != (Counts{Documents: 5, Skipped: 1, Excluded: 1, Leftovers: 1, Unread: 1}) {
		t.Errorf("counts = %+v", c)
	}
	var problems []string
	for _, it := range items {
		if it.Err != nil {
			problems = append(problems, it.Err.Error())
			continue
		}
		content := objects[it.Place.Document]
		if strings.HasSuffix(it.Place.Document, ".gz") {
			content = `{"task_id":"t-3"}`
		}
		if it.content != content || (it.Size != int64(len(it.content)) && it.Size != -1) {
			t.Errorf("%s: content %q, size %d", it.Place.Document, it.content, it.Size)
		}
		if it.Leftover != strings.HasSuffix(it.Place.Document, ".tmp") {
			t.Errorf("%s: leftover %v", it.Place.Document, it.Leftover)
		}
		if it.Place.Source != "mem://" || it.Place.Offset != -1 {
			t.Errorf("place = %+v", it.Place)
		}
	}
	if len(problems) != 2 || !strings.Contains(strings.Join(problems, "\n"), "README.md not read") || !strings.Contains(strings.Join(problems, "\n"), "empty file") {
		t.Errorf("problems = %q, want README.md unread and empty.json", problems)
	}
}

func TestBucketPaging(t *testing.T) {
	ctx := context.Background()
	src, b := memSource(t)
	const n = 1000*2 + 7 // over two of the bucket's listing pages
	for i := range n {
		if err := b.WriteAll(ctx, fmt.Sprintf("s/%05d.json", i), []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	c, err := src.Walk(ctx, func(it Item) error {
		keys = append(keys, it.Place.Document)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Documents != n || len(keys) != n {
		t.Fatalf("documents = %d, items %d, want %d", c.Documents, len(keys), n)
	}
	for i, k := range keys {
		if k != fmt.Sprintf("s/%05d.json", i) {
			t.Fatalf("key %d = %q: not in key order", i, k)
		}
	}
	stop := errors.New("stop")
	if _, err := src.Walk(ctx, func(Item) error { return stop }); err != stop {
		t.Fatalf("err = %v, want the callback's error", err)
	}
}

func TestBucketFileURL(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "sessions", "t-1.json"), `{"task_id":"t-1"}`)
	writeFile(t, filepath.Join(dir, "sessions", "t-2.json.tmp"), `{`)
	spec := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
	src, err := Open(context.Background(), spec, Options{})
	if err != nil {
		t.Fatalf("Open(%q): %v", spec, err)
	}
	defer src.Close()
	items, c := walkAll(t, src)
	if got := documents(items); !reflect.DeepEqual(got, []string{"sessions/t-1.json", "sessions/t-2.json.tmp"}) || items[0].content != `{"task_id":"t-1"}` {
		t.Errorf("documents = %q, items %+v", got, items)
	}
	if c != (Counts{Documents: 1, Leftovers: 1}) {
		t.Errorf("counts = %+v", c)
	}

	// An object deleted between the listing and Open is an error from Open.
	var item Item
	if _, err := src.Walk(context.Background(), func(it Item) error {
		if it.Place.Document == "sessions/t-1.json" {
			item = it
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "sessions", "t-1.json")); err != nil {
		t.Fatal(err)
	}
	if r, err := item.Open(); err == nil {
		r.Close()
		t.Error("Open of a deleted object: no error")
	}
}
