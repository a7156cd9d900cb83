package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrCrossDevice is wrapped by MoveTo when the two stores are on different file
// systems, where a move cannot be a rename: the caller copies, verifies the
// copy, then deletes.
var ErrCrossDevice = errors.New("stores are on different file systems")

// MoveTo moves blob key of s to dstKey in the local store dst, by renaming on the
// same file system. Like Rename it never replaces an existing key (ErrExist), and
// it refuses a key that is a symlink, lies below one, or is not a regular file.
// Both sides are resolved as MoveManyToInternal resolves them, the destination's
// folders relative to dst's directory: a folder on the way to dstKey that is a
// link or a file fails the move with an error wrapping ErrUnsafePath.
// Quarantine and gc's trash directory use it to take a blob out of the store
// without copying it.
func (s *LocalStore) MoveTo(ctx context.Context, key string, dst *LocalStore, dstKey string) error {
	return s.moveTo(ctx, key, dst, dstKey, 0, time.Time{})
}

// MoveToIfUnchanged is MoveTo of a blob that must still have size and
// modTime, checked on the very file the rename takes (ErrChanged otherwise),
// as MoveManyToInternal checks its moves: a writer's file saved over the blob
// after the caller looked at it is never what is moved.
func (s *LocalStore) MoveToIfUnchanged(ctx context.Context, key string, dst *LocalStore, dstKey string, size int64, modTime time.Time) error {
	if modTime.IsZero() {
		return fmt.Errorf("store %s: move %s: no modification time to check", s.dir, key)
	}
	return s.moveTo(ctx, key, dst, dstKey, size, modTime)
}

// moveTo is MoveTo, checking size and modTime unless modTime is zero.
func (s *LocalStore) moveTo(ctx context.Context, key string, dst *LocalStore, dstKey string, size int64, modTime time.Time) error {
	op := "move " + key + " to " + dst.dir
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: %s: %w", s.dir, op, err)
	}
	if err := ValidKey(dstKey); err != nil {
		return fmt.Errorf("store %s: %s: %w", s.dir, op, err)
	}
	if err := ctx.Err(); err != nil {
		return s.errorf(op, key, err)
	}
	err := s.moveEntry(key, dst, dstKey, func(st entryStat) error {
		if !st.mode.IsRegular() {
			return notRegular(st.mode)
		}
		if !modTime.IsZero() && (st.size != size || !st.mtime.Equal(modTime)) {
			return ErrChanged
		}
		return nil
	}, true)
	if err != nil {
		return fmt.Errorf("store %s: %s as %s: %w", s.dir, op, dstKey, plainErr(err))
	}
	return nil
}
