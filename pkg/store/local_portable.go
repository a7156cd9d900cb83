//go:build !linux

package store

import (
	"io"
	"os"
)

// statAt lstats the entry through the store root (see local_linux.go for the
// one-system-call version).
func statAt(_ *os.File, root *os.Root, path string, _ string) (entryStat, error) {
	fi, err := root.Lstat(path)
	if err != nil {
		return entryStat{}, err
	}
	return entryStat{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode()}, nil
}

// openBeneath is Linux's openat2 path; elsewhere OpenEntry takes the portable one.
func (s *LocalStore) openBeneath(key string) (io.ReadCloser, entryStat, bool, error) {
	return nil, entryStat{}, false, nil
}

// readDir lists a directory's entries with their types.
func readDir(f *os.File) ([]dirent, error) {
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirent, len(des))
	for i, de := range des {
		out[i] = dirent{name: de.Name(), typ: de.Type()}
	}
	return out, nil
}

// readDirEach calls fn for each entry of f.
func readDirEach(f *os.File, fn func(dirent) error) error {
	des, err := readDir(f)
	if err != nil {
		return err
	}
	for _, d := range des {
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

// openat2Dir is Linux's one-call resolution; elsewhere openDir walks.
func openat2Dir(rootFD int, dir string) (fd int, ok bool, err error) { return -1, false, nil }

// renameat2NoReplace is Linux's atomic no-replace rename; elsewhere a hard
// link and an unlink do the same (see renameNoReplaceAt).
func renameat2NoReplace(fromFD int, from string, toFD int, to string) (ok bool, err error) {
	return false, nil
}
