//go:build !unix

package persist

// umask returns -1: this system has no umask, and modes are not checked.
func umask() int { return -1 }
