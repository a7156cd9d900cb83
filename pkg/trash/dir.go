package trash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// trashDirStore is st with its trash in the local folder dir instead of in
// its own internal folder: what Move, Restore, Runs and Purge move into
// "trash/RUN/KEY" lands in dir as "RUN/KEY". Everything else — the blobs, the
// lock — stays with st. Both are local folders on one file system, so that
// every move is a rename: a blob is always in one place or the other.
// It deliberately does not offer the store's batch move, which would move
// into the store's own internal folder; its checked move of one blob at a
// time (store.CheckedInternalMover) takes that move's place.
type trashDirStore struct {
	st  *store.LocalStore
	dir *store.LocalStore
	// ownsDir is set when the folder was opened for this store (dirStore,
	// peekDirStore): Close closes it. The store st is always its caller's.
	ownsDir bool
}

var (
	_ store.Store                = (*trashDirStore)(nil)
	_ store.Internal             = (*trashDirStore)(nil)
	_ store.CheckedInternalMover = (*trashDirStore)(nil)
	_ store.Wrapper              = (*trashDirStore)(nil)
)

// Unwrap is the store whose blobs these are: only the trash is elsewhere.
func (t *trashDirStore) Unwrap() store.Store { return t.st }

func (t *trashDirStore) Location() string { return t.st.Location() }
func (t *trashDirStore) List(ctx context.Context, prefix string, fn func(store.Entry) error) error {
	return t.st.List(ctx, prefix, fn)
}
func (t *trashDirStore) Stat(ctx context.Context, key string) (store.Entry, error) {
	return t.st.Stat(ctx, key)
}
func (t *trashDirStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	return t.st.Open(ctx, key)
}
func (t *trashDirStore) Put(ctx context.Context, key string, r io.Reader, o store.PutOptions) error {
	return t.st.Put(ctx, key, r, o)
}
func (t *trashDirStore) Delete(ctx context.Context, key string) error { return t.st.Delete(ctx, key) }

// Close closes the trash folder when this store opened it; the store whose
// trash it is stays open, its caller's.
func (t *trashDirStore) Close() error {
	if t.ownsDir {
		return t.dir.Close()
	}
	return nil
}

// inTrash reports whether an internal name belongs to the trash, and its key
// in the trash folder.
func inTrash(name string) (string, bool) {
	return strings.CutPrefix(name, Dir+"/")
}

func (t *trashDirStore) PutInternal(ctx context.Context, name string, r io.Reader, o store.PutOptions) error {
	if k, ok := inTrash(name); ok {
		return t.dir.Put(ctx, k, r, o)
	}
	return t.st.PutInternal(ctx, name, r, o)
}

func (t *trashDirStore) MoveToInternal(ctx context.Context, key, name string) error {
	k, ok := inTrash(name)
	if !ok {
		return t.st.MoveToInternal(ctx, key, name)
	}
	err := t.st.MoveTo(ctx, key, t.dir, k)
	if errors.Is(err, store.ErrCrossDevice) {
		return fmt.Errorf("%w: choose a trash directory on the file system of %s", err, t.st.Location())
	}
	return err
}

// MoveToInternalIf is MoveToInternal of a blob that must still be as m
// describes it (see store.CheckedInternalMover).
func (t *trashDirStore) MoveToInternalIf(ctx context.Context, m store.InternalMove) error {
	k, ok := inTrash(m.Name)
	if !ok {
		return fmt.Errorf("trash: %s is not in the trash", m.Name)
	}
	err := t.st.MoveToIfUnchanged(ctx, m.Key, t.dir, k, m.Size, m.ModTime)
	if errors.Is(err, store.ErrCrossDevice) {
		return fmt.Errorf("%w: choose a trash directory on the file system of %s", err, t.st.Location())
	}
	return err
}

func (t *trashDirStore) MoveFromInternal(ctx context.Context, name, key string) error {
	k, ok := inTrash(name)
	if !ok {
		return t.st.MoveFromInternal(ctx, name, key)
	}
	return t.dir.MoveTo(ctx, k, t.st, key)
}

