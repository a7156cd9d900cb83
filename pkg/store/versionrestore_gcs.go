package store

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
)

// gcsRestoreVersion brings key back on GCS from its noncurrent generation
// (object versioning): the generation with the recorded ETag (or size and
// update time), the newest of several, copied on the service's side onto
// the key on condition that the key holds no live object (DoesNotExist, the
// request's ifGenerationMatch=0). Soft-deleted objects are not looked at.
// With want.From the generations are those of the trashed copy, its live
// one among them, and the copy is made onto key.
func (s *BucketStore) gcsRestoreVersion(ctx context.Context, key string, want Version) (Version, error) {
	var c *storage.Client
	if !s.b.As(&c) {
		return Version{}, fmt.Errorf("store %s: restore a version: the GCS driver offers no client", s.location)
	}
	full := s.prefix + key
	src, err := s.versionSource(key, want)
	if err != nil {
		return Version{}, err
	}
	b := c.Bucket(s.name)
	if _, err := b.Object(full).Attrs(ctx); err == nil {
		return Version{}, s.errorf("restore a version of", key, fmt.Errorf("%w: a live object holds the key", ErrExist))
	} else if !errors.Is(err, storage.ErrObjectNotExist) {
		return Version{}, s.errorf("restore a version of", key, err)
	}
	var found Version
	it := b.Objects(ctx, &storage.Query{Prefix: src, Versions: true})
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return Version{}, s.errorf("restore a version of", key, err)
		}
		if a.Name != src || a.Size != want.Size {
			continue
		}
		match := withinSecond(a.Updated, want.ModTime)
		if want.ETag != "" {
			match = sameETag(a.Etag, want.ETag)
		}
		if match && (found.ID == "" || a.Generation > found.generation) {
			found = Version{Size: a.Size, ModTime: a.Updated, ETag: a.Etag, ID: fmt.Sprint(a.Generation), generation: a.Generation}
		}
	}
	if found.ID == "" {
		return Version{}, s.errorf("restore a version of", key, ErrNoVersion)
	}
	dst := b.Object(full).If(storage.Conditions{DoesNotExist: true})
	if _, err := dst.CopierFrom(b.Object(src).Generation(found.generation)).Run(ctx); err != nil {
		var ge *googleapi.Error
		switch {
		case errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed:
			err = fmt.Errorf("%w: uploaded since it was looked at: %w", ErrExist, err)
		case errors.Is(err, storage.ErrObjectNotExist), errors.As(err, &ge) && ge.Code == http.StatusNotFound:
			err = fmt.Errorf("%w (generation %d, gone since it was listed): %w", ErrNoVersion, found.generation, err)
		}
		return Version{}, s.errorf("restore a version of", key, err)
	}
	found.generation, found.From = 0, want.From
	return found, nil
}
