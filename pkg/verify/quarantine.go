package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// Quarantined is one blob taken out of the store, as its manifest line records it.
type Quarantined struct {
	Key      string    `json:"key"`      // where it was in the store
	Moved    string    `json:"moved_to"` // its key in the quarantine store
	Expected string    `json:"expected"` // the digest its name promises
	Actual   string    `json:"actual"`   // the digest of its content
	Size     int64     `json:"size"`     // bytes
	How      string    `json:"how"`      // "rename" or "copy"
	Time     time.Time `json:"time"`     // when it was moved
	Err      string    `json:"error,omitempty"`
	// Changed says a kept blob changed since it was hashed (a writer
	// replaced it): a fact about the blob. A kept blob without it could not
	// be moved (the quarantine or the store failed): a failure of the run.
	Changed bool `json:"changed,omitempty"`
}

// errChanged marks a blob that is no longer the corrupt one hashed.
var errChanged = errors.New("content changed since it was hashed")

// Failed counts the corrupt blobs that could not be moved for another
// reason than having changed: the quarantine or the store failed.
func (r *QuarantineReport) Failed() int {
	n := 0
	for _, k := range r.Kept {
		if !k.Changed {
			n++
		}
	}
	return n
}

// QuarantineReport is the outcome of a store's quarantine (StoresOptions.Quarantine).
type QuarantineReport struct {
	Folder   string        `json:"folder"`   // this run's folder in the quarantine store
	Manifest string        `json:"manifest"` // key of the manifest in the quarantine store
	Moved    []Quarantined `json:"moved"`
	// Kept are corrupt blobs left in place, with the reason (the blob changed
	// since it was hashed, the copy could not be proven, …).
	Kept []Quarantined `json:"kept"`
}

// quarantine moves the corrupt blobs of a Run out of src into dst, under a
// folder named after now, and writes a manifest line per blob there. It never
// plainly deletes: a blob is moved by a rename when both stores are local
// folders on one file system, and otherwise copied, the copy read back and
// hashed, and only then removed from src; a local store's blob is set aside
// in a trash run of the store before the copy, so that what is removed is
// only ever the file copied (see copyAside). Before moving, each blob is hashed
// again; one that no longer matches the corrupt digest (a writer replaced it)
// is kept. The store it moves out of is the locked one (l.Store()).
func quarantine(ctx context.Context, l *storelock.Lock, dst store.Store, corrupt []Result, now time.Time) (*QuarantineReport, error) {
	if err := l.Held(); err != nil {
		return nil, err
	}
	src := l.Store()
	now = now.UTC()
	folder := now.Format("20060102T150405.000000000Z")
	// A blob copied out of a local store is set aside in this trash run
	// first (see copyAside): a run named as gc names its own, so that one
	// left by a killed run is listed by gc runs and put back by gc restore.
	stage := trash.RunID(now)
	rep := &QuarantineReport{Folder: folder, Manifest: folder + "/manifest.jsonl", Moved: []Quarantined{}, Kept: []Quarantined{}}
	for _, c := range corrupt {
		if c.Category != Corrupt || c.Actual == "" || c.Actual == c.Expected {
			// Only a blob whose bytes were seen to hash to another digest
			// than its name's is moved: a --fast verdict on a size that
			// changed between listing and stat says nothing of the bytes.
			continue
		}
		q := Quarantined{Key: c.Key, Moved: folder + "/" + c.Key, Expected: c.Expected, Actual: c.Actual, Size: c.Size, Time: now}
		if ctx.Err() != nil {
			break
		}
		how, err := move(ctx, src, dst, c, stage, q.Moved)
		q.How = how
		if err != nil {
			q.Err, q.Changed = err.Error(), errors.Is(err, errChanged)
			rep.Kept = append(rep.Kept, q)
			continue
		}
		rep.Moved = append(rep.Moved, q)
	}
	var manifest bytes.Buffer
	enc := json.NewEncoder(&manifest)
	for _, q := range append(append([]Quarantined(nil), rep.Moved...), rep.Kept...) {
		enc.Encode(q)
	}
	// Written on a context of its own: an interrupted run still says what
	// it moved, and from where.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), manifestTimeout)
	defer cancel()
	if len(rep.Moved)+len(rep.Kept) > 0 {
		if err := dst.Put(mctx, rep.Manifest, &manifest, store.PutOptions{ContentType: "application/x-ndjson", IfNotExist: true}); err != nil {
			return rep, errors.Join(ctx.Err(), fmt.Errorf("quarantine: write manifest %s: %w", rep.Manifest, err))
		}
	}
	return rep, ctx.Err()
}

// manifestTimeout bounds the write of an interrupted run's manifest.
const manifestTimeout = 30 * time.Second

