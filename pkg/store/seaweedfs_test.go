package store_test

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
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
// metadata, and an MD5 that is either absent (multipart ETag) or right, and
// present as ReportsMD5 says, as it is for a small blob. It then
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
	t.Logf("Stat of a 20 MiB multipart upload: MD5 %x, ETag %s", e.MD5, e.ETag)
	bs, ok := s.(*store.BucketStore)
	if !ok {
		t.Fatalf("Open(s3://...) = %T, want *store.BucketStore", s)
	}
	// The range listing, which stands in for a Stat each when gc checks a
	// batch before its delete, gives a multipart upload's tag as Stat does
	// (not, say, the whole content's MD5), so that the check keeps nothing
	// for it and a deleted run's record finds its version by it.
	var listed []store.Entry
	if err := bs.ListRange(ctx, key, key, func(le store.Entry) error { listed = append(listed, le); return nil }); err != nil {
		t.Fatal(err)
	}
	if e.ETag == "" || len(listed) != 1 || listed[0].ETag != e.ETag {
		t.Errorf("ListRange of the multipart upload: %+v; want its ETag as Stat gives it, %q", listed, e.ETag)
	}
	// ReportsMD5 lets callers skip computing an MD5 Stat will not report;
	// it must agree with what the real service does.
	if got, want := e.MD5 != nil, bs.ReportsMD5(int64(len(data))); got != want {
		t.Errorf("Stat of a %d-byte upload reports an MD5: %v; ReportsMD5 says %v", len(data), got, want)
	}

	// Stated, the size takes the small blob up in one request from memory.
	small := []byte("a small blob")
	if err := s.Put(ctx, "small", bytes.NewReader(small), store.PutOptions{IfNotExist: true, Size: int64(len(small))}); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Stat(ctx, "small"); err != nil {
		t.Fatal(err)
	} else if m := md5.Sum(small); !bytes.Equal(e.MD5, m[:]) {
		t.Errorf("Stat MD5 of a single-request upload = %x, want %x", e.MD5, m)
	} else if !bs.ReportsMD5(int64(len(small))) {
		t.Errorf("the service reports an MD5 for a %d-byte upload; ReportsMD5 says it does not", len(small))
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

// TestSeaweedFSPayloadSHA256 checks PutOptions.SHA256 on a real S3 service:
// with CallerVerifies the upload is signed with the given digest (not one the
// SDK computes from the bytes), so the service rejects bytes that do not match
// it and stores nothing, and accepts bytes that do. Without CallerVerifies
// (the SDK adds its checksum), and in parts, matching uploads still go through.
func TestSeaweedFSPayloadSHA256(t *testing.T) {
	srv := storetest.SeaweedFS(t)
	s := openT(t, srv.Bucket(t, "payload"))
	defer s.Close()

	hexSum := func(b []byte) string { d := sha256.Sum256(b); return hex.EncodeToString(d[:]) }
	small := []byte("the bytes the digest was computed from")
	other := []byte("other bytes, of another digest, sent")
	large := make([]byte, 17<<20) // above the transfer manager's multipart threshold
	rand.Read(large)

	for _, c := range []struct {
		name   string
		data   []byte
		sum    string
		caller bool // CallerVerifies: the bucket without request checksums
		ok     bool
	}{
		{"matching", small, hexSum(small), false, true},
		{"matching, caller verifies", small, hexSum(small), true, true},
		{"matching, upper-case hex", small, strings.ToUpper(hexSum(small)), true, true},
		{"different bytes, caller verifies", other, hexSum(small), true, false},
		{"multipart", large, hexSum(large), false, true},
		{"not a digest", small, "abc", false, false},
	} {
		for _, size := range []int64{0, int64(len(c.data))} { // stated, a small content goes up from memory
			name := fmt.Sprintf("%s, size %d", c.name, size)
			t.Run(name, func(t *testing.T) {
				key := strings.ReplaceAll(name, " ", "-")
				key = strings.ReplaceAll(key, ",", "")
				err := s.Put(ctx, key, bytes.NewReader(c.data), store.PutOptions{SHA256: c.sum, CallerVerifies: c.caller, Size: size})
				_, statErr := s.Stat(ctx, key)
				if c.ok {
					if err != nil || statErr != nil {
						t.Fatalf("Put with the content's digest = %v; Stat = %v", err, statErr)
					}
					r, err := s.Open(ctx, key)
					if err != nil {
						t.Fatal(err)
					}
					got, err := io.ReadAll(r)
					r.Close()
					if err != nil || !bytes.Equal(got, c.data) {
						t.Errorf("read back %d bytes (%v), want the %d written", len(got), err, len(c.data))
					}
					return
				}
				if err == nil {
					t.Fatalf("Put of bytes whose sha256 is not %s succeeded", c.sum)
				}
				if !errors.Is(statErr, store.ErrNotExist) {
					t.Errorf("after the rejected Put, Stat = %v, want ErrNotExist", statErr)
				}
				t.Logf("rejected: %v", err)
			})
		}
	}
}
