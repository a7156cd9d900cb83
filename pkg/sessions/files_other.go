//go:build !unix

package sessions

import (
	"io/fs"
	"os"
	"path/filepath"
)

// fileKey is a file's identity: its resolved absolute path.
type fileKey struct{ path string }

// fileIdentity is a file's resolved absolute path, where the platform offers
// no device and inode through fs.FileInfo.
func fileIdentity(fi fs.FileInfo, path string) (fileKey, error) {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	if a, err := filepath.Abs(path); err == nil {
		path = a
	}
	return fileKey{path: path}, nil
}

func openFile(path string) (*os.File, error) { return os.Open(path) }

// dirWritable reports whether this process may create files in dir; where it
// cannot tell, it says yes (the normal, locking read).
func dirWritable(dir string) bool { return true }
