//go:build unix

package store_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

// A file:// bucket on another file system than the temporary folder is
// written all the same (fileblob's rename from the temporary folder would
// fail for every object), and its location, as journals compare it, does
// not depend on how it is written.
func TestFileBucketAcrossFileSystems(t *testing.T) {
	tmp := t.TempDir()
	var other string
	for _, d := range []string{"/dev/shm", "/run/user"} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			if dir, err := os.MkdirTemp(d, "mediactl-test-"); err == nil {
				other = dir
				t.Cleanup(func() { os.RemoveAll(dir) })
				break
			}
		}
	}
	if other == "" {
		t.Skip("no second writable file system (/dev/shm) to put the temporary folder on")
	}
	if sameDev(t, tmp, other) {
		t.Skip("/dev/shm is on the same file system as the temporary folder")
	}
	t.Setenv("TMPDIR", other) // the temporary folder fileblob would write to
	bucket := filepath.Join(tmp, "bucket")
	if err := os.Mkdir(bucket, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, u := range []string{"file://" + bucket, "file://" + bucket + "?no_tmp_dir=false"} {
		s, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "a/b.png", strings.NewReader("bytes"), store.PutOptions{}); err != nil {
			t.Fatalf("%s: Put across file systems: %v", u, err)
		}
		rc, err := s.Open(ctx, "a/b.png")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(got, []byte("bytes")) {
			t.Errorf("%s: read %q", u, got)
		}
		if s.Location() != "file://"+bucket {
			t.Errorf("%s: location %s, want file://%s", u, s.Location(), bucket)
		}
		s.Close()
	}
	if !store.SameBucket("file://"+bucket+"?no_tmp_dir=true", "file://"+bucket) || !store.SameBucket("file://"+bucket+"?prefix=x/&create_dir=true", "file://"+bucket+"/?prefix=x") {
		t.Error("the same bucket written differently is not the same bucket")
	}
	if store.SameBucket("file://"+bucket+"?prefix=x/", "file://"+bucket) || store.SameBucket("file://"+bucket, "file://"+tmp) {
		t.Error("different buckets or prefixes are the same bucket")
	}
}

func sameDev(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(fa, fb) || devOf(fa) == devOf(fb)
}
