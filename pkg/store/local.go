package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Permissions of what a local store creates: blobs are private to their owner
// (the convention of the agent runtimes whose folders mediactl manages), and so are
// the directories created for them.
const (
	localFileMode fs.FileMode = 0o600
	localDirMode  fs.FileMode = 0o700
)

// tmpDir is where Put stages new blobs, inside the store so that publishing them is
// a same-filesystem rename.
const tmpDir = InternalDir + "/tmp"

// LocalStore is a store on a local directory. It implements [Local].
//
// Every operation goes through an [os.Root] opened on the directory, so no key (and
// no symbolic link planted in the tree) can make it touch anything outside the
// directory. On top of that a LocalStore does not follow symbolic links at all: a
// key whose final element or any parent directory is a link is reported (List, Stat)
// or refused (Open, Put, Delete, Rename), never resolved.
//
// Moves and removals — Rename, Delete, MoveToInternal, MoveFromInternal,
// DeleteInternal, MoveManyToInternal, MoveTo; that is gc's sweep, restore and
// purge, the trash directory and quarantine — are safe against another process
// that swaps folders for symbolic links while they run. On Unix each one opens
// both parent folders as directory descriptors without following any link
// (Linux: openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, relative to the
// store directory's descriptor, or to the destination store's for MoveTo;
// elsewhere, and where openat2 is refused, one O_NOFOLLOW|O_DIRECTORY openat per
// folder), creates missing destination folders with mkdirat relative to the
// folder above, and renames (renameat2 RENAME_NOREPLACE, else link and unlink)
// or unlinks the last path element relative to those descriptors, for every
// single move. So a swapped link makes the move fail; it never redirects it,
// inside the store or out of it: an entry outside is never moved in, renamed or
// deleted, and a blob never lands outside. A removal never removes a directory
// and removes a link as a link. A folder on the way to a move's destination that
// is a link, a file or leaves the store fails the move with an error wrapping
// [ErrUnsafePath], never one that reads as a fact about the source. What
// remains possible is a folder renamed, not replaced, while its descriptor is in
// use: the move then lands in that folder wherever it now is.
//
// Other platforms (Windows) have the portable path: folders are checked by name
// before each operation, and the os.Root keeps a link swapped in concurrently
// from redirecting an operation outside the directory, though not to another
// place inside it; MoveTo links by absolute path after that check.
//
// Other checks of parent directories (Stat, Open, Put) are done by name before
// each operation; a link swapped in concurrently can at worst redirect the
// operation to another place inside the directory, never outside it.
//
// Files written by Put get mode 0600, directories created for them 0700. Put stages
// data in InternalDir/tmp, fsyncs it, publishes it with a rename (or a hard link for
// IfNotExist) and fsyncs the parent directory.
type LocalStore struct {
	dir  string
	root *os.Root
	// rootDir is the store directory opened through root (the same directory),
	// and rootFD its descriptor, which openat2 and the moves resolve from (see
	// OpenEntry, local_unix.go).
	rootDir   *os.File
	rootFD    int
	noOpenat2 atomic.Bool // openat2 is refused here: use the portable path
}

var _ Local = (*LocalStore)(nil)

// ErrUnsafePath is wrapped by the errors of a local store's moves when the way
// to the destination is unsafe: a folder on it is a symbolic link or a file, or
// it leaves the store (for example the trash folder became a link). It says
// nothing about the source, which stays where it was.
var ErrUnsafePath = errors.New("unsafe destination: a folder on the way is a symbolic link or not a folder")

// OpenLocal opens the existing directory dir as a store. The directory is made
// absolute and cleaned; it is opened once, so a LocalStore keeps addressing the same
// directory even if it is renamed while open.
func OpenLocal(dir string) (*LocalStore, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", abs, plainErr(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("store %s: not a directory", abs)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", abs, plainErr(err))
	}
	d, err := root.Open(".")
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("store %s: %w", abs, plainErr(err))
	}
	return &LocalStore{dir: abs, root: root, rootDir: d, rootFD: int(d.Fd())}, nil
}

// Location returns the absolute store directory.
func (s *LocalStore) Location() string { return s.dir }

// Dir returns the absolute, cleaned store directory.
func (s *LocalStore) Dir() string { return s.dir }

// Close releases the directory handle.
func (s *LocalStore) Close() error {
	if s.rootDir != nil {
		s.rootDir.Close()
	}
	return s.root.Close()
}

func (s *LocalStore) errorf(op, key string, err error) error {
	return fmt.Errorf("store %s: %s %s: %w", s.dir, op, key, plainErr(err))
}

