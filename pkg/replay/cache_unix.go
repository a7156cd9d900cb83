//go:build unix

package replay

import "syscall"

// entryOpenFlags open a cache entry without following a link in its place
// (ELOOP) and without blocking on a FIFO swapped in.
const entryOpenFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
