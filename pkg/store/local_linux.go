//go:build linux

package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// statAt lstats name in the open directory dir with one fstatat system call,
// instead of resolving the whole path from the store root again.
func statAt(dir *os.File, _ *os.Root, _ string, name string) (entryStat, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return entryStat{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
		return fromStat(&st), nil
	}
}

// openBeneath opens key below the store directory with openat2, refusing a
// symbolic link anywhere on the path and any escape from the directory, and
// without blocking on a FIFO. ok is false where openat2 is not available (Linux
// before 5.6, some sandboxes): the caller then takes the portable path.
func (s *LocalStore) openBeneath(key string) (rc io.ReadCloser, st entryStat, ok bool, err error) {
	if s.noOpenat2.Load() {
		return nil, entryStat{}, false, nil
	}
	if s.rootFD < 0 {
		return nil, entryStat{}, false, nil
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd int
	for {
		if strings.IndexByte(key, '/') < 0 {
			// One path element: O_NOFOLLOW alone keeps it from being a link, and a
			// valid key has no "..": plain openat is as safe, and cheaper.
			fd, err = unix.Openat(s.rootFD, key, int(how.Flags), 0)
		} else {
			fd, err = unix.Openat2(s.rootFD, key, &how)
		}
		if err != unix.EINTR && err != unix.EAGAIN {
			break
		}
	}
	switch err {
	case nil:
	case unix.ENOSYS, unix.EPERM:
		s.noOpenat2.Store(true) // seccomp filters answer EPERM for unknown calls
		return nil, entryStat{}, false, nil
	case unix.ELOOP, unix.EXDEV:
		return nil, entryStat{}, true, fmt.Errorf("a symbolic link on the way: %w", ErrNotRegular)
	default:
		return nil, entryStat{}, true, &fs.PathError{Op: "open", Path: key, Err: err}
	}
	var sys unix.Stat_t
	if err := unix.Fstat(fd, &sys); err != nil {
		unix.Close(fd)
		return nil, entryStat{}, true, &fs.PathError{Op: "fstat", Path: key, Err: err}
	}
	st = fromStat(&sys)
	if !st.mode.IsRegular() {
		unix.Close(fd)
		return nil, entryStat{}, true, notRegular(st.mode)
	}
	return &regularFile{fd: fd, size: st.size}, st, true, nil
}

// regularFile reads an open regular file with plain read(2) calls. Unlike an
// *os.File it is not offered to the network poller (which refuses regular
// files, at the cost of a system call per file).
type regularFile struct {
	fd   int
	size int64 // from fstat at open
	off  int64
	eof  bool
}

func (f *regularFile) Read(p []byte) (int, error) {
	if f.eof || len(p) == 0 {
		if f.eof {
			return 0, io.EOF
		}
		return 0, nil
	}
	for {
		n, err := unix.Read(f.fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			f.eof = true
			return 0, io.EOF
		}
		f.off += int64(n)
		// A read of a regular file returns less than asked only at its end: asked
		// for more than the file had left, it has read to the end, and the read
		// that would return 0 can be skipped.
		if n < len(p) && f.off >= f.size {
			f.eof = true
		}
		return n, nil
	}
}

func (f *regularFile) Close() error {
	if f.fd < 0 {
		return os.ErrClosed
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}

// readDirEach calls fn for each entry of f as getdents64 returns them.
func readDirEach(f *os.File, fn func(dirent) error) error {
	fd := int(f.Fd())
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "getdents", Path: f.Name(), Err: err}
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return &fs.PathError{Op: "getdents", Path: f.Name(), Err: unix.EIO}
			}
			ino := binary.NativeEndian.Uint64(b[0:8])
			typ := b[18]
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if ino == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			d := dirent{name: string(name)}
			switch typ {
			case unix.DT_REG:
			case unix.DT_DIR:
				d.typ = fs.ModeDir
			case unix.DT_LNK:
				d.typ = fs.ModeSymlink
			case unix.DT_FIFO:
				d.typ = fs.ModeNamedPipe
			case unix.DT_SOCK:
				d.typ = fs.ModeSocket
			case unix.DT_CHR:
				d.typ = fs.ModeDevice | fs.ModeCharDevice
			case unix.DT_BLK:
				d.typ = fs.ModeDevice
			default:
				d.unknown = true // the file system does not say: stat it
			}
			if err := fn(d); err != nil {
				return err
			}
		}
	}
}

// openat2Dir opens the folder dir below the directory rootFD with one openat2
// call that refuses a symbolic link anywhere on the way and any escape from
// rootFD (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS). ok is false where openat2 is not
// available (Linux before 5.6, some sandboxes); err is any other refusal.
func openat2Dir(rootFD int, dir string) (fd int, ok bool, err error) {
	how := unix.OpenHow{
		Flags:   uint64(dirOpenFlags),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	for range 16 {
		fd, err = unix.Openat2(rootFD, dir, &how)
		switch err {
		case nil:
			return fd, true, nil
		case unix.EINTR, unix.EAGAIN:
			// EAGAIN: a rename elsewhere raced the lookup; try again.
			continue
		case unix.ENOSYS, unix.EPERM:
			// seccomp filters answer EPERM for unknown calls
			return -1, false, err
		}
		return -1, true, err
	}
	return -1, true, err
}

// renameat2NoReplace is renameat2(RENAME_NOREPLACE): one atomic system call
// that fails with EEXIST when to exists. ok is false where the kernel or the
// file system lacks it.
func renameat2NoReplace(fromFD int, from string, toFD int, to string) (ok bool, err error) {
	for {
		err = unix.Renameat2(fromFD, from, toFD, to, unix.RENAME_NOREPLACE)
		switch err {
		case unix.EINTR:
			continue
		case unix.ENOSYS, unix.EINVAL, unix.EPERM:
			// not supported here (EPERM: a seccomp filter)
			return false, err
		}
		return true, err
	}
}