// move takes one corrupt blob out of src. It reports how it moved it. What
// it takes must be the corrupt blob that was hashed, whatever a writer does
// meanwhile (a runtime that repairs the blob, renaming good bytes over it):
// the blob is hashed again first, and kept if it is intact now or no longer
// the corrupt one; then it is moved only if it is still the file that was
// hashed, and what was moved is hashed once more, and put back if it is not
// the corrupt one after all.
func move(ctx context.Context, src, dst store.Store, c Result, stage, dstKey string) (string, error) {
	before, err := src.Stat(ctx, c.Key)
	if err != nil {
		return "", fmt.Errorf("re-read before moving: %w", err)
	}
	if err := stillCorrupt(ctx, src, c.Key, c); err != nil {
		return "", err
	}
	// A rename needs a source that offers one and a destination that is a
	// local folder (the rename resolves its folders from that folder's own
	// descriptor, so it must be the real store, not a wrapper of one).
	ls, srcLocal := src.(checkedLocalMover)
	ld, dstLocal := dst.(*store.LocalStore)
	if _, canRename := store.AsLocalMover(src); canRename && srcLocal && dstLocal {
		err := ls.MoveToIfUnchanged(ctx, c.Key, ld, dstKey, before.Size, before.ModTime)
		switch {
		case errors.Is(err, store.ErrChanged):
			return "rename", fmt.Errorf("kept: %w (a writer replaced it after it was hashed)", errChanged)
		case err == nil:
			if err := stillCorrupt(ctx, dst, dstKey, c); err != nil {
				// Replaced between the hash and the rename by a file of the
				// same size and time: it goes back, never over anything.
				if berr := moveBack(ctx, ld, dstKey, ls.Dir(), c.Key); berr != nil {
					return "rename", fmt.Errorf("%w; the file moved is at %s in the quarantine and could not be put back: %v", err, dstKey, berr)
				}
				return "rename", err
			}
			return "rename", nil
		case !errors.Is(err, store.ErrCrossDevice):
			return "rename", err
		}
	}
	// Copy, prove the copy, then remove what was copied.
	if bm, ok := store.AsBatchMover(src); ok {
		if in, ok := store.AsInternal(src); ok {
			return "copy", copyAside(ctx, src, bm, in, dst, c, before, stage, dstKey)
		}
	}
	return "copy", copyThenDelete(ctx, src, dst, c, before, dstKey)
}

