package replay_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/replay"
)

// TestFileBucket: a file:// bucket (gocloud's fileblob, metadata in its
// .attrs files) as migrate writes it is read by the file URL migrate's
// references carry, and by its plain path; its allow-list holds as for S3.
func TestFileBucket(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bucket")
	os.MkdirAll(dir, 0o700)
	u := "file://" + dir
	s := openStore(t, u)
	blob := pngBlob(30000)
	ca := "inbound/" + sum(blob) + ".png"
	putObject(t, s, ca, blob, blob)
	upload := pngBlob(2000)
	putObject(t, s, "agent-inputs/u1/t1/uploads/f.png", upload, upload)
	putObject(t, s, "agent-inputs/u1/t1/uploads/bare.png", upload, nil)
	forged := pngBlob(2000)
	putObject(t, s, "agent-inputs/u1/t1/uploads/g.png", forged, upload)
	putObject(t, s, "private/"+sum(blob)+".png", blob, blob)

	r := newReplayer(t, replay.Config{Buckets: []replay.Bucket{{URL: u, Prefixes: []string{"inbound/", "agent-inputs/{user}/{thread}/uploads/"}}}})
	info := wantBytes(t, r, u+"/"+ca, blob)
	if info.Source != replay.FromBucket || info.Location != u+"/"+ca || info.ContentType != "image/png" {
		t.Errorf("info = %+v", info)
	}
	wantBytes(t, r, filepath.Join(dir, ca), blob)
	wantBytes(t, r, u+"/agent-inputs/u1/t1/uploads/f.png", upload, replay.Vars{"user": "u1"})
	wantMismatch(t, r, u+"/agent-inputs/u1/t1/uploads/g.png")
	for _, c := range []struct {
		ref  string
		vars replay.Vars
		want error
	}{
		{u + "/agent-inputs/u1/t1/uploads/f.png", replay.Vars{"user": "u2"}, replay.ErrPrefixNotAllowed},
		{u + "/agent-inputs/u1/t1/uploads/bare.png", nil, replay.ErrNoDigest},
		{u + "/private/" + sum(blob) + ".png", nil, replay.ErrPrefixNotAllowed},
		{u + "/inbound/../private/" + sum(blob) + ".png", nil, replay.ErrInvalidReference},
		{u + "/inbound/%2E%2E/private/" + sum(blob) + ".png", nil, replay.ErrInvalidReference},
		{u + "-other/" + ca, nil, replay.ErrOutsideRoots},
	} {
		rc, _, err := r.Open(ctx, c.ref, c.vars)
		if err == nil {
			rc.Close()
		}
		wantRefused(t, c.ref, err, c.want)
	}
	// A cache entry too large to hold in memory is hashed, then streamed
	// verified; altered, it is dropped and fetched again. Stale temporary
	// files are swept when a Replayer opens the cache, fresh ones are not.
	cacheDir := filepath.Join(t.TempDir(), "cache")
	os.MkdirAll(cacheDir, 0o700)
	stale, fresh := filepath.Join(cacheDir, ".tmp-stale"), filepath.Join(cacheDir, ".tmp-fresh")
	os.WriteFile(stale, []byte("torn"), 0o600)
	os.WriteFile(fresh, []byte("being written"), 0o600)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale, old, old)
	large := pngBlob(5 << 20)
	largeKey := "inbound/" + sum(large) + ".png"
	putObject(t, s, largeKey, large, large)
	cached := newReplayer(t, replay.Config{Cache: cacheDir, Buckets: []replay.Bucket{{URL: u, Prefixes: []string{"inbound/"}}}})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale temporary file is still there: %v", err)
	}
	os.Remove(fresh)
	for i, src := range []replay.Source{replay.FromBucket, replay.FromCache} {
		if info := wantBytes(t, cached, u+"/"+largeKey, large); info.Source != src {
			t.Errorf("read %d of the 5 MiB object from %s, want %s", i+1, info.Source, src)
		}
	}
	entry := filepath.Join(cacheDir, sum(large))
	altered := append([]byte(nil), large...)
	altered[3<<20] ^= 0x80
	os.WriteFile(entry, altered, 0o600)
	if info := wantBytes(t, cached, u+"/"+largeKey, large); info.Source != replay.FromBucket {
		t.Errorf("read after the large entry was altered from %s, want the bucket", info.Source)
	}
	wantEntries(t, cacheDir, sum(large))

	// fileblob's own attribute files are not objects.
	if got, _, err := readRef(t, r, u+"/"+ca+".attrs"); err == nil || len(got) > 0 {
		t.Errorf("reading the .attrs file of %s = %d bytes, %v; want an error", ca, len(got), err)
	}
}

// TestFileBucketSymlinks: a file:// bucket is read as a local root is: a
// link in it, to a file or a folder outside, is refused, by the bucket's
// URL and by its plain path, and a FIFO is never waited on. Before, fileblob
// opened through links and read the file outside.
func TestFileBucketSymlinks(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "bucket")
	os.MkdirAll(filepath.Join(dir, "inbound"), 0o700)
	outside := filepath.Join(base, "outside")
	os.MkdirAll(outside, 0o700)
	secret := pngBlob(3000)
	name := sum(secret) + ".png"
	os.WriteFile(filepath.Join(outside, name), secret, 0o600)
	os.Symlink(filepath.Join(outside, name), filepath.Join(dir, "inbound", name))
	os.Symlink(outside, filepath.Join(dir, "inbound", "linked"))
	fifo := sum(pngBlob(10)) + ".png"
	if err := syscall.Mkfifo(filepath.Join(dir, "inbound", fifo), 0o600); err != nil {
		t.Fatal(err)
	}
	u := "file://" + dir
	r := newReplayer(t, replay.Config{Buckets: []replay.Bucket{{URL: u, Prefixes: []string{"inbound/"}}}})
	for _, ref := range []string{
		u + "/inbound/" + name,
		filepath.Join(dir, "inbound", name),
		u + "/inbound/linked/" + name,
		filepath.Join(dir, "inbound", "linked", name),
		u + "/inbound/" + fifo,
	} {
		got, _, err := readRef(t, r, ref)
		if err == nil || len(got) > 0 {
			t.Errorf("%s: %d bytes, %v; want it refused", ref, len(got), err)
		}
	}
}