// plainErr drops the *PathError / *LinkError wrapper of an os error: its path is
// relative to the root and would repeat what our own context says.
func plainErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// checkParents fails if a parent directory of name exists as something other than
// a real directory: with an error wrapping ErrNotRegular for a symlink (or other
// non-regular file), ErrNotExist for a regular file. A missing parent ends the
// check: whatever creates it creates a real directory.
func (s *LocalStore) checkParents(name string) error {
	for i := 0; i < len(name); i++ {
		if name[i] != '/' {
			continue
		}
		fi, err := s.root.Lstat(name[:i])
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return plainErr(err)
		}
		if !fi.IsDir() {
			if fi.Mode()&fs.ModeSymlink != 0 {
				return fmt.Errorf("parent %s is a symbolic link: %w", name[:i], ErrNotRegular)
			}
			if fi.Mode().IsRegular() {
				// Nothing can exist below a file.
				return fmt.Errorf("%w (parent %s is a file)", fs.ErrNotExist, name[:i])
			}
			return fmt.Errorf("parent %s is not a directory: %w", name[:i], ErrNotRegular)
		}
	}
	return nil
}

// entry builds the Entry of name from its lstat information.
func (s *LocalStore) entry(key string, fi fs.FileInfo) Entry {
	e := Entry{Key: key, Size: fi.Size(), ModTime: fi.ModTime(), Mode: fi.Mode()}
	if fi.Mode()&fs.ModeSymlink != 0 {
		// Best effort: a link removed meanwhile keeps an empty Link.
		e.Link, _ = s.root.Readlink(key)
	}
	return e
}

// List reports the files under the store directory whose key starts with prefix, in
// lexical key order. It reads one directory at a time (the entries of a single
// directory are sorted in memory), descends only into real directories, and skips
// the top-level InternalDir. Symbolic links, FIFOs, sockets and devices are reported
// with their lstat Mode (and Link for a symlink), never followed or opened. Files
// that vanish while listing are skipped.
func (s *LocalStore) List(ctx context.Context, prefix string, fn func(Entry) error) error {
	w := walker{root: s.root, errorf: s.errorf}
	return w.list(ctx, prefix, fn)
}

// ListSelected lists like List, reporting only the entries whose key keep
// accepts; the names of the others are not held while a directory is sorted
// (see [SelectiveLister]).
func (s *LocalStore) ListSelected(ctx context.Context, prefix string, keep func(key string) bool, fn func(Entry) error) error {
	w := walker{root: s.root, errorf: s.errorf, keep: keep}
	return w.list(ctx, prefix, fn)
}

// ListKeys lists like List, with two differences that suit a caller that opens
// every blob anyway (verify, with OpenEntry): regular files are not described
// (their entries carry only Key, with Size -1), saving a system call per file;
// and entries come in the order the directory returns them, as soon as they are
// read, not sorted. Other entries (symlinks, FIFOs, …) are described as List
// describes them. An error from fn stops the listing and is returned as is.
func (s *LocalStore) ListKeys(ctx context.Context, prefix string, fn func(Entry) error) error {
	return s.listUnordered(ctx, prefix, false, fn)
}

// ListUnordered lists like List — every entry described — but in about the
// order the directory returns its entries, each as soon as it is read and
// described (a few batches of them are lstat'ed at once), so that no
// directory's names are held in memory at once. gc plans with it: a million
// blobs in one folder would otherwise be sorted in memory first.
func (s *LocalStore) ListUnordered(ctx context.Context, prefix string, fn func(Entry) error) error {
	return s.listUnordered(ctx, prefix, true, fn)
}

func (s *LocalStore) listUnordered(ctx context.Context, prefix string, describe bool, fn func(Entry) error) error {
	w := walker{root: s.root, errorf: s.errorf, internal: internalFolders(ctx)}
	err := w.walkUnordered(ctx, "", "", prefix, describe, func(e Entry) error {
		if err := fn(e); err != nil {
			return &stopError{err}
		}
		return nil
	})
	if stop, ok := err.(*stopError); ok {
		return stop.err
	}
	return err
}

// OpenEntry opens the regular file key like Open and describes the very file it
// opened. On Linux it resolves the key with one openat2 call that refuses any
// symbolic link on the way and any escape from the store directory
// (RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH), so no separate lstat is needed.
func (s *LocalStore) OpenEntry(ctx context.Context, key string) (io.ReadCloser, Entry, error) {
	if err := ValidKey(key); err != nil {
		return nil, Entry{}, fmt.Errorf("store %s: open: %w", s.dir, err)
	}
	rc, st, err := s.readEntry(ctx, key)
	if err != nil {
		return nil, Entry{}, s.errorf("open", key, err)
	}
	return rc, Entry{Key: key, Size: st.size, ModTime: st.mtime, Mode: st.mode}, nil
}

