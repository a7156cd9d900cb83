//go:build unix

package sessions

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// fileKey is a file's identity: its device and inode. A folder is known by it
// (its change time moves whenever an entry is added, which must not hide a
// link loop).
type fileKey struct{ dev, ino uint64 }

// docKey is a document's identity as the walk's read set knows it: device and
// inode, and the change time (ns) and size. Device and inode alone are not
// enough: ext4 hands a freed inode to the next new file at once, so a session
// created during the walk can get the inode of one read earlier, and forge's
// tmp + rename saves can cycle a name back to an inode it had before. The
// change time moves on every write, rename and link count change, so a new
// file on an old inode, or a name back on it, is a new version; the size tells
// two apart where the change times fall within one tick of the kernel's
// coarse clock. Hard links to one file share all four: read once. (The
// modification time adds nothing: whatever sets it sets the change time too.)
type docKey struct {
	fileKey
	ctime, size int64
}

// fileIdentity is a file's device and inode. The os package's FileInfo always
// carries them here; one that does not is reported, not given a made-up
// identity (a wrong one could have a document taken for one already read).
func fileIdentity(fi fs.FileInfo, path string) (fileKey, error) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
	}
	return fileKey{}, fmt.Errorf("%s: no device and inode in its file information (%T)", path, fi.Sys())
}

// docIdentity is a document's docKey; see fileIdentity for one without.
func docIdentity(fi fs.FileInfo, path string) (docKey, error) {
	id, err := fileIdentity(fi, path)
	if err != nil {
		return docKey{}, err
	}
	return docKey{id, changeTime(fi, fi.Sys().(*syscall.Stat_t)), fi.Size()}, nil
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

// changeTimeOf is a file's change time (ns), where the system gives it.
func changeTimeOf(fi fs.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return changeTime(fi, st), true
}
