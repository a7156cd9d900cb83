//go:build unix

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openFlags are added when a local store opens a blob: O_NONBLOCK keeps the open of
// a FIFO (swapped in after the lstat check) from blocking; it has no effect on the
// reads of a regular file.
const openFlags = syscall.O_NONBLOCK

// dirOpenFlags open a folder on the way to an entry: only a real directory, never
// through a symbolic link, and not inherited by child processes.
const dirOpenFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// Moves and removals (gc's sweep, restore, purge, MoveTo) never address an entry
// by a path from the store root, which the kernel would resolve again, following
// any symbolic link another process swapped into a folder on the way meanwhile.
// They open the entry's parent folder as a descriptor — with openat2
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the kernel has it, else one
// O_NOFOLLOW|O_DIRECTORY openat per folder — and rename, link or unlink the last
// path element relative to it. Missing destination folders are created with
// mkdirat relative to the folder above them, never by path.

// openDir opens the folder dir (a slash path below the store directory; "." or
// "" for the store directory itself) without following a symbolic link anywhere
// on the way. With create, missing folders are created (mode 0700). An error
// about the way itself is a *dirError. The caller closes the descriptor with
// closeDir.
func (s *LocalStore) openDir(dir string, create bool) (int, error) {
	if s.rootFD < 0 {
		return -1, fmt.Errorf("the store directory is not open: %w", fs.ErrClosed)
	}
	if dir == "." || dir == "" {
		return s.rootFD, nil
	}
	if strings.IndexByte(dir, '/') >= 0 && !s.noOpenat2.Load() {
		fd, ok, err := openat2Dir(s.rootFD, dir)
		if !ok {
			s.noOpenat2.Store(true)
		} else if err == nil {
			return fd, nil
		}
		// Any refusal: the walk below says which folder is wrong, and creates
		// the missing ones.
	}
	return s.walkDir(dir, create)
}

// walkDir opens dir one folder at a time, each relative to the one above it,
// with O_NOFOLLOW|O_DIRECTORY.
func (s *LocalStore) walkDir(dir string, create bool) (int, error) {
	fd := s.rootFD
	release := func() {
		if fd != s.rootFD {
			unix.Close(fd)
		}
	}
	for start := 0; start < len(dir); {
		end := strings.IndexByte(dir[start:], '/')
		if end < 0 {
			end = len(dir)
		} else {
			end += start
		}
		name := dir[start:end]
		next, err := openatRetry(fd, name, dirOpenFlags)
		if err == unix.ENOENT && create {
			if err := unix.Mkdirat(fd, name, uint32(localDirMode)); err != nil && err != unix.EEXIST {
				release()
				return -1, classifyDir(fd, name, dir[:end], err)
			}
			next, err = openatRetry(fd, name, dirOpenFlags)
		}
		if err != nil {
			err = classifyDir(fd, name, dir[:end], err)
			release()
			return -1, err
		}
		release()
		fd = next
		start = end + 1
	}
	return fd, nil
}

func (s *LocalStore) closeDir(fd int) {
	if fd >= 0 && fd != s.rootFD {
		unix.Close(fd)
	}
}

