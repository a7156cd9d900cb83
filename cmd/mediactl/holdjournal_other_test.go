//go:build !unix

package main

import (
	"errors"
	"os"
)

// lockJournalFile is the journal's lock only where it is a flock.
func lockJournalFile(*os.File) error {
	return errors.New("holdjournal takes a flock, which this system does not have")
}
