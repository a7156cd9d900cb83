package forget

import (
	"fmt"
	"slices"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// TrashDirError is Run's error for a folder of Options.TrashDirs that holds
// no trash of the stores. Err is trash.AtDir's for the first local store
// (trash.ErrNoTrashFolder, *trash.OwnerError, *trash.UnclaimedError,
// *trash.PlaceError, trash.ErrNeedsLocal).
type TrashDirError struct {
	Dir string
	Err error
}

func (e *TrashDirError) Error() string { return fmt.Sprintf("trash folder %s: %v", e.Dir, e.Err) }
func (e *TrashDirError) Unwrap() error { return e.Err }

// trashDir is a folder of Options.TrashDirs, opened for the store whose
// trash it holds.
type trashDir struct {
	s   int
	dir string
	// st is the store with its trash in dir; lock is the store's lock
	// through st (nil in a dry run).
	st   store.Store
	lock *storelock.Lock
}

// openTrashDirs finds, for each folder of Options.TrashDirs, the store whose
// trash it holds (the one its record names) and opens the folder for it. A
// folder given twice, under any name, is opened once. On an error the
// folders opened so far are closed.
func (r *run) openTrashDirs() error {
	for _, dir := range r.opts.TrashDirs {
		if slices.ContainsFunc(r.tdirs, func(td *trashDir) bool { return sameDir(td.dir, dir) }) {
			continue
		}
		td, err := r.openTrashDir(dir)
		if err == nil {
			// AtDir checks the folder against its own store; it must be
			// outside every store given (the one a folder claimed by
			// generated/ sits in, inbound/, would list its runs as blobs).
			err = r.outsideStores(dir)
			if err != nil {
				td.st.Close()
			}
		}
		if err != nil {
			r.closeTrashDirs()
			return &TrashDirError{Dir: dir, Err: err}
		}
		r.tdirs = append(r.tdirs, td)
		r.rep.TrashDirs = append(r.rep.TrashDirs, dir)
	}
	if len(r.rep.TrashDirs) > 0 {
		r.rep.TrashDir = r.rep.TrashDirs[0]
	}
	return nil
}

// outsideStores refuses dir if it is inside, or holds, a local store given
// (a *trash.PlaceError).
func (r *run) outsideStores(dir string) error {
	for _, t := range r.stores {
		if l, ok := store.Unwrap(t.Store).(store.Local); ok {
			if err := trash.CheckDir(l.Dir(), dir); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *run) closeTrashDirs() {
	for _, td := range r.tdirs {
		td.st.Close()
	}
	r.tdirs = nil
}

// openTrashDir opens dir for the first local store whose trash it holds;
// its error is trash.AtDir's for the first local store.
func (r *run) openTrashDir(dir string) (*trashDir, error) {
	var first error
	for i, t := range r.stores {
		if _, ok := store.Unwrap(t.Store).(store.Local); !ok {
			continue
		}
		ts, err := trash.AtDir(t.Store, dir, trash.Owned)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		td := &trashDir{s: i, dir: dir, st: ts}
		if r.locks[i] != nil {
			if td.lock, err = r.locks[i].Through(ts); err != nil {
				ts.Close()
				return nil, err
			}
		}
		return td, nil
	}
	if first == nil {
		first = trash.ErrNeedsLocal
	}
	return nil, first
}

// moveLock is the lock this run's own trash run of store s goes through:
// into the first trash folder given that holds that store's trash, if any.
func (r *run) moveLock(s int) *storelock.Lock {
	for _, td := range r.tdirs {
		if td.s == s && td.lock != nil {
			return td.lock
		}
	}
	return r.locks[s]
}

// runLock is the lock that reaches the trash run at of store s: the
// folder's when it is kept in one, else the store's own.
func (r *run) runLock(s int, at runAt) *storelock.Lock {
	if at.td != nil {
		return at.td.lock
	}
	return r.locks[s]
}

// trashPlace is where a store keeps trash runs: its own trash (td nil),
// or a folder outside it.
type trashPlace struct {
	st store.Store
	td *trashDir
}

// trashes are the places store s keeps trash runs in: its own trash, and
// the trash folders outside it that were given.
func (r *run) trashes(s int) []trashPlace {
	out := []trashPlace{{r.stores[s].Store, nil}}
	for _, td := range r.tdirs {
		if td.s == s {
			out = append(out, trashPlace{td.st, td})
		}
	}
	return out
}
