//go:build unix

package store

import "syscall"

// openFlags are added when a local store opens a blob: O_NONBLOCK keeps the open of
// a FIFO (swapped in after the lstat check) from blocking; it has no effect on the
// reads of a regular file.
const openFlags = syscall.O_NONBLOCK
