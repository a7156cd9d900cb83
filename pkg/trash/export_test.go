package trash

import "github.com/mediactl/mediactl/pkg/store"

// DirStore and PeekDirStore are the two stores AtDir opens (MoveInto, and
// the others), for the tests of each one alone.
var (
	DirStore     = dirStore
	PeekDirStore = peekDirStore
)

// WithDir is st with its trash in the folder dir, already open, neither
// checked nor claimed (see trashDirStore): for the tests of the wrapper
// itself.
func WithDir(st *store.LocalStore, dir *store.LocalStore) store.Store {
	return &trashDirStore{st: st, dir: dir}
}
