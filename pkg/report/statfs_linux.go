package report

import "syscall"

// statfs is the size and the space free to unprivileged users of the file
// system dir is on.
func statfs(dir string) (size, free uint64, err error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(dir, &s); err != nil {
		return 0, 0, err
	}
	return s.Blocks * uint64(s.Bsize), s.Bavail * uint64(s.Bsize), nil
}
