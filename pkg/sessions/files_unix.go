//go:build unix

package sessions

import (
	"io/fs"
	"os"
	"syscall"
)

// fileIdentity is a file's device and inode.
func fileIdentity(fi fs.FileInfo, path string) fileKey {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileKey{path: path}
}

// openFile opens a file for reading without blocking: a named pipe swapped in
// for a session file since it was listed must not hang the walk.
func openFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// dirWritable reports whether this process may create files in dir.
func dirWritable(dir string) bool {
	return syscall.Access(dir, 2 /* W_OK */) == nil
}
