package sessions

import (
	"context"
	"fmt"
	"io"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/fileblob"  // file://
	_ "gocloud.dev/blob/gcsblob"   // gs://
	_ "gocloud.dev/blob/memblob"   // mem://
	_ "gocloud.dev/blob/s3blob"    // s3://

	"github.com/mediactl/mediactl/pkg/ref"
)

// bucketPageSize is how many keys one listing call asks for.
const bucketPageSize = 1000

// bucketSource reads session documents from a gocloud.dev/blob bucket. Objects
// are listed page by page, in key order, as a flat namespace; every key ending in
// .json, .jsonl or .ndjson is a document (Place.Document is the key), keys ending
// in .tmp are counted as skipped, and other objects are ignored.
type bucketSource struct {
	spec   string
	bucket *blob.Bucket
	// ctx lives until Close: an Item's Open may run after Walk returned.
	ctx    context.Context
	cancel context.CancelFunc
}

func openBucket(ctx context.Context, spec string) (Source, error) {
	b, err := blob.OpenBucket(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("open bucket %s: %w", redactURL(spec), err)
	}
	return newBucketSource(redactURL(spec), b), nil
}

// newBucketSource reads an open bucket; the source closes it.
func newBucketSource(spec string, b *blob.Bucket) *bucketSource {
	ctx, cancel := context.WithCancel(context.Background())
	return &bucketSource{spec: spec, bucket: b, ctx: ctx, cancel: cancel}
}

func (s *bucketSource) String() string { return s.spec }

func (s *bucketSource) Close() error {
	s.cancel()
	return s.bucket.Close()
}

func (s *bucketSource) Walk(ctx context.Context, fn func(Item) error) (Counts, error) {
	var c Counts
	token := blob.FirstPageToken
	for len(token) > 0 {
		page, next, err := s.bucket.ListPage(ctx, token, bucketPageSize, nil)
		if err != nil {
			return c, fmt.Errorf("list objects of %s: %w", s.spec, err)
		}
		for _, obj := range page {
			key := obj.Key
			switch {
			case obj.IsDir:
				continue
			case strings.HasSuffix(key, ".tmp"):
				c.Skipped++
				continue
			case !documentExt(key):
				continue
			}
			c.Documents++
			if err := fn(Item{
				Place: ref.Place{Source: s.spec, Document: key, Offset: -1},
				Size:  obj.Size,
				Open:  func() (io.ReadCloser, error) { return s.bucket.NewReader(s.ctx, key, nil) },
			}); err != nil {
				return c, err
			}
		}
		token = next
	}
	return c, nil
}
