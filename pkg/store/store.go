// Package store is mediactl's one blob-store abstraction: a local directory or a
// gocloud.dev/blob bucket (file://, s3://, gs://, azblob://, mem://) behind a single
// interface, so that scan, verify, gc and migrate are written once.
//
// Keys are slash-separated paths relative to the store root ("ab12….png",
// "u/t/uploads/f.png"). A key never starts with "/", never contains "." or ".."
// segments or a backslash, and never names the internal folder [InternalDir]; every
// method rejects such keys with an error wrapping [ErrInvalidKey], so nothing outside
// the store root is ever touched, whatever a caller passes in.
//
// A local store never follows a symbolic link: listings report links as links (with
// their target), Open refuses anything but a regular file, and no operation resolves
// a path through a link that leaves the root.
package store

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/mediactl/mediactl/pkg/storekey"
)

// InternalDir is the top-level folder where mediactl keeps its own state (trash,
// journals, locks) inside a store. It is never listed as a blob and no key may name
// it. It is [storekey.InternalDir].
const InternalDir = storekey.InternalDir

var (
	// ErrNotExist is wrapped by errors for a key that names nothing.
	ErrNotExist = fs.ErrNotExist
	// ErrExist is wrapped by Put with IfNotExist when the key already exists.
	ErrExist = fs.ErrExist
	// ErrInvalidKey is wrapped by errors for a key that could leave the store root
	// or names the internal folder. It is [storekey.ErrInvalidKey].
	ErrInvalidKey = storekey.ErrInvalidKey
	// ErrNotRegular is wrapped by Open for a key that is a symlink, directory,
	// device or other non-regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrReplaced is wrapped, beside ErrNotRegular, by Open of a local file
	// that another process replaced or removed between its lstat and its
	// open: what was checked is not what would be read. Reading again may
	// find the new file (or none); a caller that only wants the current
	// content, such as a lock, tries again.
	ErrReplaced = errors.New("replaced while opening")
)

// Entry describes one object of a store, as listed or stat'ed. Nothing in it was
// obtained by following a symbolic link.
type Entry struct {
	Key     string    // slash-separated, relative to the store root
	Size    int64     // bytes; for a symlink, the length of its target text
	ModTime time.Time // last modification
	// Mode holds the type bits and permissions of a local file (from lstat). For
	// bucket objects it is 0: a bucket only holds regular objects.
	Mode fs.FileMode
	// Link is the target of a symbolic link, as stored in the link (never resolved).
	Link string

	// ETag is the service's tag for this write of a bucket object (Stat on
	// every bucket; an S3 bucket's and an Azure container's listing too, in
	// the form Stat gives it), "" elsewhere. On Azure
	// every upload gets a new one, even of the same content, and
	// BatchRemover.DeleteMany can delete on condition that it is unchanged.
	ETag string

	// The fields below are filled by Stat on buckets; listings leave them empty.
	ContentType string
	MD5         []byte            // nil when the backend does not report one (S3 multipart)
	Metadata    map[string]string // user metadata; migrate writes "sha256" here
}

// Regular reports whether the entry is a regular file (or a bucket object).
func (e Entry) Regular() bool { return e.Mode.Type() == 0 }