// copyAside copies a blob of a local store into the quarantine without ever
// deleting by the blob's name: a writer may save the blob again at any
// moment (a runtime that saves it anew, a restore from backup by cp -p and
// mv, same size and time), and whatever holds the name when a delete comes
// would go. So the blob is first set aside by the store's checked rename
// (MoveManyToInternal, which takes only the file it checked) into
// trash/STAGE/KEY in the store's internal folder, where no writer saves;
// that file, and only it, is hashed, copied, proven and deleted. A writer
// that saves the blob meanwhile saves a new file at the free name, which
// stays. A file set aside that is not the corrupt blob (replaced between the
// hash and the rename by one of the same size and time) goes back to its
// key, never over anything. A run killed before the delete leaves the blob
// in that trash run, where gc restore finds it.
func copyAside(ctx context.Context, src store.Store, bm store.BatchMover, in store.Internal, dst store.Store, c Result, before store.Entry, stage, dstKey string) error {
	under := trash.Dir + "/" + stage
	name := under + "/" + c.Key
	err := bm.MoveManyToInternal(ctx, []store.InternalMove{{Key: c.Key, Name: name, Size: before.Size, ModTime: before.ModTime}})[0]
	switch {
	case errors.Is(err, store.ErrChanged):
		return fmt.Errorf("kept: %w (a writer replaced it after it was hashed): %v", errChanged, err)
	case errors.Is(err, store.ErrCrossDevice):
		// A blob in a mount inside the store: gc cannot remove it either.
		return fmt.Errorf("kept: it lies on another file system than the store's internal folder, so it cannot be set aside for the copy: %w", err)
	case err != nil && present(ctx, in, name):
		// The rename happened; what failed came after it (a folder's sync).
		return fmt.Errorf("set aside for the copy as %s in the store's internal folder, and left there: %w", name, err)
	case err != nil:
		return fmt.Errorf("not set aside for the copy: %w", err)
	}
	// From here on the blob is out of the store; any failure puts it back,
	// even once ctx is cancelled.
	bctx := context.WithoutCancel(ctx)
	putBack := func(why error) error {
		if err := in.MoveFromInternal(bctx, name, c.Key); err != nil {
			return fmt.Errorf("%w; it was set aside for the copy and stays in trash run %s of the store: %v", why, stage, err)
		}
		// The name is gone; the folders it leaves empty go.
		bm.DeleteManyInternal(bctx, under, []string{name})
		return why
	}
	sum, err := hashInternal(ctx, src, in, name)
	if err := corruptSum(sum, err, c); err != nil {
		return putBack(err)
	}
	rc, err := in.OpenInternal(ctx, name)
	if err != nil {
		return putBack(fmt.Errorf("copy to quarantine: %w", err))
	}
	h := sha256.New()
	err = dst.Put(ctx, dstKey, io.TeeReader(rc, h), store.PutOptions{IfNotExist: true, Metadata: map[string]string{"sha256": c.Actual}})
	rc.Close()
	if err != nil {
		return putBack(fmt.Errorf("copy to quarantine: %w", err))
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != c.Actual {
		return putBack(fmt.Errorf("kept: the copy read %s, not the bytes hashed; the copy stays in quarantine", sum))
	}
	if sum, _, err := hashKey(ctx, dst, dstKey); err != nil || sum != c.Actual {
		return putBack(fmt.Errorf("kept: the quarantine copy could not be proven (%v, %s)", err, sum))
	}
	if err := bm.DeleteManyInternal(bctx, under, []string{name})[0]; err != nil {
		return fmt.Errorf("copied, and set aside as %s in the store's internal folder, but not deleted there: %w", name, err)
	}
	return nil
}

// present reports whether the internal file name is there.
func present(ctx context.Context, in store.Internal, name string) bool {
	rc, err := in.OpenInternal(context.WithoutCancel(ctx), name)
	if err != nil {
		return false
	}
	rc.Close()
	return true
}

// copyThenDelete copies a blob of a bucket into the quarantine, proves the
// copy, and deletes the blob if it is still the object that was copied: on
// Azure the delete is made on condition that it still has the ETag hashed
// (If-Match). Elsewhere (S3, GCS, a file:// bucket) the store offers no such
// condition, and the delete follows the last check unconditionally: an
// object uploaded again between the two is deleted (docs/verify.md).
func copyThenDelete(ctx context.Context, src, dst store.Store, c Result, before store.Entry, dstKey string) error {
	rc, err := src.Open(ctx, c.Key)
	if err != nil {
		return err
	}
	h := sha256.New()
	err = dst.Put(ctx, dstKey, io.TeeReader(rc, h), store.PutOptions{IfNotExist: true, Metadata: map[string]string{"sha256": c.Actual}})
	rc.Close()
	if err != nil {
		return fmt.Errorf("copy to quarantine: %w", err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != c.Actual {
		return fmt.Errorf("kept: %w, while copying (now %s); the copy stays in quarantine", errChanged, sum)
	}
	if sum, _, err := hashKey(ctx, dst, dstKey); err != nil || sum != c.Actual {
		return fmt.Errorf("kept: the quarantine copy could not be proven (%v, %s)", err, sum)
	}
	if now, err := src.Stat(ctx, c.Key); err != nil {
		return fmt.Errorf("copied, but not removed from the store: %w", err)
	} else if !sameObject(before, now) {
		return fmt.Errorf("kept: %w (a writer replaced it while it was copied); the copy stays in quarantine", errChanged)
	}
	if br, ok := store.AsBatchRemover(src); ok && br.DeletesIfMatch() && before.ETag != "" {
		err = br.DeleteMany(ctx, []string{c.Key}, []string{before.ETag}, nil)[0]
		if errors.Is(err, store.ErrChanged) {
			return fmt.Errorf("kept: %w (a writer uploaded it again while it was copied); the copy stays in quarantine: %v", errChanged, err)
		}
	} else {
		err = src.Delete(ctx, c.Key)
	}
	if err != nil {
		return fmt.Errorf("copied, but not removed from the store: %w", err)
	}
	return nil
}

// checkedLocalMover is a local store's rename into another local store,
// checked on the file it renames (store.LocalStore).
type checkedLocalMover interface {
	MoveToIfUnchanged(ctx context.Context, key string, dst *store.LocalStore, dstKey string, size int64, modTime time.Time) error
	Dir() string
}

// moveBack renames dstKey of the quarantine q back to key of the store in
// dir, never over anything.
func moveBack(ctx context.Context, q *store.LocalStore, dstKey, dir, key string) error {
	st, err := store.OpenLocal(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	return q.MoveTo(ctx, dstKey, st, key)
}

// stillCorrupt hashes key of st and returns nil only if it still hashes to
// c.Actual, the corrupt digest, which is not the one its name promises.
func stillCorrupt(ctx context.Context, st store.Store, key string, c Result) error {
	sum, _, err := hashKey(ctx, st, key)
	return corruptSum(sum, err, c)
}

// corruptSum is stillCorrupt's verdict on sum, the digest just read (or err,
// why it could not be).
func corruptSum(sum string, err error, c Result) error {
	switch {
	case err != nil:
		return fmt.Errorf("re-read before moving: %w", err)
	case c.Expected != "" && sum == c.Expected:
		return fmt.Errorf("kept: %w: it is intact now (its bytes hash to its name)", errChanged)
	case sum != c.Actual:
		return fmt.Errorf("kept: %w (now %s)", errChanged, sum)
	}
	return nil
}

// sameObject reports whether two descriptions of a key are of one write of
// it: the same size and time, and on a bucket the same ETag.
func sameObject(a, b store.Entry) bool {
	return a.Size == b.Size && a.ModTime.Equal(b.ModTime) && a.ETag == b.ETag
}

func hashKey(ctx context.Context, st store.Store, key string) (string, int64, error) {
	return newHasher(st, false, nil).hash(ctx, key)
}

// hashInternal hashes the file name of st's internal folder in.
func hashInternal(ctx context.Context, st store.Store, in store.Internal, name string) (string, error) {
	rc, err := in.OpenInternal(ctx, name)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	sum, _, err := newHasher(st, false, nil).hashReader(ctx, rc, name)
	return sum, err
}
