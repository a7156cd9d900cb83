package sessions

import (
	"context"
	"fmt"
	"io"
	"path"
	"slices"

	"gocloud.dev/blob"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/store"
)

// bucketPageSize is how many keys one listing call asks for.
const bucketPageSize = 1000

// bucketSource reads session documents from a gocloud.dev/blob bucket. Objects
// are listed page by page, in key order, as a flat namespace, and every object
// is read, excluded or reported, by the rules of a sessions folder:
//   - a document: a key whose base name ends, in any letter case, in .json,
//     .jsonl or .ndjson, optionally followed by .gz or .zst/.zstd (decompressed
//     by Item.Open); a 0-byte .json object is a problem;
//   - a leftover "<document>.tmp" is read as one (Item.Leftover), unless its
//     document was listed just before it (key order puts "t-1.json" right
//     before "t-1.json.tmp"): then it is an update never renamed, skipped;
//   - a key matching Options.Exclude is counted in Counts.Excluded;
//   - every other object is an Item with Err of type [*UnreadError], so that a
//     run that did not read it is incomplete.
type bucketSource struct {
	spec   string       // the bucket's Location: the URL without secrets, with its prefix
	bucket *blob.Bucket // confined to the URL's prefix
	// close releases the bucket and what was opened with it (the store's
	// second S3 client).
	close   func() error
	exclude []string
	// ctx lives until Close: an Item's Open may run after Walk returned.
	ctx    context.Context
	cancel context.CancelFunc
}

// openBucket opens spec through the store's bucket opener, so that a session
// bucket URL means what the same URL means as a store: the same schemes,
// parameters and credentials, and a prefix ("s3://bucket/sessions/",
// "?prefix=sessions/") that confines the source to the keys below it.
func openBucket(ctx context.Context, spec string, exclude []string) (Source, error) {
	if err := checkExclude(exclude); err != nil {
		return nil, usagef("%v", err)
	}
	bs, err := store.OpenBucket(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("session source: %w", err)
	}
	src := newBucketSource(bs.Location(), bs.Blob())
	src.close = bs.Close
	src.exclude = exclude
	return src, nil
}

// newBucketSource reads an open bucket, named spec in places and messages;
// the source closes it.
func newBucketSource(spec string, b *blob.Bucket) *bucketSource {
	ctx, cancel := context.WithCancel(context.Background())
	return &bucketSource{spec: spec, bucket: b, close: b.Close, ctx: ctx, cancel: cancel}
}

func (s *bucketSource) String() string { return s.spec }

func (s *bucketSource) Close() error {
	s.cancel()
	return s.close()
}

// recentDocs is how many of the last listed documents a leftover is compared
// with: its document sorts right before it, with at most a few compressed
// siblings ("t-1.json.gz") in between.
const recentDocs = 8

func (s *bucketSource) Walk(ctx context.Context, fn func(Item) error) (Counts, error) {
	var c Counts
	var recent []string
	token := blob.FirstPageToken
	for len(token) > 0 {
		page, next, err := s.bucket.ListPage(ctx, token, bucketPageSize, nil)
		if err != nil {
			return c, fmt.Errorf("list objects of %s: %w", s.spec, err)
		}
		for _, obj := range page {
			if obj.IsDir {
				continue
			}
			key := obj.Key
			name := path.Base(key)
			place := ref.Place{Source: s.spec, Document: key, Offset: -1}
			if excludedBy(s.exclude, key, name) {
				c.Excluded++
				continue
			}
			f, isDoc := documentFormat(name)
			leftover := false
			if !isDoc {
				f, leftover = leftoverFormat(name)
			}
			var item Item
			switch {
			case !isDoc && !leftover:
				c.Unread++
				item = Item{Place: place, Size: -1, Err: &UnreadError{Path: key, Reason: reasonNotDocument}}
			case leftover && slices.Contains(recent, key[:len(key)-len(".tmp")]):
				c.Skipped++
				continue
			case leftover && obj.Size == 0:
				c.Leftovers++
				continue
			case obj.Size == 0 && (f.oneJSON || f.comp != plain):
				item = Item{Place: place, Size: -1, Err: fmt.Errorf("%s: %w", key, errEmptyJSON)}
			default:
				if leftover {
					c.Leftovers++
				} else {
					c.Documents++
					if len(recent) == recentDocs {
						recent = recent[1:]
					}
					if obj.Size > 0 {
						recent = append(recent, key)
					}
				}
				size := obj.Size
				if f.comp != plain {
					size = -1
				}
				item = Item{Place: place, Size: size, Leftover: leftover, Open: func() (io.ReadCloser, error) {
					r, err := s.bucket.NewReader(s.ctx, key, nil)
					if err != nil {
						return nil, err
					}
					return decompress(r, f, key)
				}}
			}
			if err := fn(item); err != nil {
				return c, err
			}
		}
		token = next
	}
	return c, nil
}
