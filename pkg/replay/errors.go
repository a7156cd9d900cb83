package replay

import (
	"errors"
	"fmt"

	"github.com/mediactl/mediactl/pkg/store"
)

// The reasons a reference is refused or its bytes are not served. Every
// refusal by Open and OpenObject is a *[RefusedError] wrapping one of the first
// six; a read that proves the bytes wrong fails with an error wrapping
// [ErrDigestMismatch]. Match them with errors.Is.
var (
	// ErrInvalidReference: the reference is not one replay reads (empty, an
	// unsupported scheme, a file URI of another host, a query or fragment on a
	// bucket URL) or could leave where it points (a ".." or empty segment, a
	// backslash, a NUL byte).
	ErrInvalidReference = errors.New("invalid reference")
	// ErrOutsideRoots: a local path or file URI below none of the roots.
	ErrOutsideRoots = errors.New("outside the allowed roots")
	// ErrBucketNotAllowed: a bucket URL or {bucket, path} pair naming a
	// bucket (or scheme) that is not on the allow-list.
	ErrBucketNotAllowed = errors.New("bucket not allowed")
	// ErrPrefixNotAllowed: an allowed bucket, but a key below none of its
	// prefixes (another user's or thread's folder, say).
	ErrPrefixNotAllowed = errors.New("key prefix not allowed")
	// ErrNoDigest: nothing says what the bytes must hash to — the name is not
	// content-addressed and the object has no sha256 metadata (or is a local
	// file, which has none, and Config.AllowUnverifiedLocal is off).
	ErrNoDigest = errors.New("no sha256 to verify against")
	// ErrNotRegular: a local path that is a symbolic link, has one on its way,
	// or is a directory, FIFO or device. It is [store.ErrNotRegular].
	ErrNotRegular = store.ErrNotRegular

	// ErrDigestMismatch is wrapped by the error a Read returns at the end of
	// an object whose bytes do not hash to the expected sha256, or that ends
	// before (or runs past) the size it announced. The bytes read so far must
	// be discarded.
	ErrDigestMismatch = errors.New("sha256 mismatch")
)

// RefusedError is the error of a reference Open or OpenObject refuses before
// reading anything. Ref is the reference as given (for OpenObject,
// "BUCKET/PATH"); Reason says what is wrong in
// words; Err is one of the sentinel errors above.
type RefusedError struct {
	Ref    string
	Reason string
	Err    error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("replay: %q refused: %v: %s", e.Ref, e.Err, e.Reason)
}

func (e *RefusedError) Unwrap() error { return e.Err }

func refuse(ref string, err error, format string, args ...any) error {
	return &RefusedError{Ref: ref, Reason: fmt.Sprintf(format, args...), Err: err}
}

// MismatchError is the error a Read returns at the end of an object whose bytes
// are not the ones expected. It wraps [ErrDigestMismatch].
type MismatchError struct {
	Location string // where the bytes came from
	Want     string // expected sha256, hex
	Got      string // sha256 of the bytes read, hex
	WantSize int64  // announced size, or -1
	Size     int64  // bytes read
}

func (e *MismatchError) Error() string {
	if e.WantSize >= 0 && e.Size != e.WantSize {
		return fmt.Sprintf("replay: %s: %v: %d bytes read, %d announced", e.Location, ErrDigestMismatch, e.Size, e.WantSize)
	}
	return fmt.Sprintf("replay: %s: %v: the %d bytes read hash to %s, want %s", e.Location, ErrDigestMismatch, e.Size, e.Got, e.Want)
}

func (e *MismatchError) Unwrap() error { return ErrDigestMismatch }
