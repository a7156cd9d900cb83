//go:build unix

package store

import (
	"os"
	"syscall"
)

// sameFileSystem reports whether the folders a and b are on one file system,
// where a rename from one to the other works. When either cannot be looked
// at, it says they are (and a failing rename reports the real error).
func sameFileSystem(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return true
	}
	sa, okA := fa.Sys().(*syscall.Stat_t)
	sb, okB := fb.Sys().(*syscall.Stat_t)
	return !okA || !okB || sa.Dev == sb.Dev
}