func openatRetry(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// Kinds of *dirError.
const (
	dirMissing = iota + 1 // a folder on the way does not exist
	dirNotDir             // it is a file (or a FIFO, a device…)
	dirLink               // it is a symbolic link, or the way leaves the store
)

// dirError is what is wrong with the way to an entry: which folder, and how.
// It deliberately does not unwrap to the system's error (ENOENT would read as
// ErrNotExist): sourceErr and destErr say what it means for a move.
type dirError struct {
	kind int
	dir  string // the folder, below the store directory
	err  error  // the system's answer, for other kinds
}

func (e *dirError) Error() string {
	switch e.kind {
	case dirMissing:
		return "folder " + e.dir + " does not exist"
	case dirNotDir:
		return e.dir + " is not a folder"
	case dirLink:
		return e.dir + " is a symbolic link"
	}
	return "folder " + e.dir + ": " + e.err.Error()
}

// classifyDir explains why opening name (the folder dir) in the folder dirfd
// failed, lstat'ing it where the error alone is ambiguous.
func classifyDir(dirfd int, name, dir string, err error) error {
	switch err {
	case unix.ENOENT:
		return &dirError{kind: dirMissing, dir: dir}
	case unix.ELOOP, unix.ENOTDIR, unix.EMLINK:
		// O_NOFOLLOW meets a link (ELOOP; EMLINK on FreeBSD) or O_DIRECTORY a
		// non-directory (ENOTDIR).
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			switch uint32(st.Mode) & unix.S_IFMT {
			case unix.S_IFLNK:
				return &dirError{kind: dirLink, dir: dir}
			case unix.S_IFDIR:
				// Swapped back meanwhile: report what the open met.
				return &dirError{kind: dirLink, dir: dir}
			}
			return &dirError{kind: dirNotDir, dir: dir}
		}
		return &dirError{kind: dirLink, dir: dir}
	case unix.EXDEV:
		return &dirError{kind: dirLink, dir: dir}
	}
	return &dirError{dir: dir, err: err}
}

// sourceErr says what a bad way to the entry being moved or removed means: a
// missing folder, or a file where a folder should be, means the entry does not
// exist; a symbolic link means the key no longer names a regular file of the
// store.
func sourceErr(err error) error {
	var de *dirError
	if !errors.As(err, &de) {
		return err
	}
	switch de.kind {
	case dirMissing, dirNotDir:
		return fmt.Errorf("%w (%s)", fs.ErrNotExist, de)
	case dirLink:
		return fmt.Errorf("%s: %w", de, ErrNotRegular)
	}
	return de.err
}

// destErr says what a bad way to a move's destination means: the destination is
// unsafe (ErrUnsafePath), whatever the source is.
func destErr(err error) error {
	var de *dirError
	if !errors.As(err, &de) {
		return err
	}
	if de.kind == 0 {
		return fmt.Errorf("destination %s", de)
	}
	return fmt.Errorf("destination %s: %w", de, ErrUnsafePath)
}

// fstatAt lstats name in the folder dirfd.
func fstatAt(dirfd int, name string) (entryStat, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return entryStat{}, err
		}
		return fromStat(&st), nil
	}
}

// moveEntry moves the entry from of s to to of dst (s itself or another local
// store), never replacing an existing entry (an error wrapping ErrExist) and
// never through a symbolic link on either side. check, given the lstat
// description of from, may refuse the move. With sync, both parent folders are
// fsync'ed after the move. Errors about from wrap ErrNotExist or ErrNotRegular
// as Stat's do; errors about the way to to wrap ErrUnsafePath; a move between
// file systems wraps ErrCrossDevice.
func (s *LocalStore) moveEntry(from string, dst *LocalStore, to string, check func(entryStat) error, sync bool) error {
	fromDir, fromName := path.Split(from)
	toDir, toName := path.Split(to)
	srcFD, err := s.openDir(strings.TrimSuffix(fromDir, "/"), false)
	if err != nil {
		return sourceErr(err)
	}
	defer s.closeDir(srcFD)
	st, err := fstatAt(srcFD, fromName)
	if err != nil {
		return err
	}
	if err := check(st); err != nil {
		return err
	}
	dstFD, err := dst.openDir(strings.TrimSuffix(toDir, "/"), true)
	if err != nil {
		return destErr(err)
	}
	defer dst.closeDir(dstFD)
	// A writer may save over a blob's name in the store, never over a name in
	// the internal folder: there the source's name may be unlinked by name.
	srcPrivate := dst == s && isInternal(from)
	if err := renameNoReplaceAt(srcFD, fromName, dstFD, toName, srcPrivate); err != nil {
		return err
	}
	if err := movedWhatWasChecked(st, check, srcFD, fromName, dstFD, toName); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	if err := fsyncDir(dstFD); err != nil {
		return err
	}
	if dst != s || fromDir != toDir {
		return fsyncDir(srcFD)
	}
	return nil
}

