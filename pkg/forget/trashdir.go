package forget

import (
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// trashDir is Options.TrashDir, opened for the store whose trash it holds.
type trashDir struct {
	s   int
	dir string
	// st is the store with its trash in dir; lock is the store's lock
	// through st (nil in a dry run).
	st   store.Store
	lock *storelock.Lock
}

// openTrashDir finds the store whose trash Options.TrashDir holds (the one
// its record names) and opens the folder for it. Its errors are
// trash.AtDir's for the first local store (trash.ErrNoTrashFolder,
// *trash.OwnerError, *trash.UnclaimedError, *trash.PlaceError,
// trash.ErrNeedsLocal).
func (r *run) openTrashDir() error {
	dir := r.opts.TrashDir
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
				return err
			}
		}
		r.tdir = td
		r.rep.TrashDir = dir
		return nil
	}
	if first == nil {
		first = trash.ErrNeedsLocal
	}
	return first
}

// moveLock is the lock this run's own trash run of store s goes through:
// into the trash folder outside the store, when it holds that store's.
func (r *run) moveLock(s int) *storelock.Lock {
	if r.tdir != nil && r.tdir.s == s && r.tdir.lock != nil {
		return r.tdir.lock
	}
	return r.locks[s]
}

// runLock is the lock that reaches the trash run at of store s.
func (r *run) runLock(s int, at runAt) *storelock.Lock {
	if at.dir != "" && r.tdir != nil && r.tdir.s == s {
		return r.tdir.lock
	}
	return r.locks[s]
}

// trashPlace is where a store keeps trash runs: its own trash (dir ""),
// or a folder outside it.
type trashPlace struct {
	st  store.Store
	dir string
}

// trashes are the places store s keeps trash runs in: its own trash, and
// the trash folder outside it.
func (r *run) trashes(s int) []trashPlace {
	out := []trashPlace{{r.stores[s].Store, ""}}
	if r.tdir != nil && r.tdir.s == s {
		out = append(out, trashPlace{r.tdir.st, r.tdir.dir})
	}
	return out
}
