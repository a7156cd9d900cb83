//go:build unix

package storelock

import (
	"errors"
	"syscall"
)

// processGone reports whether no process has id pid (signal 0 probes without
// signalling).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
