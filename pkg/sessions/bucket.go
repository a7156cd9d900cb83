package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/store"
)

// bucketSource reads session documents from a gocloud.dev/blob bucket. Objects
// are listed in key order, as a flat namespace, and every object is read,
// excluded or reported, by the rules of a sessions folder:
//   - a document: a key whose base name ends, in any letter case, in .json,
//     .jsonl or .ndjson, optionally followed by .gz or .zst/.zstd (decompressed
//     by Item.Open); a 0-byte .json object is a problem;
//   - a leftover "<document>.tmp" is read as one (Item.Leftover), unless its
//     document was listed just before it (key order puts "t-1.json" right
//     before "t-1.json.tmp"): then it is an update never renamed, skipped;
//   - a key matching Options.Exclude, or below a folder that matches it, is
//     counted in Counts.Excluded;
//   - every other object, and in a file:// bucket every entry that is not a
//     regular file (a symbolic link, which fileblob does not follow), is an
//     Item with Err of type [*UnreadError], so that a run that did not read
//     it is incomplete.
type bucketSource struct {
	spec string // the bucket's Location: the URL without secrets, with its prefix
	// bucket is confined to the URL's prefix. It is listed by the store's
	// ListEvery: a file:// bucket by a walk of its folder in key order that
	// fails on a folder it cannot read and names what is not a regular file
	// (fileblob's own listing pages by key but walks folders in their order,
	// so it dropped "t-1/…" keys after "t-1.json", and it passes over
	// folders it cannot read and a linked bucket folder without a word).
	bucket  *store.BucketStore
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
	src := newBucketSource(bs)
	src.exclude = exclude
	return src, nil
}

// newBucketSource reads an open bucket; the source closes it.
func newBucketSource(bs *store.BucketStore) *bucketSource {
	ctx, cancel := context.WithCancel(context.Background())
	return &bucketSource{spec: bs.Location(), bucket: bs, ctx: ctx, cancel: cancel}
}

func (s *bucketSource) String() string { return s.spec }

func (s *bucketSource) Close() error {
	s.cancel()
	return s.bucket.Close()
}

// recentDocs is how many of the last listed documents a leftover is compared
// with: its document sorts right before it, with at most a few compressed
// siblings ("t-1.json.gz") in between.
const recentDocs = 8

// inExcludedFolder reports whether a folder of key ("a" and "a/b" of
// "a/b/c.json") matches an exclude pattern, as a sessions folder does not
// enter an excluded folder: each object below it is excluded.
func inExcludedFolder(patterns []string, key string) bool {
	for i := range len(key) {
		if key[i] == '/' && excludedBy(patterns, key[:i], path.Base(key[:i])) {
			return true
		}
	}
	return false
}

func (s *bucketSource) Walk(ctx context.Context, fn func(Item) error) (Counts, error) {
	var c Counts
	var recent []string
	err := s.bucket.ListEvery(ctx, "", func(obj store.Entry) error {
		key := obj.Key
		name := path.Base(key)
		place := ref.Place{Source: s.spec, Document: key, Offset: -1}
		if excludedBy(s.exclude, key, name) || inExcludedFolder(s.exclude, key) {
			c.Excluded++
			return nil
		}
		f, isDoc := documentFormat(name)
		leftover := false
		if !isDoc {
			f, leftover = leftoverFormat(name)
		}
		var item Item
		switch {
		case !obj.Regular():
			c.Unread++
			item = Item{Place: place, Size: -1, Err: &UnreadError{Path: key, Reason: irregularObject(obj.Mode)}}
		case !isDoc && !leftover:
			c.Unread++
			item = Item{Place: place, Size: -1, Err: &UnreadError{Path: key, Reason: reasonNotDocument}}
		case leftover && slices.Contains(recent, key[:len(key)-len(".tmp")]):
			c.Skipped++
			return nil
		case leftover && obj.Size == 0:
			c.Leftovers++
			return nil
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
				// Through the store: a file:// bucket's file is opened
				// confined to its folder (no link followed, a FIFO refused),
				// never by fileblob's reader.
				r, _, err := s.bucket.OpenObject(s.ctx, key)
				if err != nil {
					return nil, err
				}
				return decompress(r, f, key)
			}}
		}
		if err := fn(item); err != nil {
			return &callbackError{err}
		}
		return nil
	})
	var cb *callbackError
	if errors.As(err, &cb) {
		return c, cb.err
	}
	if err != nil {
		return c, fmt.Errorf("list objects of %s: %w", s.spec, err)
	}
	return c, nil
}

// callbackError carries an error of Walk's fn through the listing, which
// returns it as it is: it is returned unwrapped, a listing's own error with
// the bucket named.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

// irregularObject says why an entry of a file:// bucket that is not a regular
// file was not read: fileblob follows no link in the bucket's folder, and
// reads nothing else.
func irregularObject(m fs.FileMode) string {
	if m&fs.ModeSymlink != 0 {
		return "a symbolic link: a file:// bucket's links are not followed (give the folder as a path, whose links are, or its target as a source of its own)"
	}
	return fileTypeName(m)
}