// readEntry opens the regular file name, a slash path below the store
// directory with no empty, "." or ".." segment that the caller has checked,
// and describes the file it opened. It is the confined open of the package:
// no symbolic link anywhere on the way is followed, nothing outside the
// directory is reached, and a FIFO or device is refused at once, never
// waited on (O_NONBLOCK, then a check that the file opened is regular). On
// Linux that is one openat2 call (openBeneath); elsewhere, and where openat2
// is refused, the portable path of openRegularFile. Errors carry no store
// context: OpenEntry and a file:// bucket's reads (BucketStore.openFile) add
// their own.
func (s *LocalStore) readEntry(ctx context.Context, name string) (io.ReadCloser, entryStat, error) {
	if err := ctx.Err(); err != nil {
		return nil, entryStat{}, err
	}
	if rc, st, ok, err := s.openBeneath(name); ok {
		return rc, st, err
	}
	f, err := s.openRegularFile(ctx, name)
	if err != nil {
		return nil, entryStat{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, entryStat{}, err
	}
	return f, entryStat{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode()}, nil
}

// Stat describes key from lstat: a symlink is described, not followed (its Link is
// set), and so is a directory (Mode has fs.ModeDir), though List never reports one.
func (s *LocalStore) Stat(ctx context.Context, key string) (Entry, error) {
	if err := ValidKey(key); err != nil {
		return Entry{}, fmt.Errorf("store %s: stat: %w", s.dir, err)
	}
	if err := ctx.Err(); err != nil {
		return Entry{}, s.errorf("stat", key, err)
	}
	if err := s.checkParents(key); err != nil {
		return Entry{}, s.errorf("stat", key, err)
	}
	fi, err := s.root.Lstat(key)
	if err != nil {
		return Entry{}, s.errorf("stat", key, err)
	}
	return s.entry(key, fi), nil
}

// Open opens the regular file key. The file opened is checked to be the very file
// lstat found to be regular, so a symbolic link, FIFO or device is never opened
// (an error wraps ErrNotRegular).
func (s *LocalStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := ValidKey(key); err != nil {
		return nil, fmt.Errorf("store %s: open: %w", s.dir, err)
	}
	return s.openRegular(ctx, "open", key)
}

func (s *LocalStore) openRegular(ctx context.Context, op, name string) (*os.File, error) {
	f, err := s.openRegularFile(ctx, name)
	if err != nil {
		return nil, s.errorf(op, name, err)
	}
	return f, nil
}

// openRegularFile is openRegular without the store's context in its errors.
func (s *LocalStore) openRegularFile(ctx context.Context, name string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.checkParents(name); err != nil {
		return nil, err
	}
	before, err := s.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, notRegular(before.Mode())
	}
	// openFlags adds O_NONBLOCK where it exists: should a FIFO be swapped in after
	// the lstat, opening it must not hang (it is then refused below).
	f, err := s.root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !after.Mode().IsRegular() || !os.SameFile(before, after) {
		f.Close()
		return nil, fmt.Errorf("%w: %w", ErrReplaced, ErrNotRegular)
	}
	return f, nil
}

// notRegularError says what a file that is not a regular one is; it wraps
// ErrNotRegular.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Unwrap() error { return ErrNotRegular }

func (e *notRegularError) Error() string {
	m := e.mode
	var what string
	switch {
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link"
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	default:
		what = "an irregular file (" + m.String() + ")"
	}
	return "is " + what + ": " + ErrNotRegular.Error()
}

func notRegular(m fs.FileMode) error { return &notRegularError{mode: m} }

// Put writes r to key atomically. The data is staged in a new file (mode 0600) under
// InternalDir/tmp, fsync'ed, given opts.ModTime if set, then renamed over key, or,
// with opts.IfNotExist, hard-linked to key (which fails if key exists in any form,
// even as a dangling symlink, with an error wrapping ErrExist) and unlinked from the
// staging area. Missing parent directories are created with mode 0700 and the parent
// directory is fsync'ed. ContentType and Metadata are ignored: a local file has
// neither. On any error, including one from r, nothing is left behind.
//
// Without IfNotExist an existing regular file or symlink at key is replaced (a
// symlink is replaced by the file, its target is untouched); a directory is not.
func (s *LocalStore) Put(ctx context.Context, key string, r io.Reader, opts PutOptions) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: put: %w", s.dir, err)
	}
	return s.put(ctx, "put", key, r, opts)
}

