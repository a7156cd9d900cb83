package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// ErrCrossDevice is wrapped by MoveTo when the two stores are on different file
// systems, where a move cannot be a rename: the caller copies, verifies the
// copy, then deletes.
var ErrCrossDevice = errors.New("stores are on different file systems")

// MoveTo moves blob key of s to dstKey in the local store dst, by renaming on the
// same file system. Like Rename it never replaces an existing key (ErrExist), and
// it refuses a key that is a symlink, lies below one, or is not a regular file.
// Quarantine uses it to take a corrupt blob out of the store without copying it.
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
	if err := s.checkParents(key); err != nil {
		return s.errorf(op, key, err)
	}
	fi, err := s.root.Lstat(key)
	if err != nil {
		return s.errorf(op, key, err)
	}
	if !fi.Mode().IsRegular() {
		return s.errorf(op, key, notRegular(fi.Mode()))
	}
	if err := dst.checkParents(dstKey); err != nil {
		return dst.errorf("move into", dstKey, err)
	}
	parent := path.Dir(dstKey)
	if err := dst.mkdirAll(parent); err != nil {
		return dst.errorf("move into", dstKey, err)
	}
	from := filepath.Join(s.dir, filepath.FromSlash(key))
	to := filepath.Join(dst.dir, filepath.FromSlash(dstKey))
	// A hard link publishes the name only if it does not exist yet; the source
	// name is removed after. Both are renames of directory entries: no data moves.
	if err := os.Link(from, to); err != nil {
		if errors.Is(err, syscall.EXDEV) {
			return fmt.Errorf("store %s: %s: %w", s.dir, op, ErrCrossDevice)
		}
		if errors.Is(err, fs.ErrExist) {
			return dst.errorf("move into", dstKey, fs.ErrExist)
		}
		return s.errorf(op, key, err)
	}
	if err := s.root.Remove(key); err != nil {
		return s.errorf(op, key, err)
	}
	if err := dst.syncDir(parent); err != nil {
		return dst.errorf("move into", dstKey, err)
	}
	return s.syncDir(path.Dir(key))
}
