package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gocloud.dev/blob/memblob"
)

func TestBucketMem(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	objects := map[string]string{
		"agent/sessions/t-1.json":     `{"task_id":"t-1"}`,
		"agent/sessions/t-1.json.tmp": `{"task_id":`,
		"agent/sessions/README.md":    `not a session`,
		"agent/sessions/old.jsonl":    `{"a":1}` + "\n" + `{"b":2}` + "\n",
		"a.ndjson":                    `{}`,
	}
	for k, v := range objects {
		if err := b.WriteAll(ctx, k, []byte(v), nil); err != nil {
			t.Fatal(err)
		}
	}
	src := newBucketSource("mem://", b)
	defer src.Close()
	items, c := walkAll(t, src) // opens every document after Walk returned
	want := []string{"a.ndjson", "agent/sessions/old.jsonl", "agent/sessions/t-1.json"}
	if got := documents(items); !reflect.DeepEqual(got, want) {
		t.Errorf("documents = %q, want %q", got, want)
	}
	if c != (Counts{Documents: 3, Skipped: 1}) {
		t.Errorf("counts = %+v", c)
	}
	for _, it := range items {
		if it.content != objects[it.Place.Document] || it.Size != int64(len(it.content)) {
			t.Errorf("%s: content %q, size %d", it.Place.Document, it.content, it.Size)
		}
		if it.Place.Source != "mem://" || it.Place.Offset != -1 {
			t.Errorf("place = %+v", it.Place)
		}
	}
}

// TestBucketPaging lists more objects than fit in one page.
func TestBucketPaging(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	const n = bucketPageSize*2 + 7
	for i := range n {
		if err := b.WriteAll(ctx, fmt.Sprintf("s/%05d.json", i), []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	src := newBucketSource("mem://", b)
	defer src.Close()
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
	if got := documents(items); !reflect.DeepEqual(got, []string{"sessions/t-1.json"}) || items[0].content != `{"task_id":"t-1"}` {
		t.Errorf("documents = %q, items %+v", got, items)
	}
	if c != (Counts{Documents: 1, Skipped: 1}) {
		t.Errorf("counts = %+v", c)
	}

	// An object deleted between the listing and Open is an error from Open.
	var item Item
	if _, err := src.Walk(context.Background(), func(it Item) error { item = it; return nil }); err != nil {
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
