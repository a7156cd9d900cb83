//go:build unix

package replay_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/replay"
)

// TestFileBucketEscapedKeys: keys that fileblob keeps under escaped file
// names (a folder with a tab in its name is "…__0x9__…" on disk) are read as
// every other key of a file:// bucket is: a folder that is a link to outside
// is refused, not followed, for a content-addressed name and for an opaque
// one whose digest is in its attributes file; a FIFO in the object's place or
// in its attributes file's is refused at once. A regular object under such a
// key reads back verified. Before, these keys went to fileblob, which read
// the files outside through the link and waited on a FIFO for ever.
func TestFileBucketEscapedKeys(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "bucket"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	u := "file://" + dir
	s := openStore(t, u)
	blob := pngBlob(3000)
	name := sum(blob) + ".png"
	putObject(t, s, "inbound/ok\tdir/"+name, blob, blob)
	putObject(t, s, "inbound/ok\tdir/opaque.png", blob, blob)
	putObject(t, s, "inbound/fa\tdir/opaque.png", blob, blob)
	putObject(t, s, "inbound/ff\tdir/opaque.png", blob, blob)
	putObject(t, s, "inbound/ff\tdir/"+name, blob, blob)
	for _, p := range []string{"ff__0x9__dir/opaque.png", "ff__0x9__dir/" + name, "fa__0x9__dir/opaque.png.attrs"} {
		p = filepath.Join(dir, "inbound", p)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	secret := pngBlob(3000)
	secretName := sum(secret) + ".png"
	os.WriteFile(filepath.Join(outside, secretName), secret, 0o600)
	os.WriteFile(filepath.Join(outside, "opaque.png"), secret, 0o600)
	os.WriteFile(filepath.Join(outside, "opaque.png.attrs"), []byte(`{"user.metadata":{"sha256":"`+sum(secret)+`"}}`), 0o600)
	if err := os.Symlink(outside, filepath.Join(dir, "inbound", "ln__0x9__dir")); err != nil {
		t.Fatal(err)
	}

	r, err := replay.New(replay.Config{Buckets: []replay.Bucket{{URL: u, Prefixes: []string{"inbound/"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		closed := make(chan struct{})
		go func() { r.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Error("Close blocked: a read is still under way")
		}
	}()
	wantBytes(t, r, u+"/inbound/ok%09dir/"+name, blob)
	wantBytes(t, r, filepath.Join(dir, "inbound", "ok\tdir", name), blob)
	wantBytes(t, r, u+"/inbound/ok%09dir/opaque.png", blob)

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, ref := range []string{
			u + "/inbound/ln%09dir/" + secretName,
			filepath.Join(dir, "inbound", "ln\tdir", secretName),
			u + "/inbound/ln%09dir/opaque.png",
			u + "/inbound/ff%09dir/" + name,
			u + "/inbound/ff%09dir/opaque.png",
			u + "/inbound/fa%09dir/opaque.png",
		} {
			got, _, err := readRef(t, r, ref)
			if len(got) > 0 {
				t.Errorf("%s: read %d bytes, want it refused", ref, len(got))
			}
			wantRefused(t, ref, err, replay.ErrNotRegular)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a read has not returned in 20s: it waits on a FIFO")
	}
}
