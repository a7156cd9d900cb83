//go:build aix || dragonfly || freebsd || linux || openbsd || solaris

package persist

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// freshen sets the access and modification times of the file at path to the
// current time, without following a symbolic link. UTIME_NOW, unlike an
// explicit time, needs only write permission on the file, not ownership. A
// missing file is an error wrapping fs.ErrNotExist.
func freshen(path string) error {
	now := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, now, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "utimensat", Path: path, Err: err}
	}
	return nil
}
