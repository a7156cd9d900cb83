package trash

import (
	"fmt"
	"path/filepath"

	"github.com/mediactl/mediactl/pkg/store"
)

// PlaceError says why a folder cannot hold removed blobs of a store.
type PlaceError struct {
	Dir   string // the folder as given
	Real  string // its real path, symbolic links resolved
	Store string // the store's directory
	// Relation is "inside" (the folder is the store or below it: its
	// contents would be listed as blobs), "contains" (the store is below
	// the folder) or "root" (the folder is /).
	Relation string
}

func (e *PlaceError) Error() string {
	switch e.Relation {
	case "inside":
		return fmt.Sprintf("%s (really %s) is inside the store %s", e.Dir, e.Real, e.Store)
	case "contains":
		return fmt.Sprintf("%s (really %s) contains the store %s", e.Dir, e.Real, e.Store)
	}
	return fmt.Sprintf("%s (really %s) is the root of the file system", e.Dir, e.Real)
}

// CheckDir refuses a folder for removed blobs (a trash directory, a
// quarantine) that, with symbolic links resolved in both, is the store or
// inside it, contains it, or is /. The folder need not exist yet: its
// nearest existing ancestor is resolved. It returns a *PlaceError.
func CheckDir(storeDir, dir string) error {
	real, err := store.RealPath(dir)
	if err != nil {
		return fmt.Errorf("trash: %s: %w", dir, err)
	}
	st, err := store.RealPath(storeDir)
	if err != nil {
		return fmt.Errorf("trash: %s: %w", storeDir, err)
	}
	e := &PlaceError{Dir: dir, Real: real, Store: storeDir}
	switch {
	case real == string(filepath.Separator):
		e.Relation = "root"
	case store.Within(real, st):
		e.Relation = "inside"
	case store.Within(st, real):
		e.Relation = "contains"
	default:
		return nil
	}
	return e
}
