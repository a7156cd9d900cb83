//go:build unix

package sessions

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// fileKey is a file's identity: its device and inode.
type fileKey struct{ dev, ino uint64 }

// fileIdentity is a file's device and inode. The os package's FileInfo always
// carries them here; one that does not is reported, not given a made-up
// identity (a wrong one could have a document taken for one already read).
func fileIdentity(fi fs.FileInfo, path string) (fileKey, error) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
	}
	return fileKey{}, fmt.Errorf("%s: no device and inode in its file information (%T)", path, fi.Sys())
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
