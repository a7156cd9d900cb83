package target

import (
	"context"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/bc", "/a/b", false},
		{"/a", "/a/b", false},
		{"/a", "/", true},
		{"/", "/", true},
	} {
		if got := store.Within(c.path, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}

// URL sources are read through a server or a bucket, never as local files of
// a store: they are not compared with it.
func TestCheckOverlapSkipsURLs(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	specs := []string{
		"postgres://mediactl:secret@127.0.0.1:5432/agent?sslmode=disable",
		"s3://sessions/agent/",
		"gs://sessions" + dir,
		"mem://sessions",
	}
	if err := checkOverlap(context.Background(), []store.Store{st}, specs); err != nil {
		t.Fatalf("URL sources overlap: %v", err)
	}
	// The same folder as a path is refused: the check does look.
	if err := checkOverlap(context.Background(), []store.Store{st}, []string{dir}); err == nil {
		t.Fatal("the store's own folder as a session source was not refused")
	}
}