// PutOptions control Put.
type PutOptions struct {
	ContentType string
	Metadata    map[string]string
	// IfNotExist makes Put fail with an error wrapping ErrExist when the key exists,
	// instead of replacing it. Content-addressed writers use it so that nothing is
	// ever overwritten.
	IfNotExist bool
	// ModTime, when non-zero, is set as the object's modification time where the
	// store supports it (local stores); restore uses it to put back exact mtimes.
	ModTime time.Time
	// PartSize and PartConcurrency tune uploads to buckets: the bytes sent per
	// request of a multipart upload and how many parts are in flight at once.
	// Zero lets the driver choose. Local stores ignore them.
	PartSize        int
	PartConcurrency int
	// CallerVerifies says the caller reads the stored object's MD5 back and
	// compares it with the bytes it sent (see BucketStore.ReportsMD5), so the
	// upload need not carry the SDK's own checksum (on S3 a CRC32 of every
	// byte, computed in a second pass). Set it only for such objects.
	CallerVerifies bool
	// SHA256 is the content's sha256 in hex, when the caller knows it
	// before the upload (content-addressed names carry it); callers may
	// always set it. With CallerVerifies, an S3 upload in one request is
	// signed with it: the
	// service checks the bytes it receives against it and rejects the upload
	// when they differ, and the SDK does not read the content a second time to
	// hash it. Without CallerVerifies the SDK's own checksum protects the
	// upload instead. Other stores ignore it.
	SHA256 string
	// Size, when positive, is the content's length as the caller knows it
	// (from a listing, say). A bucket store on S3 then uploads a content
	// smaller than 1 MiB from memory in one request, which costs less per
	// object than its streaming writer. A wrong Size costs only that: the
	// content written is always what r holds.
	Size int64
	// Mode, when not zero, is the permission bits a local store gives the
	// new file (else 0600). Buckets ignore it.
	Mode fs.FileMode
	// OwnerOfFolder makes a local store give the new file the owner and
	// group of the folder it is put in, where the process may (as root):
	// a file made again for a runtime (rollback) must be one it can read.
	// Buckets ignore it.
	OwnerOfFolder bool
}

// Store is a place that holds blobs. Implementations are safe for concurrent use.
type Store interface {
	// Location is the store as an operator would name it: an absolute directory,
	// or a bucket URL without credentials.
	Location() string

	// List calls fn for each entry whose key starts with prefix ("" for all), in
	// lexical key order, streaming: implementations never hold the whole listing
	// in memory. Directories are not reported (only their contents); symbolic links
	// and other non-regular files are reported, never followed. The internal folder
	// is skipped. An error from fn stops the listing and is returned as is.
	List(ctx context.Context, prefix string, fn func(Entry) error) error

	// Stat describes one key without following a symbolic link. A missing key
	// returns an error wrapping ErrNotExist.
	Stat(ctx context.Context, key string) (Entry, error)

	// Open opens a regular blob for reading. A symlink or other non-regular file
	// returns an error wrapping ErrNotRegular; a missing key, ErrNotExist.
	Open(ctx context.Context, key string) (io.ReadCloser, error)

	// Put writes r under key atomically: readers see the old object or the whole
	// new one, never a part. On a local store the data is fsync'ed before the
	// rename that publishes it.
	Put(ctx context.Context, key string, r io.Reader, opts PutOptions) error

	// Delete removes key. A missing key returns an error wrapping ErrNotExist.
	Delete(ctx context.Context, key string) error

	// Close releases the store's resources.
	Close() error
}

// Local is implemented by stores that are a directory on this host. Callers use it
// for same-filesystem moves (trash, quarantine) and to resolve path references.
type Local interface {
	Store
	// Dir is the absolute, cleaned store directory.
	Dir() string
	// Rename moves a blob to another key of the same store without copying.
	Rename(ctx context.Context, from, to string) error
}

// Wrapper is implemented by a store that stands in front of another, changing
// only where some of its work goes (a trash in a folder of its own): its blobs
// are the wrapped store's. Rules about a store's place (which layout folder it
// is) look through it with [Unwrap].
type Wrapper interface {
	Store
	// Unwrap returns the store in front of which this one stands.
	Unwrap() Store
}

// Unwrap returns the store below all of st's wrappers: st itself when it
// wraps none.
func Unwrap(st Store) Store {
	for {
		w, ok := st.(Wrapper)
		if !ok {
			return st
		}
		st = w.Unwrap()
	}
}

// Bucket is implemented by stores backed by a gocloud.dev/blob bucket. Callers use
// it to resolve bucket references (s3://bucket/key, {bucket, path} pairs).
type Bucket interface {
	Store
	// Scheme is the URL scheme: "s3", "gs", "azblob", "file" or "mem".
	Scheme() string
	// Name is the bucket (or container) name; for file:// the directory path.
	Name() string
	// Prefix is the key prefix the store is confined to ("" or ending in "/");
	// store keys are relative to it.
	Prefix() string
}
