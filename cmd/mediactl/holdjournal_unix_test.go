//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockJournalFile takes the lock a migrate or rollback holds on its journal
// while it runs: an exclusive flock on the file, released when f closes.
func lockJournalFile(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}
