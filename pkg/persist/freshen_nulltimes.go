//go:build darwin || netbsd

package persist

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// freshen sets the access and modification times of the file at path to the
// current time, without following a symbolic link. golang.org/x/sys/unix
// does not define UTIME_NOW on these systems; utimensat with no times is
// the same request (POSIX: both times set to the current time, with write
// permission on the file sufficing). A missing file is an error wrapping
// fs.ErrNotExist.
func freshen(path string) error {
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, nil, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "utimensat", Path: path, Err: err}
	}
	return nil
}
