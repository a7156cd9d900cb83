//go:build !unix

package store

import (
	"path/filepath"
	"strings"
)

// sameFileSystem reports whether the folders a and b are on one volume
// (Windows: the same drive), where a rename from one to the other works.
func sameFileSystem(a, b string) bool {
	return strings.EqualFold(filepath.VolumeName(a), filepath.VolumeName(b))
}
