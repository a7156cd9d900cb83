//go:build windows

package migrate

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockJournal takes an exclusive lock on the journal f for as long as f is
// open (LockFileEx, released when the handle closes). Windows' byte-range
// locks keep other handles from reading what they cover: the lock is on one
// byte far beyond any journal's end, so a dry run can still read it.
func lockJournal(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: 0x7fffffff}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errJournalLocked
	}
	return err
}
