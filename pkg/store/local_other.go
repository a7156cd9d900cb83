//go:build !unix

package store

// openFlags are added when a local store opens a blob; see local_unix.go.
const openFlags = 0
