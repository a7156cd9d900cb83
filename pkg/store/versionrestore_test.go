package store_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestRestoreVersionS3 restores blobs deleted from a versioned bucket on
// gofakes3 (in-process, the S3 protocol on 127.0.0.1): by the recorded ETag
// and, without one, by size and modification time; a key uploaded again is
// not replaced; a version removed meanwhile, and a blob deleted from a
// bucket that never kept versions, are ErrNoVersion.
func TestRestoreVersionS3(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	var n atomic.Int64
	bs := openBucketT(t, srv.Bucket(t, uniqueName("versions", n.Add(1))))
	c := s3Client(t, bs)
	setS3Versioning(t, c, bs.Name(), s3types.BucketVersioningStatusEnabled)
	vr, ok := store.AsVersionRestorer(bs)
	if !ok {
		t.Fatal("an S3 bucket store does not restore versions")
	}
	deleted := func(key, content string) store.Version {
		t.Helper()
		if err := bs.Put(ctx, key, strings.NewReader(content), store.PutOptions{ContentType: "image/png", Metadata: map[string]string{"sha256": "abc"}}); err != nil {
			t.Fatal(err)
		}
		e, err := bs.Stat(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := bs.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		return store.Version{Size: e.Size, ModTime: e.ModTime, ETag: e.ETag}
	}

	// Two writes of one key: the record names the first.
	first := deleted("a.png", "first bytes")
	_ = deleted("a.png", "second, longer bytes")
	got, err := vr.RestoreVersion(ctx, "a.png", first)
	if err != nil {
		t.Fatalf("RestoreVersion: %v", err)
	}
	if got.ID == "" || !strings.Contains(got.ETag, strings.Trim(first.ETag, `"`)) {
		t.Errorf("restored version %+v, want the first write's ETag %s", got, first.ETag)
	}
	e, err := bs.Stat(ctx, "a.png")
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, bs, "a.png") != "first bytes" || e.ETag != first.ETag || e.ContentType != "image/png" || e.Metadata["sha256"] != "abc" {
		t.Errorf("restored a.png: %q, %+v; want the first bytes, ETag %s, its type and metadata", readAll(t, bs, "a.png"), e, first.ETag)
	}

	// Restored again: the key holds a blob, which stays.
	if _, err := vr.RestoreVersion(ctx, "a.png", first); !errors.Is(err, store.ErrExist) {
		t.Errorf("RestoreVersion over a current blob: %v, want ErrExist", err)
	}

	// Without an ETag in the record: size and time pick it.
	b := deleted("b.png", "b bytes")
	if _, err := vr.RestoreVersion(ctx, "b.png", store.Version{Size: b.Size, ModTime: b.ModTime}); err != nil || readAll(t, bs, "b.png") != "b bytes" {
		t.Errorf("RestoreVersion by size and time: %v", err)
	}

	// Uploaded again after the delete: not replaced.
	r := deleted("r.png", "old")
	if err := bs.Put(ctx, "r.png", strings.NewReader("new upload"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vr.RestoreVersion(ctx, "r.png", r); !errors.Is(err, store.ErrExist) || readAll(t, bs, "r.png") != "new upload" {
		t.Errorf("RestoreVersion over an upload since: %v, holds %q", err, readAll(t, bs, "r.png"))
	}

	// The version removed meanwhile.
	p := deleted("p.png", "purged")
	vs, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bs.Name()), Prefix: aws.String("p.png")})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs.Versions {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bs.Name()), Key: v.Key, VersionId: v.VersionId}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := vr.RestoreVersion(ctx, "p.png", p); !errors.Is(err, store.ErrNoVersion) {
		t.Errorf("RestoreVersion of a removed version: %v, want ErrNoVersion", err)
	}
	// A key that is a prefix of another's: only its own versions count.
	_ = deleted("p.png.json", "purged")
	if _, err := vr.RestoreVersion(ctx, "p.png", p); !errors.Is(err, store.ErrNoVersion) {
		t.Errorf("RestoreVersion took a version of a longer key: %v", err)
	}

	// A bucket that never kept versions.
	plain := openBucketT(t, srv.Bucket(t, uniqueName("plain", n.Add(1))))
	if err := plain.Put(ctx, "x.png", strings.NewReader("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	x, _ := plain.Stat(ctx, "x.png")
	if err := plain.Delete(ctx, "x.png"); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.RestoreVersion(ctx, "x.png", store.Version{Size: x.Size, ModTime: x.ModTime, ETag: x.ETag}); !errors.Is(err, store.ErrNoVersion) {
		t.Errorf("RestoreVersion on a bucket without versions: %v, want ErrNoVersion", err)
	}
}

// TestRestoreVersionGCS restores a blob deleted from a GCS bucket with
// object versioning (fake-gcs-server, in-process) from its noncurrent
// generation; a key uploaded again is not replaced; a bucket without
// versioning keeps no generation.
func TestRestoreVersionGCS(t *testing.T) {
	srv := storetest.StartGCS(t)
	var n atomic.Int64
	bs := openBucketT(t, srv.Bucket(t, uniqueName("versions", n.Add(1))))
	var c *storage.Client
	if !bs.Blob().As(&c) {
		t.Fatal("the gs bucket does not expose *storage.Client")
	}
	if _, err := c.Bucket(bs.Name()).Update(ctx, storage.BucketAttrsToUpdate{VersioningEnabled: true}); err != nil {
		t.Fatal(err)
	}
	deleted := func(st *store.BucketStore, key, content string) store.Version {
		t.Helper()
		if err := st.Put(ctx, key, strings.NewReader(content), store.PutOptions{ContentType: "image/png"}); err != nil {
			t.Fatal(err)
		}
		e, err := st.Stat(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		return store.Version{Size: e.Size, ModTime: e.ModTime, ETag: e.ETag}
	}
	first := deleted(bs, "g/a.png", "first bytes")
	_ = deleted(bs, "g/a.png", "second, longer bytes")
	got, err := bs.RestoreVersion(ctx, "g/a.png", first)
	if err != nil {
		t.Fatalf("RestoreVersion: %v", err)
	}
	if got.ID == "" || readAll(t, bs, "g/a.png") != "first bytes" {
		t.Errorf("restored %+v holding %q, want the first bytes", got, readAll(t, bs, "g/a.png"))
	}
	if _, err := bs.RestoreVersion(ctx, "g/a.png", first); !errors.Is(err, store.ErrExist) {
		t.Errorf("RestoreVersion over a live object: %v, want ErrExist", err)
	}
	b := deleted(bs, "g/b.png", "b bytes")
	if _, err := bs.RestoreVersion(ctx, "g/b.png", store.Version{Size: b.Size, ModTime: b.ModTime}); err != nil || readAll(t, bs, "g/b.png") != "b bytes" {
		t.Errorf("RestoreVersion by size and time: %v", err)
	}

	plain := openBucketT(t, srv.Bucket(t, uniqueName("plain", n.Add(1))))
	x := deleted(plain, "x.png", "x")
	if _, err := plain.RestoreVersion(ctx, "x.png", x); !errors.Is(err, store.ErrNoVersion) {
		t.Errorf("RestoreVersion on a bucket without versioning: %v, want ErrNoVersion", err)
	}
}

// TestRestoreVersionUnsupported: an in-memory bucket answers that restoring
// versions is not implemented there, and changes nothing.
func TestRestoreVersionUnsupported(t *testing.T) {
	bs := openBucketT(t, "mem://")
	var unsupported *store.VersionRestoreUnsupportedError
	if _, err := bs.RestoreVersion(ctx, "a.png", store.Version{Size: 1}); !errors.As(err, &unsupported) || unsupported.Scheme != "mem" {
		t.Errorf("RestoreVersion on mem://: %v, want a VersionRestoreUnsupportedError for mem", err)
	}
}
