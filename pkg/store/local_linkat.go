//go:build unix && !solaris && !aix

package store

import "golang.org/x/sys/unix"

// linkAt hard-links the entry from in the folder fromFD as to in the folder
// toFD, without following from if it is a link; it fails if to exists.
func linkAt(fromFD int, from string, toFD int, to string) error {
	return unix.Linkat(fromFD, from, toFD, to, 0)
}
