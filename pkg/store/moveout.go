package store

import (
	"context"
	"errors"
	"fmt"
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
		return nil
	}, true)
	if err != nil {
		return fmt.Errorf("store %s: %s as %s: %w", s.dir, op, dstKey, plainErr(err))
	}
	return nil
}