func (t *trashDirStore) OpenInternal(ctx context.Context, name string) (io.ReadCloser, error) {
	if k, ok := inTrash(name); ok {
		return t.dir.Open(ctx, k)
	}
	return t.st.OpenInternal(ctx, name)
}

func (t *trashDirStore) DeleteInternal(ctx context.Context, name string) error {
	if k, ok := inTrash(name); ok {
		return t.dir.Delete(ctx, k)
	}
	return t.st.DeleteInternal(ctx, name)
}

// ListInternal lists the trash from the folder and every other internal
// name from the store, in one lexical order: a prefix that stops short of
// the trash's own ("", "tr", "trash") lists both, the trash's names where
// they sort, and none of the store's own internal trash, which this store
// never reads.
func (t *trashDirStore) ListInternal(ctx context.Context, prefix string, fn func(store.Entry) error) error {
	listTrash := func(k string) error {
		return t.dir.List(ctx, k, func(e store.Entry) error {
			e.Key = Dir + "/" + e.Key
			return fn(e)
		})
	}
	if k, ok := inTrash(prefix); ok {
		return listTrash(k)
	}
	if !strings.HasPrefix(Dir+"/", prefix) {
		return t.st.ListInternal(ctx, prefix, fn)
	}
	// Every trash name sorts between "trash/" and "trash0" ('0' follows
	// '/'), so the folder's listing goes before the first other name past
	// them.
	listed := false
	err := t.st.ListInternal(ctx, prefix, func(e store.Entry) error {
		if _, ok := inTrash(e.Key); ok {
			return nil
		}
		if !listed && e.Key > Dir+"/" {
			listed = true
			if err := listTrash(""); err != nil {
				return err
			}
		}
		return fn(e)
	})
	if err != nil || listed {
		return err
	}
	return listTrash("")
}

// ErrNeedsLocal is returned by OpenDir for a store that is not a local
// folder: a bucket's trash is its own key prefix.
var ErrNeedsLocal = errors.New("a trash directory needs a local store")

// OpenDir is the locked store with its trash in the local folder dir: it
// checks dir (CheckDir), creates it if needed, and returns the lock as a lock
// on the store with that trash (a trashDirStore).
func OpenDir(l *storelock.Lock, dir string) (*storelock.Lock, error) {
	st, err := dirStore(l.Store(), dir)
	if err != nil {
		return nil, err
	}
	return l.Through(st)
}

// OpenOwnDir is OpenDir for what makes no run (a rollback's restore): dir
// must hold the store's trash already (see peekDirStore); it is neither
// created nor claimed.
func OpenOwnDir(l *storelock.Lock, dir string) (*storelock.Lock, error) {
	st, err := peekDirStore(l.Store(), dir)
	if err != nil {
		return nil, err
	}
	return l.Through(st)
}

// dirStore is st with its trash in the local folder dir, for reading the
// runs kept there (Runs) or taking the lock through it: it checks dir
// (CheckDir), creates it if needed, and claims it for st (see claimDir): a
// folder that holds another store's trash is refused with an *OwnerError.
// Its Close closes the folder, not st.
func dirStore(st store.Store, dir string) (store.Store, error) {
	ls, err := checkedLocal(st, dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("trash: %w", err)
	}
	td, err := store.OpenLocal(dir)
	if err != nil {
		return nil, fmt.Errorf("trash: %w", err)
	}
	if err := claimDir(ls, td, dir); err != nil {
		td.Close()
		return nil, err
	}
	return &trashDirStore{st: ls, dir: td, ownsDir: true}, nil
}

// peekDirStore is dirStore for what makes no run (a dry run, gc runs,
// restore, purge): it checks dir as dirStore does, and the store its record
// names, but creates nothing and claims nothing. Only a run that moves blobs
// into the folder claims it: a folder that does not exist is an error
// wrapping fs.ErrNotExist, and one that records no store an
// *UnclaimedError; neither holds runs of st, whatever its folders are named.
// Its Close closes the folder, not st.
func peekDirStore(st store.Store, dir string) (store.Store, error) {
	ls, err := checkedLocal(st, dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("trash: %w", err)
	}
	td, err := store.OpenLocal(dir)
	if err != nil {
		return nil, fmt.Errorf("trash: %w", err)
	}
	me, err := store.RealPath(ls.Dir())
	if err != nil {
		td.Close()
		return nil, fmt.Errorf("trash: %s: %w", ls.Dir(), err)
	}
	if err := checkOwner(td, dir, me); err != nil {
		td.Close()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &UnclaimedError{Dir: dir, Store: me, Record: filepath.Join(dir, store.InternalDir, ownerName)}
		}
		return nil, err
	}
	return &trashDirStore{st: ls, dir: td, ownsDir: true}, nil
}

