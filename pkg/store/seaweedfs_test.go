package store_test

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestSeaweedFS runs the suite against SeaweedFS, a production S3 implementation.
// Start it with
//
//	eval "$(scripts/services/seaweedfs.sh start)"
//
// which sets MEDIACTL_TEST_SEAWEEDFS and its key pair. Without it the test is
// skipped, except on CI (CI=true) where it fails.
func TestSeaweedFS(t *testing.T) {
	srv := storetest.SeaweedFS(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return openT(t, srv.Bucket(t, "conformance"))
	})
}

// TestSeaweedFSMultipart writes a 20 MiB blob, which the S3 driver uploads in
// parts, with a sha256 in its metadata, and checks what Stat reports: the size, the
// metadata, and an MD5 that is either absent (multipart ETag) or right. It then
// checks that a conditional Put of an existing key is refused with ErrExist and
// leaves the blob alone, for a multipart and for a single-request upload.
func TestSeaweedFSMultipart(t *testing.T) {
	srv := storetest.SeaweedFS(t)
	s := openT(t, srv.Bucket(t, "multipart"))
	defer s.Close()

	data := make([]byte, 20<<20)
	rand.Read(data)
	digest := sha256.Sum256(data)
	sum := hex.EncodeToString(digest[:])
	key := sum + ".bin"
	opts := store.PutOptions{ContentType: "application/octet-stream", Metadata: map[string]string{"sha256": sum}, IfNotExist: true}
	if err := s.Put(ctx, key, bytes.NewReader(data), opts); err != nil {
		t.Fatal(err)
	}
	e, err := s.Stat(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if e.Size != int64(len(data)) || e.Metadata["sha256"] != sum {
		t.Errorf("Stat = size %d, metadata %v; want %d, sha256=%s", e.Size, e.Metadata, len(data), sum)
	}
	if m := md5.Sum(data); e.MD5 != nil && !bytes.Equal(e.MD5, m[:]) {
		t.Errorf("Stat MD5 = %x, want none (multipart upload) or %x", e.MD5, m)
	}
	t.Logf("Stat of a 20 MiB multipart upload: MD5 %x", e.MD5)

	small := []byte("a small blob")
	if err := s.Put(ctx, "small", bytes.NewReader(small), store.PutOptions{IfNotExist: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  string
		data []byte
	}{{key, data}, {"small", small}} {
		replacement := bytes.Repeat([]byte{'x'}, len(c.data))
		err := s.Put(ctx, c.key, bytes.NewReader(replacement), store.PutOptions{IfNotExist: true})
		if !errors.Is(err, store.ErrExist) {
			t.Errorf("Put(%s, %d bytes, IfNotExist) on an existing key = %v, want ErrExist", c.key, len(c.data), err)
		}
		r, err := s.Open(ctx, c.key)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, c.data) {
			t.Errorf("%s after the refused Put: %d bytes (%v), not the %d written first", c.key, len(got), err, len(c.data))
		}
	}
}
