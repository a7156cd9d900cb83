package replay_test

import (
	"errors"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestS3 runs the bucket suite against an in-process S3 server (gofakes3).
func TestS3(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	bucketSuite(t, srv.Bucket(t, "media"), srv.Bucket(t, "other"))
}

// TestSeaweedFS runs the bucket suite against SeaweedFS, a production S3
// implementation (eval "$(scripts/services/seaweedfs.sh start)"); skipped
// without it, failed under CI=true.
func TestSeaweedFS(t *testing.T) {
	srv := storetest.SeaweedFS(t)
	bucketSuite(t, srv.Bucket(t, "media"), srv.Bucket(t, "other"))
}

// bucketName is the bucket a store URL names.
func bucketName(t testing.TB, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Host
}

func openStore(t testing.TB, u string) store.Store {
	t.Helper()
	s, err := store.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// bucketSuite: objects written as migrate writes them (content type, sha256
// metadata) are served verified by URL and by {bucket, path}; another bucket,
// another user's prefix, traversal keys and objects whose bytes are not what
// their name or metadata says are refused; the cache serves repeated reads
// and never serves an altered entry.
func bucketSuite(t *testing.T, mediaURL, otherURL string) {
	media, other := bucketName(t, mediaURL), bucketName(t, otherURL)
	s := openStore(t, mediaURL)
	blob := pngBlob(100 << 10)
	ca := "inbound/" + sum(blob) + ".png"
	putObject(t, s, ca, blob, blob)
	upload := pngBlob(20000)
	mine := "agent-inputs/u1/t1/uploads/f.png"
	putObject(t, s, mine, upload, upload)
	theirs := "agent-inputs/u2/t1/uploads/f.png"
	putObject(t, s, theirs, upload, upload)
	putObject(t, s, "inbound/opaque.png", upload, nil)
	forged := pngBlob(20000)
	putObject(t, s, "inbound/altered.png", forged, upload)      // metadata says upload, bytes say forged
	putObject(t, s, "inbound/"+sum(upload)+".png", forged, nil) // the name says upload
	never := pngBlob(1000)                                      // proven once, never stored
	putObject(t, s, "inbound/altered2.png", forged, never)
	putObject(t, s, "private/"+sum(blob)+".png", blob, blob)
	putObject(t, openStore(t, otherURL), ca, blob, blob)

	cfg := replay.Config{Buckets: []replay.Bucket{{URL: mediaURL, Prefixes: []string{"inbound/", "agent-inputs/{user}/{thread}/uploads/"}}}}
	r := newReplayer(t, cfg)
	ref := "s3://" + media + "/" + ca
	info := wantBytes(t, r, ref, blob)
	if info.Source != replay.FromBucket || info.Size != int64(len(blob)) || info.ContentType != "image/png" || info.Location != ref {
		t.Errorf("Open(%q) info = %+v", ref, info)
	}
	wantBytes(t, r, "S3://"+media+"/"+ca, blob)
	wantBytes(t, r, "s3://"+media+"/"+mine, upload)
	wantBytes(t, r, "s3://"+media+"/"+mine, upload, replay.Vars{"user": "u1", "thread": "t1"})
	wantBytes(t, r, "s3://"+media+"/"+theirs, upload) // no Vars: any user

	rc, info, err := r.OpenObject(ctx, media, mine, replay.Vars{"user": "u1", "thread": "t1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(got) != string(upload) || info.SHA256 != sum(upload) {
		t.Errorf("OpenObject(%s, %s) = %d bytes, %+v, %v", media, mine, len(got), info, err)
	}
	u1 := replay.Vars{"user": "u1", "thread": "t1"}
	for _, c := range []struct {
		bucket, key string
		vars        replay.Vars
		want        error
	}{
		{media, theirs, u1, replay.ErrPrefixNotAllowed},
		{media, mine, replay.Vars{"user": "u1", "thread": "t2"}, replay.ErrPrefixNotAllowed},
		{media, mine, replay.Vars{"user": ""}, replay.ErrPrefixNotAllowed},
		{media, "agent-inputs/u1/t1/uploads/../../../u2/t1/uploads/f.png", u1, replay.ErrInvalidReference},
		{media, "agent-inputs/u1/t1/uploads//f.png", u1, replay.ErrInvalidReference},
		{media, "agent-inputs/u1/t1/uploads/", u1, replay.ErrInvalidReference},
		{media, "agent-inputs/u1/t1/uploads", u1, replay.ErrPrefixNotAllowed},
		{media, "agent-inputs\\u1\\t1\\uploads\\f.png", u1, replay.ErrInvalidReference},
		{media, "/" + mine, u1, replay.ErrInvalidReference},
		{media, "private/" + sum(blob) + ".png", nil, replay.ErrPrefixNotAllowed},
		{media, ".mediactl/trash/" + sum(blob) + ".png", nil, replay.ErrInvalidReference},
		{media, "inbound/.mediactl/trash/" + sum(blob) + ".png", nil, replay.ErrInvalidReference},
		{media, "inbound/opaque.png", nil, replay.ErrNoDigest},
		{other, ca, nil, replay.ErrBucketNotAllowed},
		{"", ca, nil, replay.ErrInvalidReference},
		{media + "/inbound", sum(blob) + ".png", nil, replay.ErrInvalidReference},
	} {
		rc, _, err := r.OpenObject(ctx, c.bucket, c.key, c.vars)
		if err == nil {
			rc.Close()
		}
		wantRefused(t, c.bucket+"/"+c.key, err, c.want)
	}
	for _, c := range []struct {
		ref  string
		want error
	}{
		{"s3://" + other + "/" + ca, replay.ErrBucketNotAllowed},
		{"gs://" + media + "/" + ca, replay.ErrBucketNotAllowed},
		{"azblob://" + media + "/" + ca, replay.ErrBucketNotAllowed},
		{"s3://" + strings.ToUpper(media) + "/" + ca, replay.ErrBucketNotAllowed},
		{"s3://" + media + "/" + ca + "?endpoint=http://127.0.0.1:1", replay.ErrInvalidReference},
		{"s3://" + media + "/" + ca + "#x", replay.ErrInvalidReference},
		{"s3://" + media + "/inbound/../private/" + sum(blob) + ".png", replay.ErrInvalidReference},
		{"s3://" + media + "/inbound/./" + sum(blob) + ".png", replay.ErrInvalidReference},
		{"s3://" + media, replay.ErrInvalidReference},
		{"s3:///" + ca, replay.ErrInvalidReference},
		{"https://" + media + ".s3.amazonaws.com/" + ca, replay.ErrInvalidReference},
		{"s3://" + media + "/agent-inputs/u2/t1/uploads/f.png", replay.ErrPrefixNotAllowed}, // with u1's Vars below
	} {
		rc, _, err := r.Open(ctx, c.ref, u1)
		if err == nil {
			rc.Close()
		}
		wantRefused(t, c.ref, err, c.want)
	}
	wantMismatch(t, r, "s3://"+media+"/inbound/altered.png")
	wantMismatch(t, r, "s3://"+media+"/inbound/"+sum(upload)+".png")
	wantMismatch(t, r, "s3://"+media+"/inbound/altered2.png")
	if _, _, err := readRef(t, r, "s3://"+media+"/inbound/"+sum([]byte("gone"))+".png"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing object = %v, want ErrNotExist", err)
	}

	t.Run("cache", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "cache")
		cfg := cfg
		cfg.Cache = dir
		r := newReplayer(t, cfg)
		entry := filepath.Join(dir, sum(blob))

		// An early close fills nothing.
		rc, _, err := r.Open(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadFull(rc, make([]byte, 1000))
		rc.Close()
		wantEntries(t, dir)

		if info := wantBytes(t, r, ref, blob); info.Source != replay.FromBucket {
			t.Errorf("first read from %s, want the bucket", info.Source)
		}
		wantEntries(t, dir, sum(blob))
		if info := wantBytes(t, r, ref, blob); info.Source != replay.FromCache || info.Location != entry {
			t.Errorf("second read: %+v, want the cache entry %s", info, entry)
		}
		// {bucket, path} through metadata: cached under its digest too.
		wantBytes(t, r, "s3://"+media+"/"+mine, upload)
		if info := wantBytes(t, r, "s3://"+media+"/"+mine, upload); info.Source != replay.FromCache {
			t.Errorf("second read of %s from %s, want the cache", mine, info.Source)
		}
		wantEntries(t, dir, sum(blob), sum(upload))

		// An altered entry is dropped and fetched again, never served.
		altered := append([]byte(nil), blob...)
		altered[len(altered)-1] ^= 1
		os.WriteFile(entry, altered, 0o600)
		if info := wantBytes(t, r, ref, blob); info.Source != replay.FromBucket {
			t.Errorf("read after the entry was altered from %s, want the bucket", info.Source)
		}
		if b, _ := os.ReadFile(entry); string(b) != string(blob) {
			t.Error("the altered entry was not replaced by the verified bytes")
		}
		// A link is not an entry, even to the right bytes.
		outside := filepath.Join(t.TempDir(), "copy")
		os.WriteFile(outside, blob, 0o600)
		os.Remove(entry)
		os.Symlink(outside, entry)
		if info := wantBytes(t, r, ref, blob); info.Source != replay.FromBucket {
			t.Errorf("read through a linked entry from %s, want the bucket", info.Source)
		}
		if fi, err := os.Lstat(entry); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("the linked entry was not replaced by a file: %v %v", fi, err)
		}

		// Bytes that fail their digest never enter the cache; a reference
		// whose digest the cache holds gets the proven bytes, whatever the
		// bucket holds now.
		wantMismatch(t, r, "s3://"+media+"/inbound/altered2.png")
		for _, key := range []string{"inbound/altered.png", "inbound/" + sum(upload) + ".png"} {
			if info := wantBytes(t, r, "s3://"+media+"/"+key, upload); info.Source != replay.FromCache {
				t.Errorf("%s read from %s, want the cache's proven copy", key, info.Source)
			}
		}
		wantEntries(t, dir, sum(blob), sum(upload))

		// Concurrent readers, cold and warm.
		os.Remove(entry)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { wantBytes(t, r, ref, blob) })
		}
		wg.Wait()
		wantEntries(t, dir, sum(blob), sum(upload))
	})
}

// wantEntries fails unless the cache directory holds exactly names (no
// temporary file either).
func wantEntries(t testing.TB, dir string, names ...string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, de := range des {
		got = append(got, de.Name())
	}
	if strings.Join(got, ",") != strings.Join(sorted(names), ",") {
		t.Errorf("cache holds %v, want %v", got, names)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