// movedWhatWasChecked makes sure the entry just moved to toName is the file
// checked as fromName before the move, and that it still passes the check:
// a writer may have renamed another file over fromName in between (a runtime
// saving a blob again), and that file was not checked; or it may have
// freshened the blob's modification time (a runtime that re-uses a blob it
// finds present, see package persist), and a blob in use must not go. Either
// way it is put back where it was, and the move reports ErrChanged. Should
// fromName be taken again by then, the file stays at toName and the error
// says where it is.
func movedWhatWasChecked(checked entryStat, check func(entryStat) error, fromFD int, fromName string, toFD int, toName string) error {
	if checked.ino == 0 {
		return nil
	}
	moved, err := fstatAt(toFD, toName)
	if err != nil {
		return fmt.Errorf("lstat after the move: %w", moveErrno(err))
	}
	why := "replaced between its check and its move"
	if moved.dev == checked.dev && moved.ino == checked.ino {
		if !errors.Is(check(moved), ErrChanged) {
			return nil
		}
		why = "touched between its check and its move (a writer freshened or rewrote it)"
	}
	// The file goes back where writers save: toName is this move's own.
	if err := renameNoReplaceAt(toFD, toName, fromFD, fromName, true); err != nil {
		return fmt.Errorf("%w: %s, and not put back (%v): the file moved is at %s", ErrChanged, why, err, toName)
	}
	return fmt.Errorf("%w: %s; put back", ErrChanged, why)
}

// renameNoReplaceAt renames the entry from in the folder fromFD to to in the
// folder toFD, failing with fs.ErrExist when to exists in any form.
// srcPrivate says no other process saves files as from (a name in the
// internal folder); it matters only without renameat2.
func renameNoReplaceAt(fromFD int, from string, toFD int, to string, srcPrivate bool) error {
	if !forceLinkFallback {
		if ok, err := renameat2NoReplace(fromFD, from, toFD, to); ok {
			return moveErrno(err)
		}
	}
	// No renameat2 here (macOS, the BSDs, NFS, CIFS, an older kernel): a hard
	// link publishes to only if it does not exist, then from goes.
	err := linkAt(fromFD, from, toFD, to)
	if err == nil {
		if afterLinkHook != nil {
			afterLinkHook()
		}
		if srcPrivate {
			return moveErrno(unix.Unlinkat(fromFD, from, 0))
		}
		return unlinkLinked(fromFD, from, toFD, to)
	}
	if err == unix.EPERM || err == unix.EOPNOTSUPP || err == unix.ENOTSUP || err == unix.EMLINK {
		// No hard links either: check, then rename.
		if _, err := fstatAt(toFD, to); err == nil {
			return fs.ErrExist
		} else if err != unix.ENOENT {
			return moveErrno(err)
		}
		return moveErrno(unix.Renameat(fromFD, from, toFD, to))
	}
	return moveErrno(err)
}

// Test hooks: forceLinkFallback makes renameNoReplaceAt work as where
// renameat2 is missing, and afterLinkHook runs between its link and the
// removal of the source.
var (
	forceLinkFallback bool
	afterLinkHook     func()
)

// unlinkLinked removes from once it was hard-linked as to, where a writer
// may save another file as from at any moment (a runtime saving the blob
// again): unlinking by name could remove that file. So from is first renamed
// to a name of this move's own beside to, which takes exactly one entry, and
// only when that entry is the file linked as to is it unlinked; a writer's
// file is linked back as from, or, should from be taken again meanwhile,
// left beside to with an error that says where.
func unlinkLinked(fromFD int, from string, toFD int, to string) error {
	linked, err := fstatAt(toFD, to)
	if err != nil {
		return fmt.Errorf("lstat after the link: %w", moveErrno(err))
	}
	aside := to + ".unlinking"
	if _, err := fstatAt(toFD, aside); err == nil {
		return fmt.Errorf("%w: %s, where the source is set aside, exists", fs.ErrExist, aside)
	} else if err != unix.ENOENT {
		return moveErrno(err)
	}
	if err := unix.Renameat(fromFD, from, toFD, aside); err != nil {
		if err == unix.ENOENT {
			return nil // someone removed from: the file is at to all the same
		}
		return moveErrno(err)
	}
	taken, err := fstatAt(toFD, aside)
	if err != nil {
		return fmt.Errorf("lstat of the source set aside as %s: %w", aside, moveErrno(err))
	}
	if taken.dev == linked.dev && taken.ino == linked.ino {
		return moveErrno(unix.Unlinkat(toFD, aside, 0))
	}
	// A writer saved another file as from between the link and the rename.
	if err := linkAt(toFD, aside, fromFD, from); err != nil {
		return fmt.Errorf("%w: saved again while it was moved, and not put back (%v): the writer's file is at %s", ErrChanged, moveErrno(err), aside)
	}
	return moveErrno(unix.Unlinkat(toFD, aside, 0))
}

