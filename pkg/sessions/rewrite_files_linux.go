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
