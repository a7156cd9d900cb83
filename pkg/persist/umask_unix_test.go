//go:build unix

package persist

import "syscall"

// umask returns the process's umask, or -1 where there is none. Tests of
// this package do not run in parallel: the umask is set back at once.
func umask() int {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return m
}
