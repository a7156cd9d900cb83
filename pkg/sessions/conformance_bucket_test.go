package sessions_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest/conformance"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// The session conformance suite on a bucket of session objects: file://
// and S3 (gofakes3, in process). A bucket is read, not rewritten: the
// rewrite cases skip.

func TestConformanceBucketFile(t *testing.T) {
	conformance.Run(t, bucketFixture(func(t *testing.T) string {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(t.TempDir()), RawQuery: "metadata=skip"}).String()
	}))
}

func TestConformanceBucketS3(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	conformance.Run(t, bucketFixture(func(t *testing.T) string {
		var b [4]byte
		rand.Read(b[:])
		return srv.Bucket(t, "sessions-"+hex.EncodeToString(b[:]))
	}))
}

// bucketFixture keeps unit i as the object "sessions/<id>.json" (the last
// ones below "sessions/archive/") of a new bucket, and reads the bucket
// below "sessions/", as a runtime that keeps its sessions under a prefix.
func bucketFixture(newBucket func(t *testing.T) string) conformance.Factory {
	return func(t *testing.T, units []conformance.Unit) *conformance.Fixture {
		ctx := context.Background()
		bucket := newBucket(t)
		st, err := store.Open(ctx, bucket)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		spec := withPrefix(t, bucket, "sessions/")
		src, err := sessions.Open(ctx, spec, sessions.Options{})
		if err != nil {
			t.Fatal(err)
		}
		source := src.String()
		src.Close()
		put := func(t testing.TB, key string, b []byte) {
			if err := st.Put(ctx, "sessions/"+key, bytes.NewReader(b), store.PutOptions{Size: int64(len(b)), ContentType: "application/json"}); err != nil {
				t.Fatal(err)
			}
		}
		fx := &conformance.Fixture{
			Spec:   spec,
			Counts: sessions.Counts{Documents: int64(len(units))},
			Read: func(t testing.TB, p ref.Place) []byte {
				r, err := st.Open(ctx, "sessions/"+p.Document)
				if errors.Is(err, store.ErrNotExist) {
					return nil
				}
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				b, err := io.ReadAll(r)
				if err != nil {
					t.Fatal(err)
				}
				return b
			},
			Write: func(t testing.TB, units map[ref.Place][]byte) {
				for p, b := range units {
					put(t, p.Document, b)
				}
			},
		}
		for i, u := range units {
			key := unitName(i, len(units), units, ".json")
			put(t, key, []byte(u.JSON))
			fx.Places = append(fx.Places, ref.Place{Source: source, Document: key})
		}
		folderExclusion(fx, units, ".json")
		fx.ExcludedCount = 1 + archived // a bucket has no folders: each object below one counts
		return fx
	}
}

// withPrefix adds prefix=P to a bucket URL.
func withPrefix(t *testing.T, bucket, prefix string) string {
	u, err := url.Parse(bucket)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("prefix", prefix)
	u.RawQuery = q.Encode()
	return u.String()
}
