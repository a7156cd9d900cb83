package trash

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/mediactl/mediactl/pkg/store"
)

// Use is what an operation does with a trash folder outside its store
// (--trash-dir).
type Use int

const (
	// MoveInto: a run that moves blobs into the folder (gc --delete,
	// migrate --delete-source) creates it and claims it for its store.
	MoveInto Use = iota
	// Plan: a dry run checks the folder but neither creates nor claims it;
	// one not there, or not claimed yet, holds nothing of the store's.
	Plan
	// Owned: restore, purge and runs make no run: the folder must hold this
	// store's trash already.
	Owned
)

// ErrNoTrashFolder is AtDir's error, for Owned, when the folder is not there.
var ErrNoTrashFolder = errors.New("no trash folder there")

// AtDir is st with its trash in the local folder dir, as use needs it: the
// store that keeps the trash there (the folder checked by CheckDir, and for
// MoveInto created and claimed for st: see dirStore, peekDirStore), or, for
// Plan, st itself when the folder is not there yet or not claimed (the plan
// is the same). Its errors are *PlaceError, *OwnerError, *UnclaimedError,
// ErrNeedsLocal and ErrNoTrashFolder.
func AtDir(st store.Store, dir string, use Use) (store.Store, error) {
	open := peekDirStore
	if use == MoveInto {
		open = dirStore
	}
	ts, err := open(st, dir)
	var unclaimed *UnclaimedError
	switch {
	case use == Plan && (errors.Is(err, fs.ErrNotExist) || errors.As(err, &unclaimed)):
		return st, nil
	case use == Owned && errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", dir, ErrNoTrashFolder)
	case err != nil:
		return nil, err
	}
	return ts, nil
}
