package store

import (
	"context"
	"io"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Optional capabilities.
//
// Every store offers the methods of [Store]. Some offer more, each through one
// named interface below, and a caller that can do better with one asks for it by
// name — never with an anonymous interface assertion or by asserting
// *LocalStore, so that a wrapper store can say it does not offer what the store
// it wraps offers (see [Dropper]). The As… functions (AsInternal,
// AsUnorderedLister, …) are the way to ask: they honour Drops; a plain type
// assertion does not. [FeaturesOf] says which capabilities a store has, for
// reports and logs.

// UnorderedLister is a listing in any order, cheaper in memory.
//
// ListUnordered reports the same entries as List, described alike (Size,
// ModTime, Mode, Link), the internal folder skipped, an error from fn returned
// as is — but in the order the store finds them, each as soon as it is found.
// A caller may rely on every entry being reported once; it may not rely on any
// order, not even on a directory's entries being reported together. It costs
// no more memory than one directory entry at a time, where List sorts each
// directory's names in memory first (a million blobs in one folder). gc's mark
// phase wants it: the order does not matter to it, the memory does.
type UnorderedLister interface {
	ListUnordered(ctx context.Context, prefix string, fn func(Entry) error) error
}

// SelectiveLister is List of only the entries a caller wants, decided by key
// before they cost memory.
//
// ListSelected reports, in List's order and described as List describes them,
// exactly the entries of List(ctx, prefix, fn) whose key keep accepts (a nil
// keep accepts every key). keep is asked about the keys of blobs (and of
// symlinks, FIFOs, …), never about a folder's, and may be asked about a key
// that then vanishes; it must be a pure function of the key, and cheap. Where List sorts a directory's names in memory
// first (a local store, a file:// bucket), the names keep refuses are never
// held, so one shard of N holds about 1/N of a folder of millions of blobs;
// elsewhere it costs what List costs. Call it through the package's
// [ListSelected], which falls back to filtering List.
type SelectiveLister interface {
	ListSelected(ctx context.Context, prefix string, keep func(key string) bool, fn func(Entry) error) error
}

// KeyLister lists keys without describing them and opens a blob and describes
// the very file it opened, in one call. It suits a caller that reads every blob
// anyway (verify).
//
// ListKeys reports the same keys as List, in any order, with the entries of
// regular blobs carrying only Key (Size -1, no ModTime); other entries
// (symlinks, FIFOs, …) are described as List describes them. It saves a
// system call per blob. OpenEntry opens key like Open (the same errors:
// ErrNotExist, ErrNotRegular, ErrInvalidKey) and returns the Entry (Key,
// Size, ModTime, Mode) of what it opened, so that what is read and what is
// described are one file even while writers replace it.
type KeyLister interface {
	ListKeys(ctx context.Context, prefix string, fn func(Entry) error) error
	OpenEntry(ctx context.Context, key string) (io.ReadCloser, Entry, error)
}

// BatchMover moves many blobs into the internal folder at once (gc's sweep).
//
// MoveManyToInternal returns one error per move, nil for a blob moved. Each
// move is a rename that never replaces anything (ErrExist), checked right
// before against the Size and ModTime the caller planned with (ErrChanged),
// and resolved for itself, so a folder swapped for a link midway fails the
// moves through it and redirects none (ErrUnsafePath, after which the rest of
// the batch is ErrNotAttempted). A blob is always in one place or the other.
// It costs one rename per blob and one directory fsync per directory per
// batch, where MoveToInternal fsyncs after every blob.
//
// DeleteManyInternal removes the files InternalDir/names[i] (never a folder)
// and then every folder from InternalDir/under down that the removals left
// empty, returning one error per name (nil when removed, or gone already).
// Each name lies below under. Moving blobs with MoveManyToInternal and then
// deleting them here is how a blob is removed for good without a window
// between its check and its removal: the move checks the file it renames,
// and what is deleted is only ever what was moved.
type BatchMover interface {
	MoveManyToInternal(ctx context.Context, moves []InternalMove) []error
	DeleteManyInternal(ctx context.Context, under string, names []string) []error
}

// LocalMover renames a blob into another local store on the same file system
// (gc's --trash-dir, verify's quarantine).
//
// MoveTo moves key to dstKey of dst without copying: the blob is in one store
// or the other, never in both or neither. It never replaces an existing key
// (ErrExist), refuses anything but a regular file (ErrNotRegular), fails with
// ErrUnsafePath when a folder on the way to dstKey is a link or a file, and
// with ErrCrossDevice when the two stores are on different file systems, where
// the caller copies, proves the copy and deletes instead. The destination is
// the concrete *LocalStore because the move resolves its folders from dst's
// own directory descriptor. It costs one rename and two directory fsyncs.
type LocalMover interface {
	MoveTo(ctx context.Context, key string, dst *LocalStore, dstKey string) error
}

// CheckedInternalMover moves one blob into the internal folder only if it
// still is what the caller planned with (InternalMove's Size and ModTime),
// checked on the very file the rename takes, and fails with ErrChanged
// otherwise: the check and the move are one step, so a writer's file saved
// over the blob after the caller's Stat is never what is moved. gc's trash
// directory (a store whose trash is another local folder) offers it where it
// cannot offer BatchMover.
type CheckedInternalMover interface {
	MoveToInternalIf(ctx context.Context, m InternalMove) error
}

// MD5Reporter says when Stat reports an MD5 of a blob (Entry.MD5).
//
// ReportsMD5(size) is true when Stat of an object of size bytes written by Put
// carries the MD5 of its content (a bucket whose service computes one: every
// gs, azblob, file and mem object, S3 objects below the multipart threshold).
// A caller that proves copies by MD5 may then skip reading the copy back; when
// it is false the caller must not count on an MD5 (on S3 it is nil: a multipart
// ETag is not one) and hashes the copy itself. It costs nothing: it is decided
// from the scheme and the size, without a request.
type MD5Reporter interface {
	ReportsMD5(size int64) bool
}

// Dropper is implemented by a wrapper store that has, through embedding or by
// forwarding, methods of capabilities it must not be used for: Drops names
// them, and FeaturesOf and the As… functions leave them out. A wrapper that
// embeds a LocalStore but routes some internal names elsewhere, say, drops
// FeatureBatchMove, which would move into the wrapped store's own folder.
//
// A store type that embeds a *LocalStore or *BucketStore (or one by value)
// keeps the capabilities the embedding gives it only by implementing Dropper,
// even with Drops returning 0: without it FeaturesOf reports none for it, not
// even Internal. So a wrapper whose author did not think about capabilities
// fails loudly (no lock, no trash) instead of silently moving blobs through a
// method it never meant to forward.
type Dropper interface {
	Drops() Features
}

var (
	concreteStores = []reflect.Type{
		reflect.TypeFor[*LocalStore](), reflect.TypeFor[LocalStore](),
		reflect.TypeFor[*BucketStore](), reflect.TypeFor[BucketStore](),
	}
	// embedders caches embedsConcrete by dynamic type.
	embedders sync.Map // reflect.Type -> bool
)

// embedsConcrete reports whether st's type embeds one of this package's stores
// as a field of its own.
func embedsConcrete(st Store) bool {
	t := reflect.TypeOf(st)
	if v, ok := embedders.Load(t); ok {
		return v.(bool)
	}
	s := t
	if s.Kind() == reflect.Pointer {
		s = s.Elem()
	}
	embeds := false
	if s.Kind() == reflect.Struct {
		for i := range s.NumField() {
			if f := s.Field(i); f.Anonymous && slices.Contains(concreteStores, f.Type) {
				embeds = true
				break
			}
		}
	}
	embedders.Store(t, embeds)
	return embeds
}

// Features is a set of optional capabilities.
type Features uint32

// The capabilities, one bit each.
const (
	// FeatureInternal: the store keeps mediactl's own files ([Internal]).
	FeatureInternal Features = 1 << iota
	// FeatureListUnordered: [UnorderedLister].
	FeatureListUnordered
	// FeatureListKeys: [KeyLister] (ListKeys and OpenEntry).
	FeatureListKeys
	// FeatureBatchMove: [BatchMover] (MoveManyToInternal).
	FeatureBatchMove
	// FeatureMoveTo: [LocalMover].
	FeatureMoveTo
	// FeatureReportsMD5: [MD5Reporter].
	FeatureReportsMD5
	// FeatureBatchRemove: [BatchRemover] (ListRange, CopyToInternal, DeleteMany).
	FeatureBatchRemove
	// FeatureListSelected: [SelectiveLister].
	FeatureListSelected
	// FeatureDeleteRecovery: [RecoveryReporter].
	FeatureDeleteRecovery
	// FeatureRestoreVersion: [VersionRestorer].
	FeatureRestoreVersion

	// AllFeatures is every capability this package knows.
	AllFeatures = FeatureRestoreVersion<<1 - 1
)

// featureNames are the names String uses, in bit order: the methods that the
// capabilities add.
var featureNames = [...]string{"Internal", "ListUnordered", "ListKeys", "MoveManyToInternal", "MoveTo", "ReportsMD5", "DeleteMany", "ListSelected", "DeleteRecovery", "RestoreVersion"}

// Has reports whether f holds every capability of want.
func (f Features) Has(want Features) bool { return f&want == want }

// String lists the capabilities of f by name, comma-separated, in a fixed
// order ("ListUnordered,ListKeys"), or "none".
func (f Features) String() string {
	if f&AllFeatures == 0 {
		return "none"
	}
	var b strings.Builder
	for rest := f & AllFeatures; rest != 0; rest &= rest - 1 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(featureNames[bits.TrailingZeros32(uint32(rest))])
	}
	return b.String()
}

