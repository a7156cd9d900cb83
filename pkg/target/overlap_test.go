package target

import (
	"context"
	"errors"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
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

// TestBucketOverlap: a bucket store and a session source, or a quarantine,
// in the same bucket of one service are one place when a prefix lies within
// the other: a store over the whole bucket would list the session objects
// as blobs no session names, and gc would remove them. Prefixes beside each
// other, and other buckets, do not overlap.
func TestBucketOverlap(t *testing.T) {
	ctx := context.Background()
	srv := storetest.StartS3(t, nil)
	url := srv.Bucket(t, "media")
	srv.Bucket(t, "other")
	q := srv.Query()
	open := func(u string) store.Store {
		st, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	for _, c := range []struct {
		store, source, relation string
	}{
		{url, "s3://media/sessions/?" + q, Inside},
		{url, "s3://media?prefix=sessions/&" + q, Inside},
		{"s3://media?prefix=inbound/&" + q, "s3://media?" + q, Contains},
		{"s3://media?prefix=inbound/&" + q, "s3://media?prefix=inbound/sessions/&" + q, Inside},
		{"s3://media?prefix=inbound/&" + q, "s3://media?prefix=sessions/&" + q, ""},
		{"s3://media?prefix=inbound/&" + q, "s3://media?prefix=inbound2/&" + q, ""},
		{url, "s3://other/sessions/?" + q, ""},
	} {
		err := checkOverlap(ctx, []store.Store{open(c.store)}, []string{c.source})
		var oe *OverlapError
		switch {
		case c.relation == "" && err != nil:
			t.Errorf("store %s, sessions %s: %v, want no overlap", c.store, c.source, err)
		case c.relation != "" && (!errors.As(err, &oe) || oe.Relation != c.relation):
			t.Errorf("store %s, sessions %s: %v, want the source %s", c.store, c.source, err, c.relation)
		}
		if got := Overlap(open(c.store), open(c.source)); got != (c.relation != "") {
			t.Errorf("Overlap(%s, %s) = %v", c.store, c.source, got)
		}
	}
}
