//go:build unix && !linux && !darwin

package sessions

import (
	"io/fs"
	"syscall"
)

// changeTime is, on the other Unix systems, the modification time in
// nanoseconds: Stat_t's change time field is spelled differently on each.
// It misses what only moves the change time (a rename, a new hard link), so a
// new file on a freed inode is told apart by its write's time and its size.
func changeTime(fi fs.FileInfo, _ *syscall.Stat_t) int64 { return fi.ModTime().UnixNano() }