// FeaturesOf returns the capabilities st offers: those whose interface it
// implements, less what it drops ([Dropper]); none for a type that embeds one
// of this package's stores without saying what it drops.
func FeaturesOf(st Store) Features {
	d, declares := st.(Dropper)
	if !declares && embedsConcrete(st) {
		return 0
	}
	var f Features
	if _, ok := st.(Internal); ok {
		f |= FeatureInternal
	}
	if _, ok := st.(UnorderedLister); ok {
		f |= FeatureListUnordered
	}
	if _, ok := st.(KeyLister); ok {
		f |= FeatureListKeys
	}
	if _, ok := st.(BatchMover); ok {
		f |= FeatureBatchMove
	}
	if _, ok := st.(LocalMover); ok {
		f |= FeatureMoveTo
	}
	if _, ok := st.(MD5Reporter); ok {
		f |= FeatureReportsMD5
	}
	if _, ok := st.(BatchRemover); ok {
		f |= FeatureBatchRemove
	}
	if _, ok := st.(SelectiveLister); ok {
		f |= FeatureListSelected
	}
	if _, ok := st.(RecoveryReporter); ok {
		f |= FeatureDeleteRecovery
	}
	if _, ok := st.(VersionRestorer); ok {
		f |= FeatureRestoreVersion
	}
	if declares {
		f &^= d.Drops()
	}
	return f
}

