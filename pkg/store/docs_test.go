package store_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestStoreRecipes: every bucket URL docs/stores.md recommends passes the
// URL check (scheme, parameters, prefix), and the SeaweedFS recipe opens
// and lists against the real server.
func TestStoreRecipes(t *testing.T) {
	doc, err := os.ReadFile("../../docs/stores.md")
	if err != nil {
		t.Fatal(err)
	}
	urls := regexp.MustCompile("`((?:s3|gs|azblob|file)://[^`]+)`").FindAllStringSubmatch(string(doc), -1)
	if len(urls) < 12 {
		t.Fatalf("only %d recipes found", len(urls))
	}
	var seaweed string
	for _, m := range urls {
		if err := store.CheckBucketURL(m[1]); err != nil {
			t.Errorf("recipe %s: %v", m[1], err)
		}
		if strings.Contains(m[1], "127.0.0.1:8333") {
			seaweed = m[1]
		}
	}
	srv := storetest.SeaweedFS(t)
	name := strings.TrimPrefix(strings.SplitN(srv.Bucket(t, "recipe"), "?", 2)[0], "s3://")
	u := strings.Replace(strings.Replace(seaweed, "agent-media", name, 1), "http://127.0.0.1:8333", srv.Endpoint, 1)
	st, err := store.Open(context.Background(), u)
	if err != nil {
		t.Fatalf("the SeaweedFS recipe %s: %v", u, err)
	}
	defer st.Close()
	if err := st.List(context.Background(), "", func(store.Entry) error { return nil }); err != nil {
		t.Fatalf("list through the recipe: %v", err)
	}
}