func (s *LocalStore) put(ctx context.Context, op, name string, r io.Reader, opts PutOptions) (err error) {
	if err := ctx.Err(); err != nil {
		return s.errorf(op, name, err)
	}
	if err := s.checkParents(name); err != nil {
		return s.errorf(op, name, err)
	}
	// The staging folder must be a real directory too, not a link to elsewhere.
	if err := s.checkParents(tmpDir + "/x"); err != nil {
		return s.errorf(op, name, err)
	}
	if err := s.mkdirAll(tmpDir); err != nil {
		return s.errorf(op, name, err)
	}
	f, tmp, err := s.createTemp()
	if err != nil {
		return s.errorf(op, name, err)
	}
	published := false
	defer func() {
		if f != nil {
			f.Close()
		}
		if !published {
			_ = s.root.Remove(tmp)
		}
	}()

	if _, err := io.Copy(f, ctxReader{ctx, r}); err != nil {
		return s.errorf(op, name, err)
	}
	if opts.Mode != 0 {
		if err := f.Chmod(opts.Mode.Perm()); err != nil {
			return s.errorf(op, name, err)
		}
	}
	if !opts.ModTime.IsZero() {
		if err := s.root.Chtimes(tmp, time.Time{}, opts.ModTime); err != nil {
			return s.errorf(op, name, err)
		}
	}
	if err := f.Sync(); err != nil {
		return s.errorf(op, name, err)
	}
	err = f.Close()
	f = nil
	if err != nil {
		return s.errorf(op, name, err)
	}
	if err := ctx.Err(); err != nil {
		return s.errorf(op, name, err)
	}

	parent := path.Dir(name)
	if err := s.mkdirAll(parent); err != nil {
		return s.errorf(op, name, err)
	}
	if opts.OwnerOfFolder {
		if err := s.chownLike(tmp, parent); err != nil {
			return s.errorf(op, name, err)
		}
	}
	if opts.IfNotExist {
		if err := s.root.Link(tmp, name); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return s.errorf(op, name, fs.ErrExist)
			}
			return s.errorf(op, name, err)
		}
		// The blob is published; the staging name is just a second link to it.
		published = true
		_ = s.root.Remove(tmp)
	} else {
		if err := s.root.Rename(tmp, name); err != nil {
			return s.errorf(op, name, err)
		}
		published = true
	}
	if err := s.syncDir(parent); err != nil {
		return s.errorf(op, name, err)
	}
	return nil
}

// createTemp creates a new, empty, private staging file in tmpDir.
func (s *LocalStore) createTemp() (*os.File, string, error) {
	var b [12]byte
	for range 100 {
		rand.Read(b[:])
		name := tmpDir + "/put-" + hex.EncodeToString(b[:])
		f, err := s.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, localFileMode)
		if err == nil {
			// Make the mode exact whatever the umask.
			if err := f.Chmod(localFileMode); err != nil {
				f.Close()
				_ = s.root.Remove(name)
				return nil, "", err
			}
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", errors.New("cannot create a staging file in " + tmpDir)
}

// mkdirAll creates directory name and its parents (mode 0700) if missing.
func (s *LocalStore) mkdirAll(name string) error {
	if name == "." || name == "" {
		return nil
	}
	if err := s.root.MkdirAll(name, localDirMode); err != nil {
		return err
	}
	return nil
}

// ctxReader stops a copy once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Delete removes the regular file or symbolic link key (a link is removed, never
// its target). A directory, FIFO, socket or device is refused with an error
// wrapping ErrNotRegular; a missing key returns an error wrapping ErrNotExist.
func (s *LocalStore) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: delete: %w", s.dir, err)
	}
	return s.remove(ctx, "delete", key)
}

func (s *LocalStore) remove(ctx context.Context, op, name string) error {
	if err := ctx.Err(); err != nil {
		return s.errorf(op, name, err)
	}
	if err := s.removeEntry(name); err != nil {
		return s.errorf(op, name, err)
	}
	return nil
}

