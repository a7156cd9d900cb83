package sessions

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// A session bucket URL with a prefix is confined to it exactly as the same URL
// is as a store: objects beside the prefix are neither read nor reported.
func TestBucketPrefixConfines(t *testing.T) {
	ctx := context.Background()
	srv := storetest.StartS3(t, nil)
	whole := srv.Bucket(t, "agents")
	all, err := store.Open(ctx, whole)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	objects := map[string]string{
		"agent/sessions/t-1.json":     `{"task_id":"t-1","media":"s3://agents/agent/files/inbound/a.png"}`,
		"agent/sessions/sub/t-2.json": `{"task_id":"t-2"}`,
		"agent/sessions.json":         `{"beside":"the prefix, not in it"}`,
		"agent/files/inbound/a.png":   "\x89PNG not a session",
		"other/t-3.json":              `{"task_id":"t-3"}`,
	}
	for k, v := range objects {
		if err := all.Put(ctx, k, strings.NewReader(v), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, prefix := range []string{"/agent/sessions/", "/agent/sessions"} {
		spec := strings.Replace(whole, "?", prefix+"?", 1)
		src, err := Open(ctx, spec, Options{})
		if err != nil {
			t.Fatalf("Open(%q): %v", spec, err)
		}
		items, c := walkAll(t, src)
		src.Close()
		if got, want := documents(items), []string{"sub/t-2.json", "t-1.json"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: documents = %q, want %q", spec, got, want)
		}
		if c != (Counts{Documents: 2}) {
			t.Errorf("%s: counts = %+v, want the two documents below the prefix and nothing else", spec, c)
		}
		for _, it := range items {
			if it.content != objects["agent/sessions/"+it.Place.Document] {
				t.Errorf("%s: %s read %q", spec, it.Place.Document, it.content)
			}
			if it.Place.Source != src.String() || !strings.Contains(it.Place.Source, "/agent/sessions/") {
				t.Errorf("%s: place %+v does not name the prefixed source %s", spec, it.Place, src)
			}
		}
	}
}