// checkedLocal is st as a local store, when dir may hold its trash
// (CheckDir).
func checkedLocal(st store.Store, dir string) (*store.LocalStore, error) {
	ls, ok := st.(*store.LocalStore)
	if !ok {
		return nil, fmt.Errorf("trash: %s: %w", st.Location(), ErrNeedsLocal)
	}
	if err := CheckDir(ls.Dir(), dir); err != nil {
		return nil, err
	}
	return ls, nil
}

// ownerName is the internal file of a trash folder that names the store
// whose trash it holds: its real path and a newline.
const ownerName = "trash-of"

// claimDir records ls as the store whose trash td holds, or, when td already
// names a store, checks that it is ls. A run in the folder names no store,
// and restoring it moves its blobs into whichever store the folder is given
// with, purging it deletes them: two stores given one folder would restore
// and purge each other's runs. Stores are told apart by real path, so every
// spelling of one store is the same store. Only dirStore claims, for a run
// that moves blobs into the folder; a folder used before this record existed
// is claimed by the first such run.
func claimDir(ls, td *store.LocalStore, dir string) error {
	ctx := context.Background()
	me, err := store.RealPath(ls.Dir())
	if err != nil {
		return fmt.Errorf("trash: %s: %w", ls.Dir(), err)
	}
	err = td.PutInternal(ctx, ownerName, strings.NewReader(me+"\n"), store.PutOptions{IfNotExist: true})
	if err == nil {
		return nil
	}
	if !errors.Is(err, store.ErrExist) {
		return fmt.Errorf("trash: record the store of %s: %w", dir, err)
	}
	// Claimed before, maybe a moment ago by another store: read who.
	return checkOwner(td, dir, me)
}

// checkOwner returns an *OwnerError when the folder td (dir) records another
// store than me (a real path) as the one whose trash it holds.
func checkOwner(td *store.LocalStore, dir, me string) error {
	ctx := context.Background()
	r, err := td.OpenInternal(ctx, ownerName)
	if err != nil {
		return fmt.Errorf("trash: read the store of %s: %w", dir, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return fmt.Errorf("trash: read the store of %s: %w", dir, err)
	}
	if owner := strings.TrimSuffix(string(b), "\n"); owner != me {
		return &OwnerError{Dir: dir, Owner: owner, Store: me, Record: filepath.Join(dir, store.InternalDir, ownerName)}
	}
	return nil
}

// OwnerError is returned by AtDir, OpenDir and OpenOwnDir for a trash folder
// that holds the trash of another store.
type OwnerError struct {
	Dir   string // the folder as given
	Owner string // the store whose trash it holds, as recorded
	Store string // the store it was given to (its real path)
	// Record is the file that names Owner: removing it lets the next store
	// that opens the folder claim it (for a store that moved).
	Record string
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("%s holds the trash of the store %s, not of %s", e.Dir, e.Owner, e.Store)
}

// UnclaimedError is returned by AtDir (Owned) and OpenOwnDir for a folder
// that records no store: no run has moved blobs into it, so nothing in it is
// a store's trash.
type UnclaimedError struct {
	Dir   string // the folder as given
	Store string // the store it was given to (its real path)
	// Record is the file a run that moves blobs into the folder writes, the
	// store's real path and a newline: a folder that holds this store's runs
	// from before the record existed is claimed by writing it.
	Record string
}

func (e *UnclaimedError) Error() string {
	return fmt.Sprintf("%s holds no trash of the store %s: no gc --delete or migrate --delete-source moved its blobs there (there is no %s)", e.Dir, e.Store, e.Record)
}