// Rename moves the regular file or symbolic link from to the key to, creating
// parent directories (mode 0700). It never replaces an existing key: if to exists,
// in any form, it returns an error wrapping ErrExist and changes nothing. The
// no-replace check is atomic where the system has renameat2(RENAME_NOREPLACE)
// or hard links (link, then unlink from); otherwise it is a check followed by a
// rename. A folder on the way to to that is a link or a file fails it with an
// error wrapping ErrUnsafePath (see LocalStore).
func (s *LocalStore) Rename(ctx context.Context, from, to string) error {
	if err := ValidKey(from); err != nil {
		return fmt.Errorf("store %s: rename: %w", s.dir, err)
	}
	if err := ValidKey(to); err != nil {
		return fmt.Errorf("store %s: rename: %w", s.dir, err)
	}
	return s.rename(ctx, from, to)
}

func (s *LocalStore) rename(ctx context.Context, from, to string) error {
	op := "rename " + from + " to"
	if err := ctx.Err(); err != nil {
		return s.errorf(op, to, err)
	}
	if from == to {
		return s.errorf(op, to, fs.ErrExist)
	}
	err := s.moveEntry(from, s, to, func(st entryStat) error {
		if !st.mode.IsRegular() && st.mode&fs.ModeSymlink == 0 {
			return notRegular(st.mode)
		}
		return nil
	}, true)
	if err != nil {
		return s.errorf(op, to, err)
	}
	return nil
}

// Internal folder access. These methods address paths relative to InternalDir
// (such as "trash/2024-05-01/ab12.png"), never blob keys; they are how mediactl's own
// commands keep trash, journals and locks in a store, out of every listing.

// InternalRoot returns an [os.Root] on the store's InternalDir, creating the folder
// (mode 0700) if needed. The caller closes it.
func (s *LocalStore) InternalRoot() (*os.Root, error) {
	fi, err := s.root.Lstat(InternalDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := s.mkdirAll(InternalDir); err != nil {
			return nil, s.errorf("open", InternalDir, err)
		}
	case err != nil:
		return nil, s.errorf("open", InternalDir, err)
	case !fi.IsDir():
		return nil, s.errorf("open", InternalDir, notRegular(fi.Mode()))
	}
	r, err := s.root.OpenRoot(InternalDir)
	if err != nil {
		return nil, s.errorf("open", InternalDir, err)
	}
	return r, nil
}

// PutInternal writes r to InternalDir/name like Put (atomic, fsync'ed, mode 0600).
func (s *LocalStore) PutInternal(ctx context.Context, name string, r io.Reader, opts PutOptions) error {
	if err := validInternal(name); err != nil {
		return fmt.Errorf("store %s: put: %w", s.dir, err)
	}
	return s.put(ctx, "put", internalName(name), r, opts)
}

// MoveToInternal renames blob key to InternalDir/name (for trash, quarantine),
// without copying and without replacing anything (see Rename).
func (s *LocalStore) MoveToInternal(ctx context.Context, key, name string) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: rename: %w", s.dir, err)
	}
	if err := validInternal(name); err != nil {
		return fmt.Errorf("store %s: rename: %w", s.dir, err)
	}
	return s.rename(ctx, key, internalName(name))
}

// MoveFromInternal renames InternalDir/name back to blob key (restore), without
// replacing an existing key (see Rename).
func (s *LocalStore) MoveFromInternal(ctx context.Context, name, key string) error {
	if err := validInternal(name); err != nil {
		return fmt.Errorf("store %s: rename: %w", s.dir, err)
	}
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: rename: %w", s.dir, err)
	}
	return s.rename(ctx, internalName(name), key)
}

// OpenInternal opens the regular file InternalDir/name.
func (s *LocalStore) OpenInternal(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := validInternal(name); err != nil {
		return nil, fmt.Errorf("store %s: open: %w", s.dir, err)
	}
	return s.openRegular(ctx, "open", internalName(name))
}

// DeleteInternal removes the file InternalDir/name (never a directory tree).
func (s *LocalStore) DeleteInternal(ctx context.Context, name string) error {
	if err := validInternal(name); err != nil {
		return fmt.Errorf("store %s: delete: %w", s.dir, err)
	}
	return s.remove(ctx, "delete", internalName(name))
}

// ListInternal lists the files below InternalDir whose name starts with prefix,
// in lexical order, as List lists blobs.
func (s *LocalStore) ListInternal(ctx context.Context, prefix string, fn func(Entry) error) error {
	if _, err := s.root.Lstat(InternalDir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	r, err := s.InternalRoot()
	if err != nil {
		return err
	}
	defer r.Close()
	w := walker{root: r, errorf: func(op, key string, err error) error {
		return s.errorf(op, internalName(key), err)
	}}
	return w.list(ctx, prefix, fn)
}
