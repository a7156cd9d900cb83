//go:build unix

package migrate

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockJournal takes an exclusive lock on the journal f for as long as f is
// open (flock: released when the process ends, however it ends).
func lockJournal(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case errors.Is(err, unix.EWOULDBLOCK):
			return errJournalLocked
		case errors.Is(err, unix.EINTR):
			continue
		}
		return err
	}
}
