//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package persist

import "os"

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
