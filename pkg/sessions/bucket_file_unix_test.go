//go:build unix

package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fileURL is the file:// bucket URL of a folder.
func fileURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// TestBucketFileEveryFolder: a file:// session bucket is read whole, in key
// order, across the listing's pages. A tenant's folder "acme-eu/" sorts
// before "acme/" as keys ('-' < '/') but after it as folders; fileblob's own
// listing, which walks folders in their order and pages by key, dropped
// every "acme-eu/" key once a page ended inside "acme/": a scan read 1,001
// of 1,002 sessions, exit 0, and gc removed the blob only the last named.
func TestBucketFileEveryFolder(t *testing.T) {
	dir := t.TempDir()
	const n = 1001
	for i := range n {
		writeFile(t, filepath.Join(dir, "acme", fmt.Sprintf("task-%04d.json", i)), forgeSession(fmt.Sprintf("task-%04d", i), "/srv/agent/.forge/files/inbound/a.png"))
	}
	writeFile(t, filepath.Join(dir, "acme-eu", "task-eu-1.json"), forgeSession("task-eu-1", "/srv/agent/.forge/files/inbound/b.png"))
	items, c := walkSpec(t, fileURL(dir))
	if c.Documents != n+1 || len(items) != n+1 {
		t.Fatalf("counts %+v, %d items: want %d documents", c, len(items), n+1)
	}
	if items[0].Place.Document != "acme-eu/task-eu-1.json" || !strings.Contains(items[0].content, "b.png") {
		t.Errorf("first item %q: want acme-eu/task-eu-1.json, which sorts first", items[0].Place.Document)
	}
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.Place.Document
	}
	if !slices.IsSorted(keys) {
		t.Error("documents not in key order")
	}
}

// TestBucketFileLinks: a file:// session bucket whose folder (or its
// prefix's) is a symbolic link, as an archive volume linked in is, is read
// through the link; a link inside the bucket, which fileblob never follows,
// is named as not read. fileblob's listing read nothing through a linked
// bucket folder and said nothing.
func TestBucketFileLinks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "volume", "archive", "t-old.json"), forgeSession("t-old", "/srv/agent/.forge/files/inbound/b.png"))
	writeFile(t, filepath.Join(dir, "elsewhere", "t-2.json"), forgeSession("t-2", "/srv/agent/.forge/files/inbound/c.png"))
	if err := os.Symlink(filepath.Join(dir, "volume", "archive"), filepath.Join(dir, "archive")); err != nil {
		t.Fatal(err)
	}
	items, c := walkSpec(t, fileURL(filepath.Join(dir, "archive")))
	if got := documents(items); !slices.Equal(got, []string{"t-old.json"}) || c.Documents != 1 {
		t.Errorf("through a linked bucket folder: documents %q, counts %+v", got, c)
	}
	items, c = walkSpec(t, fileURL(dir)+"?prefix=archive/")
	if got := documents(items); !slices.Equal(got, []string{"t-old.json"}) || c.Documents != 1 { // keys below the prefix
		t.Errorf("through a linked prefix folder: documents %q, counts %+v", got, c)
	}

	if err := os.Symlink(filepath.Join(dir, "elsewhere", "t-2.json"), filepath.Join(dir, "volume", "archive", "t-2.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "volume", "archive", "more")); err != nil {
		t.Fatal(err)
	}
	items, c = walkSpec(t, fileURL(filepath.Join(dir, "volume", "archive")))
	var unread []string
	for _, it := range items {
		var ue *UnreadError
		if errors.As(it.Err, &ue) && strings.Contains(ue.Reason, "symbolic link") {
			unread = append(unread, ue.Path)
		}
	}
	if !slices.Equal(unread, []string{"more", "t-2.json"}) || c.Unread != 2 || c.Documents != 1 {
		t.Errorf("links inside the bucket: unread %q, counts %+v; want both links named as not read", unread, c)
	}
}

// TestBucketFileUnreadable: a folder of a file:// session bucket that cannot
// be listed fails the walk; fileblob's listing passed over it, and gc
// removed the blob only its sessions named.
func TestBucketFileUnreadable(t *testing.T) {
	if os.Geteuid() == 0 && !asNobodyChild(t) {
		runAsNobody(t)
		return
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "acme", "t-1.json"), forgeSession("t-1", "/srv/agent/.forge/files/inbound/a.png"))
	writeFile(t, filepath.Join(dir, "beta", "t-2.json"), forgeSession("t-2", "/srv/agent/.forge/files/inbound/b.png"))
	if err := os.Chmod(filepath.Join(dir, "beta"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(dir, "beta"), 0o755)
	src, err := Open(context.Background(), fileURL(dir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, err = src.Walk(context.Background(), func(Item) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "beta") {
		t.Fatalf("Walk with an unreadable folder: err = %v, want an error naming it", err)
	}
}

// walkSpec opens a session source and reads every item of it.
func walkSpec(t *testing.T, spec string) ([]walked, Counts) {
	t.Helper()
	src, err := Open(context.Background(), spec, Options{})
	if err != nil {
		t.Fatalf("Open(%q): %v", spec, err)
	}
	defer src.Close()
	return walkAll(t, src)
}
