//go:build !aix && !darwin && !dragonfly && !freebsd && !linux && !netbsd && !openbsd && !solaris

package persist

import (
	"os"
	"time"
)

// freshen sets the access and modification times of the file at path to the
// current time. os.Chtimes follows a symbolic link and may need ownership of
// the file; it is the portable way on systems without utimensat. A missing
// file is an error wrapping fs.ErrNotExist.
func freshen(path string) error {
	now := time.Now()
	return os.Chtimes(path, now, now)
}

// syncDir does nothing: these systems cannot sync a folder through an
// os.File.
func syncDir(string) error { return nil }