// as returns st as T when it offers feature.
func as[T any](st Store, feature Features) (T, bool) {
	t, ok := st.(T)
	if !ok || !FeaturesOf(st).Has(feature) {
		var zero T
		return zero, false
	}
	return t, true
}

// AsInternal returns st's internal folder, when it offers one.
func AsInternal(st Store) (Internal, bool) { return as[Internal](st, FeatureInternal) }

// AsUnorderedLister returns st's unordered listing, when it offers one.
func AsUnorderedLister(st Store) (UnorderedLister, bool) {
	return as[UnorderedLister](st, FeatureListUnordered)
}

// AsKeyLister returns st's key listing and describing open, when it offers them.
func AsKeyLister(st Store) (KeyLister, bool) { return as[KeyLister](st, FeatureListKeys) }

// AsBatchMover returns st's batch move into its internal folder, when it offers one.
func AsBatchMover(st Store) (BatchMover, bool) { return as[BatchMover](st, FeatureBatchMove) }

// AsLocalMover returns st's rename into another local store, when it offers one.
func AsLocalMover(st Store) (LocalMover, bool) { return as[LocalMover](st, FeatureMoveTo) }

// AsMD5Reporter returns what says when st's Stat reports an MD5, when st says so.
func AsMD5Reporter(st Store) (MD5Reporter, bool) { return as[MD5Reporter](st, FeatureReportsMD5) }

// AsBatchRemover returns st's batch removal, when it offers one.
func AsBatchRemover(st Store) (BatchRemover, bool) {
	return as[BatchRemover](st, FeatureBatchRemove)
}

// AsSelectiveLister returns st's selective listing, when it offers one.
func AsSelectiveLister(st Store) (SelectiveLister, bool) {
	return as[SelectiveLister](st, FeatureListSelected)
}

// AsRecoveryReporter returns what says whether st's service keeps deleted
// objects, when st can say (a bucket).
func AsRecoveryReporter(st Store) (RecoveryReporter, bool) {
	return as[RecoveryReporter](st, FeatureDeleteRecovery)
}

// AsVersionRestorer returns what brings st's deleted blobs back from the
// versions its service keeps, when st is a bucket (see [VersionRestorer]:
// on some services every call answers that it is not implemented).
func AsVersionRestorer(st Store) (VersionRestorer, bool) {
	return as[VersionRestorer](st, FeatureRestoreVersion)
}

// ListSelected lists the entries of st under prefix whose key keep accepts,
// as [SelectiveLister] describes: through st's own ListSelected when it offers
// one, else by filtering st.List.
func ListSelected(ctx context.Context, st Store, prefix string, keep func(key string) bool, fn func(Entry) error) error {
	if sl, ok := AsSelectiveLister(st); ok {
		return sl.ListSelected(ctx, prefix, keep, fn)
	}
	return st.List(ctx, prefix, keptOnly(keep, fn))
}

// keptOnly passes fn the entries whose key keep accepts; a nil keep, all.
func keptOnly(keep func(key string) bool, fn func(Entry) error) func(Entry) error {
	if keep == nil {
		return fn
	}
	return func(e Entry) error {
		if !keep(e.Key) {
			return nil
		}
		return fn(e)
	}
}

var (
	_ SelectiveLister = (*LocalStore)(nil)
	_ SelectiveLister = (*BucketStore)(nil)
	_ UnorderedLister = (*LocalStore)(nil)
	_ KeyLister       = (*LocalStore)(nil)
	_ BatchMover      = (*LocalStore)(nil)
	_ LocalMover      = (*LocalStore)(nil)
	_ MD5Reporter     = (*BucketStore)(nil)
)
