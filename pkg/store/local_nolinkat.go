//go:build solaris || aix

package store

import "golang.org/x/sys/unix"

// linkAt: golang.org/x/sys/unix has no linkat here, so renameNoReplaceAt
// falls back to a check followed by a rename.
func linkAt(fromFD int, from string, toFD int, to string) error { return unix.ENOTSUP }
