package store

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// VersionRestorer brings a deleted blob back from what the bucket's service
// keeps of it (S3 versioning): gc restore of a run whose blobs a bucket with
// versions deleted for good.
//
// RestoreVersion finds, among the versions the service keeps of key (that
// very key, not the keys it is a prefix of), the one a record of its delete
// describes — the same ETag, or, when the record has none, the same size and
// a modification time within the same second; the newest of several — and
// makes it the key's current content again. It never replaces anything: a
// key that holds a blob again (a runtime uploaded it since the delete) is an
// error wrapping ErrExist, also when the upload comes between the look and
// the write (the write is conditional, If-None-Match). A key whose version
// the service no longer keeps (expired, or removed by someone) is an error
// wrapping ErrNoVersion. It returns the version it brought back.
//
// Version.From, when set, names the internal file (a trashed copy of key,
// as Internal names it) whose versions hold the blob: the version is found
// among From's versions, as above, and brought back to key, never to From.
// From's current object, if it has one, is a version like the others (the
// copy was not deleted after all: bringing its bytes back to key is no
// loss, and leaves it where it is).
//
// On S3 the version is read (GetObject of its version id) and written again
// as the key's new current version, with its content type and metadata, on
// condition that the key holds nothing, its MD5 checked against the ETag of
// a single-part upload while it streams: the bytes pass through this
// process, and the noncurrent version stays, billed, until it expires. On
// GCS the noncurrent generation is copied on the service's side, on
// condition that the key holds no live object; soft-deleted objects are not
// looked at (RestoresKind). A service this package does not restore
// versions on (Azure, a file:// or mem:// bucket) answers every call with a
// *VersionRestoreUnsupportedError.
type VersionRestorer interface {
	RestoreVersion(ctx context.Context, key string, want Version) (Version, error)
}

// Version describes one write of a blob as a record of its delete kept it,
// and, returned by RestoreVersion, the version brought back.
type Version struct {
	Size    int64
	ModTime time.Time
	// ETag is the service's tag for the write ("" when the record has
	// none: then Size and ModTime pick the version).
	ETag string
	// ID is the service's version id (a GCS generation); RestoreVersion
	// fills it in.
	ID string
	// From, when not "", is the internal file whose versions hold the
	// blob (a trashed copy that gc purge deleted), as Internal names it
	// ("trash/RUN/KEY"): RestoreVersion finds the version there and brings
	// it back to its key.
	From string

	generation int64
}

// ErrNoVersion is wrapped by RestoreVersion for a key the service keeps no
// version of that matches the record (expired, removed, or never kept: on a
// bucket whose versioning is suspended, a blob written since is deleted for
// good).
var ErrNoVersion = errors.New("the service keeps no version of it that matches the record")

// VersionRestoreUnsupportedError is RestoreVersion's error on a service whose
// versions or soft-deleted objects this package does not restore: Scheme
// says which ("azblob", "file", "mem"), or Kind, a Recovery… kind, what the
// service keeps that is not restored (RecoveryGCSSoftDelete, say). Nothing
// was changed.
type VersionRestoreUnsupportedError struct {
	Store  string
	Scheme string
	Kind   string
}

func (e *VersionRestoreUnsupportedError) Error() string {
	if e.Kind != "" {
		return fmt.Sprintf("store %s: restoring deleted blobs that the service keeps by %s is not implemented", e.Store, e.Kind)
	}
	return fmt.Sprintf("store %s: restoring deleted blobs from the service's versions is not implemented for %s:// buckets", e.Store, e.Scheme)
}

// RestoresKind reports whether RestoreVersion brings back what a service
// that keeps deleted objects as kind (a Recovery… kind) keeps: S3 versions
// and GCS object versions; not soft-deleted objects, and nothing on Azure.
func RestoresKind(kind string) bool {
	switch kind {
	case RecoveryS3Versioning, RecoveryS3VersioningSuspended, RecoveryGCSVersioning:
		return true
	}
	return false
}

var _ VersionRestorer = (*BucketStore)(nil)

