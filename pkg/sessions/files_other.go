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

// docKey is a document's identity as the walk's read set knows it: its path,
// and its modification time (ns) and size. fs.FileInfo has no change time
// here; a session saved again (renamed over) keeps its path, and the
// modification time and size are what can tell it is another version. Where
// they change, the session is read again, which is the safe side.
type docKey struct {
	fileKey
	mtime, size int64
}

func docIdentity(fi fs.FileInfo, path string) (docKey, error) {
	id, err := fileIdentity(fi, path)
	return docKey{id, fi.ModTime().UnixNano(), fi.Size()}, err
}

func openFile(path string) (*os.File, error) { return os.Open(path) }

// dirWritable reports whether this process may create files in dir; where it
// cannot tell, it says yes (the normal, locking read).
func dirWritable(dir string) bool { return true }

// changeTimeOf: fs.FileInfo has no change time here.
func changeTimeOf(fs.FileInfo) (int64, bool) { return 0, false }