// moveErrno turns the system's answer to a rename, link or unlink into the
// package's errors.
func moveErrno(err error) error {
	switch {
	case err == nil:
		return nil
	case err == unix.EEXIST || err == unix.ENOTEMPTY:
		return fs.ErrExist
	}
	switch err {
	case unix.EXDEV:
		return ErrCrossDevice
	case unix.ENOENT:
		return fs.ErrNotExist
	}
	return err
}

// removeEntry unlinks the regular file or symbolic link name (a link is removed,
// never its target) in its parent folder, opened without following a link.
// unlinkat without AT_REMOVEDIR never removes a directory, even one swapped in.
func (s *LocalStore) removeEntry(name string) error {
	dir, base := path.Split(name)
	fd, err := s.openDir(strings.TrimSuffix(dir, "/"), false)
	if err != nil {
		return sourceErr(err)
	}
	defer s.closeDir(fd)
	st, err := fstatAt(fd, base)
	if err != nil {
		return err
	}
	if !st.mode.IsRegular() && st.mode&fs.ModeSymlink == 0 {
		return notRegular(st.mode)
	}
	return moveErrno(unix.Unlinkat(fd, base, 0))
}

// folderPresent reports whether the folder name is there, reached without
// following a link.
func (s *LocalStore) folderPresent(name string) bool {
	fd, err := s.openDir(name, false)
	if err != nil {
		return false
	}
	s.closeDir(fd)
	return true
}

// removeEmptyDir removes the folder name when it is empty, in its parent
// folder opened without following a link. unlinkat with AT_REMOVEDIR removes
// nothing but an empty folder; anything else (a folder not empty, a file, a
// link swapped in) stays, and so does the folder on any error.
func (s *LocalStore) removeEmptyDir(name string) {
	dir, base := path.Split(name)
	fd, err := s.openDir(strings.TrimSuffix(dir, "/"), false)
	if err != nil {
		return
	}
	defer s.closeDir(fd)
	unix.Unlinkat(fd, base, unix.AT_REMOVEDIR)
}

// syncDir fsyncs the folder name so that a rename or link in it is durable.
func (s *LocalStore) syncDir(name string) error {
	fd, err := s.openDir(name, false)
	if err != nil {
		return sourceErr(err)
	}
	defer s.closeDir(fd)
	return fsyncDir(fd)
}

func fsyncDir(fd int) error {
	for {
		err := unix.Fsync(fd)
		switch err {
		case unix.EINTR:
			continue
		case nil, unix.EINVAL, unix.ENOTSUP:
			return nil // some file systems cannot sync a folder
		}
		return err
	}
}

func fromStat(st *unix.Stat_t) entryStat {
	m := uint32(st.Mode)
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return entryStat{size: st.Size, mtime: time.Unix(st.Mtim.Unix()), mode: mode, dev: uint64(st.Dev), ino: uint64(st.Ino)}
}

// chownLike gives the file name the owner and group of the folder dir, both
// within the store, when they differ from the file's. The folder's owner is
// the runtime's, which must read what is put in it. A process that may not
// (not root) leaves the file its own, as any Put does.
func (s *LocalStore) chownLike(name, dir string) error {
	fi, err := s.root.Stat(dir)
	if err != nil {
		return err
	}
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if fi, err = s.root.Lstat(name); err != nil {
		return err
	}
	have, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || have.Uid == want.Uid && have.Gid == want.Gid {
		return nil
	}
	if err := s.root.Lchown(name, int(want.Uid), int(want.Gid)); err != nil && !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return nil
}
