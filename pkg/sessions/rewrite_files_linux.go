package sessions

import "golang.org/x/sys/unix"

// exchange swaps the files a and b of folder dirfd atomically
// (renameat2(RENAME_EXCHANGE)). It returns errNoExchange where the kernel or
// the file system cannot (ENOSYS, EINVAL; EPERM from seccomp filters).
func exchange(dirfd int, a, b string) error {
	err := unix.Renameat2(dirfd, a, dirfd, b, unix.RENAME_EXCHANGE)
	switch err {
	case nil:
		return nil
	case unix.ENOSYS, unix.EINVAL, unix.EPERM, unix.EOPNOTSUPP:
		return errNoExchange
	}
	return err
}

// openElsewhere reports whether another process has the file name of folder
// dirfd open: a write lease (fcntl F_SETLEASE) is granted only on a file no
// other open file description refers to, and is given back at once. It
// reports false where it cannot tell: a file system without leases, or a file
// neither this user's nor leasable without CAP_LEASE (root has it).
func openElsewhere(dirfd int, name string) bool {
	// O_NONBLOCK: an open that would wait for another's lease fails instead.
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err == unix.EWOULDBLOCK
	}
	defer unix.Close(fd)
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_WRLCK)
	if err == nil {
		unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
	}
	return err == unix.EAGAIN
}
