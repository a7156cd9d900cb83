package store

import (
	"context"
	"io"
)

// Internal is implemented by the stores of this package ([LocalStore],
// [BucketStore]) for mediactl's own commands, which keep trash, journals and locks
// in a store's [InternalDir]. Its methods take names relative to InternalDir (such
// as "trash/2024-05-01/ab12.png", checked like keys) and are kept apart from the
// blob-key methods of [Store], which can never address the internal folder.
type Internal interface {
	// PutInternal writes r to InternalDir/name, atomically as Put does.
	PutInternal(ctx context.Context, name string, r io.Reader, opts PutOptions) error
	// MoveToInternal moves blob key to InternalDir/name (trash, quarantine).
	// Callers use fresh names: whether an existing InternalDir/name is replaced
	// depends on the store (a local store refuses with ErrExist).
	MoveToInternal(ctx context.Context, key, name string) error
	// MoveFromInternal moves InternalDir/name back to blob key (restore). It never
	// replaces an existing key: that fails with an error wrapping ErrExist.
	MoveFromInternal(ctx context.Context, name, key string) error
	// OpenInternal opens InternalDir/name for reading (ErrNotExist when missing).
	OpenInternal(ctx context.Context, name string) (io.ReadCloser, error)
	// DeleteInternal removes InternalDir/name (ErrNotExist when missing).
	DeleteInternal(ctx context.Context, name string) error
	// ListInternal calls fn for each file below InternalDir whose name starts
	// with prefix; Entry.Key is the name relative to InternalDir. Local stores
	// list in lexical order; buckets in the service's order.
	ListInternal(ctx context.Context, prefix string, fn func(Entry) error) error
}

var (
	_ Internal = (*LocalStore)(nil)
	_ Internal = (*BucketStore)(nil)
)

// InternalAbove is implemented by a bucket store at a prefix, which can
// list the internal folders of the folders above it (see
// BucketStore.ListInternalAbove): what another store at the bucket's root
// keeps there may name the same objects.
type InternalAbove interface {
	ListInternalAbove(ctx context.Context, dir string, fn func(folder string, e Entry) error) error
}

var _ InternalAbove = (*BucketStore)(nil)