// RestoreVersion brings key back from its kept version; see
// [VersionRestorer].
func (s *BucketStore) RestoreVersion(ctx context.Context, key string, want Version) (Version, error) {
	if err := ValidKey(key); err != nil {
		return Version{}, fmt.Errorf("store %s: restore a version: %w", s.location, err)
	}
	switch s.scheme {
	case "s3":
	case "gs":
		return s.gcsRestoreVersion(ctx, key, want)
	default:
		return Version{}, &VersionRestoreUnsupportedError{Store: s.location, Scheme: s.scheme}
	}
	var c *s3.Client
	if !s.b.As(&c) {
		return Version{}, fmt.Errorf("store %s: restore a version: the S3 driver offers no client", s.location)
	}
	src, err := s.versionSource(key, want)
	if err != nil {
		return Version{}, err
	}
	if want.From != "" {
		// The key's own versions say nothing of whether it holds a blob
		// again: ask, so as not to read bytes the write would refuse.
		if _, err := s.stat(ctx, key); err == nil {
			return Version{}, s.errorf("restore a version of", key, fmt.Errorf("%w: a blob holds the key", ErrExist))
		} else if !errors.Is(err, ErrNotExist) {
			return Version{}, err
		}
	}
	v, err := s.s3FindVersion(ctx, c, src, want)
	if err != nil {
		return Version{}, s.errorf("restore a version of", key, err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.name), Key: aws.String(src), VersionId: aws.String(v.ID)})
	if err != nil {
		if code, status := serviceError(err); code == "NoSuchVersion" || code == "NoSuchKey" || status == http.StatusNotFound {
			err = fmt.Errorf("%w (version %s, gone since it was listed): %w", ErrNoVersion, v.ID, err)
		}
		return Version{}, s.errorf("restore a version of", key, err)
	}
	defer out.Body.Close()
	body := io.Reader(out.Body)
	if sum, ok := plainMD5(v.ETag); ok {
		body = &md5Check{r: out.Body, h: md5.New(), want: sum}
	}
	opts := PutOptions{IfNotExist: true, ContentType: aws.ToString(out.ContentType), Metadata: out.Metadata, Size: v.Size}
	if err := s.put(ctx, key, body, opts); err != nil {
		return Version{}, err
	}
	return v, nil
}

// versionSource is the object, below the bucket's prefix, whose versions
// hold key's blob: key itself, or want.From's internal file.
func (s *BucketStore) versionSource(key string, want Version) (string, error) {
	src := s.prefix + key
	if want.From != "" {
		if err := validInternal(want.From); err != nil {
			return "", fmt.Errorf("store %s: restore a version of %s: %w", s.location, key, err)
		}
		src = s.prefix + internalName(want.From)
	}
	if s3KeyEscaped(s.prefix+key) || s3KeyEscaped(src) || s.scheme == "gs" && (strings.Contains(s.prefix+key, "//") || strings.Contains(src, "//")) {
		// gocloud stores such a key under an escaped name, which the
		// versions carry; this code does not spell it.
		return "", fmt.Errorf("store %s: restore a version of %q: the bucket stores it under an escaped name: restore it by hand", s.location, key)
	}
	return src, nil
}

// s3FindVersion lists the versions and delete markers of full and returns the
// version want describes: ErrExist when the key's current version is an
// object (not a delete marker), ErrNoVersion when none matches. With
// want.From, full is the trashed copy, whose current object is a version
// like the others.
func (s *BucketStore) s3FindVersion(ctx context.Context, c *s3.Client, full string, want Version) (Version, error) {
	var found Version
	p := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(s.name), Prefix: aws.String(full)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return Version{}, err
		}
		for _, v := range page.Versions {
			if aws.ToString(v.Key) != full {
				continue
			}
			if aws.ToBool(v.IsLatest) && want.From == "" {
				return Version{}, fmt.Errorf("%w: version %s is current", ErrExist, aws.ToString(v.VersionId))
			}
			mod := aws.ToTime(v.LastModified)
			size := aws.ToInt64(v.Size)
			tag := aws.ToString(v.ETag)
			match := size == want.Size
			if want.ETag != "" {
				match = match && sameETag(tag, want.ETag)
			} else {
				match = match && withinSecond(mod, want.ModTime)
			}
			if match && (found.ID == "" || mod.After(found.ModTime)) {
				found = Version{Size: size, ModTime: mod, ETag: tag, ID: aws.ToString(v.VersionId)}
			}
		}
	}
	if found.ID == "" {
		return Version{}, ErrNoVersion
	}
	found.From = want.From
	return found, nil
}

// sameETag compares two entity tags, quoted or not.
func sameETag(a, b string) bool { return strings.Trim(a, `"`) == strings.Trim(b, `"`) }

// withinSecond compares the times of two descriptions of one write, which a
// listing and a header may give at different precisions.
func withinSecond(a, b time.Time) bool {
	d := a.Sub(b)
	return d > -time.Second && d < time.Second
}

// plainMD5 returns the MD5 an ETag is, for an object uploaded in one
// request: 32 hex digits, quoted or not. A multipart ETag ("…-N") is none.
func plainMD5(etag string) ([]byte, bool) {
	t := strings.Trim(etag, `"`)
	if len(t) != 32 {
		return nil, false
	}
	b, err := hex.DecodeString(t)
	return b, err == nil
}

// md5Check reads r and fails at its end when the bytes read do not have the
// MD5 want: a write that reads it stops short of publishing them.
type md5Check struct {
	r    io.Reader
	h    hash.Hash
	want []byte
}

func (m *md5Check) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.h.Write(p[:n])
	if err == io.EOF {
		if got := m.h.Sum(nil); !strings.EqualFold(hex.EncodeToString(got), hex.EncodeToString(m.want)) {
			return n, fmt.Errorf("the version read has MD5 %x, its ETag says %x", got, m.want)
		}
	}
	return n, err
}
