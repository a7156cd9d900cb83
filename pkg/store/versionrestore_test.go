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

// TestRestoreVersionFromTrashedCopy: a blob whose trashed copy (an internal
// file, "trash/RUN/KEY") was deleted for good from a versioned bucket comes
// back to its own key from the copy's version (Version.From), by the ETag
// the internal listing gave and, without one, by size and time, with its
// bytes, type and metadata; the copy's key stays empty. A key that holds a
// blob again is ErrExist, a copy with no version left ErrNoVersion. On
// gofakes3 (S3) and fake-gcs-server (GCS), both in-process.
func TestRestoreVersionFromTrashedCopy(t *testing.T) {
	var n atomic.Int64
	s3srv := storetest.StartS3(t, nil)
	gcssrv := storetest.StartGCS(t)
	for _, tc := range []struct {
		name    string
		open    func() *store.BucketStore
		version func(bs *store.BucketStore)
	}{
		{"s3", func() *store.BucketStore { return openBucketT(t, s3srv.Bucket(t, uniqueName("trashed", n.Add(1)))) }, func(bs *store.BucketStore) {
			setS3Versioning(t, s3Client(t, bs), bs.Name(), s3types.BucketVersioningStatusEnabled)
		}},
		{"gcs", func() *store.BucketStore { return openBucketT(t, gcssrv.Bucket(t, uniqueName("trashed", n.Add(1)))) }, func(bs *store.BucketStore) {
			var c *storage.Client
			if !bs.Blob().As(&c) {
				t.Fatal("the gs bucket does not expose *storage.Client")
			}
			if _, err := c.Bucket(bs.Name()).Update(ctx, storage.BucketAttrsToUpdate{VersioningEnabled: true}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs := tc.open()
			tc.version(bs)
			// trashed puts key, copies it into a trash run as gc's copy
			// trash does, deletes the key, then purges the copy; it returns
			// the copy as the internal listing described it.
			trashed := func(key, content string) store.Version {
				t.Helper()
				if err := bs.Put(ctx, key, strings.NewReader(content), store.PutOptions{ContentType: "image/png", Metadata: map[string]string{"sha256": "abc"}}); err != nil {
					t.Fatal(err)
				}
				name := "trash/20260101T000000Z-1/" + key
				if err := bs.CopyToInternal(ctx, key, name); err != nil {
					t.Fatal(err)
				}
				if err := bs.Delete(ctx, key); err != nil {
					t.Fatal(err)
				}
				var listed []store.Entry
				if err := bs.ListInternal(ctx, name, func(e store.Entry) error { listed = append(listed, e); return nil }); err != nil || len(listed) != 1 {
					t.Fatalf("the copy listed as %+v, %v", listed, err)
				}
				if err := bs.DeleteInternal(ctx, name); err != nil {
					t.Fatal(err)
				}
				e := listed[0]
				return store.Version{Size: e.Size, ModTime: e.ModTime, ETag: e.ETag, From: name}
			}
			a := trashed("u/a.png", "the bytes of a")
			if tc.name == "s3" && a.ETag == "" {
				t.Error("the internal listing of S3 gave the copy no ETag")
			}
			got, err := bs.RestoreVersion(ctx, "u/a.png", a)
			if err != nil {
				t.Fatalf("RestoreVersion from the trashed copy: %v", err)
			}
			if got.From != a.From || readAll(t, bs, "u/a.png") != "the bytes of a" {
				t.Errorf("restored %+v holding %q", got, readAll(t, bs, "u/a.png"))
			}
			if e, err := bs.Stat(ctx, "u/a.png"); err != nil || e.ContentType != "image/png" || e.Metadata["sha256"] != "abc" {
				t.Errorf("the restored blob: %+v, %v; want its type and metadata", e, err)
			}
			if rc, err := bs.OpenInternal(ctx, a.From); err == nil {
				rc.Close()
				t.Errorf("the trashed copy %s is back too", a.From)
			}
			if _, err := bs.RestoreVersion(ctx, "u/a.png", a); !errors.Is(err, store.ErrExist) {
				t.Errorf("RestoreVersion onto a key that holds a blob: %v, want ErrExist", err)
			}

			b := trashed("u/b.png", "the bytes of b")
			if _, err := bs.RestoreVersion(ctx, "u/b.png", store.Version{Size: b.Size, ModTime: b.ModTime, From: b.From}); err != nil || readAll(t, bs, "u/b.png") != "the bytes of b" {
				t.Errorf("RestoreVersion from the copy by size and time: %v", err)
			}

			c := trashed("u/c.png", "the bytes of c")
			c.From = "trash/20260101T000000Z-1/u/other.png" // no such copy was ever made
			if _, err := bs.RestoreVersion(ctx, "u/c.png", c); !errors.Is(err, store.ErrNoVersion) {
				t.Errorf("RestoreVersion from a copy with no version: %v, want ErrNoVersion", err)
			}
			if _, err := bs.Stat(ctx, "u/c.png"); !errors.Is(err, store.ErrNotExist) {
				t.Errorf("u/c.png after a refused restore: %v", err)
			}
		})
	}
}
