//go:build !unix

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// openFlags are added when a local store opens a blob; see local_unix.go.
const openFlags = 0

// The portable moves. Without directory descriptors to rename relative to,
// they go through the store's os.Root, which never resolves a path outside the
// store directory; the folders on the way are checked by name before each move
// and a link swapped in after the check can redirect a move to another place
// inside the store (never outside it). MoveTo between two stores links by
// absolute path after the same check, so there the window remains.

// moveEntry moves from of s to to of dst; see local_unix.go.
func (s *LocalStore) moveEntry(from string, dst *LocalStore, to string, check func(entryStat) error, sync bool) error {
	if err := s.checkParents(from); err != nil {
		return err
	}
	fi, err := s.root.Lstat(from)
	if err != nil {
		return plainErr(err)
	}
	if err := check(entryStat{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode()}); err != nil {
		return err
	}
	if err := dst.checkParents(to); err != nil {
		return fmt.Errorf("destination: %v: %w", err, ErrUnsafePath)
	}
	parent := path.Dir(to)
	if err := dst.mkdirAll(parent); err != nil {
		return fmt.Errorf("destination: %w", plainErr(err))
	}
	if dst == s {
		err = s.root.Link(from, to)
	} else {
		err = os.Link(filepath.Join(s.dir, filepath.FromSlash(from)), filepath.Join(dst.dir, filepath.FromSlash(to)))
	}
	switch {
	case err == nil:
		if err := s.root.Remove(from); err != nil {
			return plainErr(err)
		}
	case errors.Is(err, fs.ErrExist):
		return fs.ErrExist
	case errors.Is(err, syscall.EXDEV):
		return ErrCrossDevice
	case dst == s:
		// No hard links here: check, then rename.
		if _, err := s.root.Lstat(to); err == nil {
			return fs.ErrExist
		} else if !errors.Is(err, fs.ErrNotExist) {
			return plainErr(err)
		}
		if err := s.root.Rename(from, to); err != nil {
			return plainErr(err)
		}
	default:
		return plainErr(err)
	}
	if !sync {
		return nil
	}
	if err := dst.syncDir(parent); err != nil {
		return err
	}
	if fromParent := path.Dir(from); dst != s || fromParent != parent {
		return s.syncDir(fromParent)
	}
	return nil
}

// removeEntry removes the regular file or symbolic link name.
func (s *LocalStore) removeEntry(name string) error {
	if err := s.checkParents(name); err != nil {
		return err
	}
	fi, err := s.root.Lstat(name)
	if err != nil {
		return plainErr(err)
	}
	if !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
		return notRegular(fi.Mode())
	}
	// Remove unlinks a file; should a directory have been swapped in, it only
	// removes it when empty. It never removes a tree.
	return plainErr(s.root.Remove(name))
}

// folderPresent reports whether the folder name is there; see local_unix.go.
func (s *LocalStore) folderPresent(name string) bool {
	if s.checkParents(name+"/x") != nil {
		return false
	}
	fi, err := s.root.Lstat(name)
	return err == nil && fi.IsDir()
}

// removeEmptyDir removes the folder name when it is empty; see local_unix.go.
func (s *LocalStore) removeEmptyDir(name string) {
	if s.checkParents(name) != nil {
		return
	}
	if fi, err := s.root.Lstat(name); err != nil || !fi.IsDir() {
		return
	}
	// Remove takes a folder only when it is empty.
	s.root.Remove(name)
}

// syncDir fsyncs directory name so that a rename or link in it is durable.
func (s *LocalStore) syncDir(name string) error {
	d, err := s.root.Open(name)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// chownLike does nothing where files have no Unix owners.
func (s *LocalStore) chownLike(name, dir string) error { return nil }
