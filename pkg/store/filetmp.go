package store

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
)

// fileWriteParams settles how fileblob writes a file:// bucket's objects:
// to a temporary file in the system's temporary folder, renamed into place,
// unless that folder is on another file system than the bucket, where the
// rename would fail ("invalid cross-device link") for every object: then
// beside the object ("no_tmp_dir"). no_tmp_dir=true is kept; a false one is
// removed (fileblob takes any value as true) and the choice made as without
// it: no other choice can write the bucket at all.
func fileWriteParams(q url.Values, dir string) {
	if on, _ := strconv.ParseBool(q.Get("no_tmp_dir")); on {
		return
	}
	q.Del("no_tmp_dir")
	if !sameFileSystem(os.TempDir(), existingAncestor(dir)) {
		q.Set("no_tmp_dir", "true")
	}
}

// existingAncestor is dir, or the nearest folder above it that exists (a
// bucket folder create_dir makes on first write).
func existingAncestor(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return dir
		}
		dir = up
	}
}

// writeOnlyParams are query parameters of a file:// URL that say how its
// objects are written, not which bucket it is: a location, and the identity
// journals compare, leave them out.
var writeOnlyParams = []string{"no_tmp_dir", "create_dir", "dir_file_mode"}

// SameBucket reports whether two store locations (as Location returns them,
// or as written by an operator) name the same bucket and prefix, whatever
// else their queries say about how it is reached or written: io_timeout, and
// for file:// no_tmp_dir, create_dir and dir_file_mode. Locations that do
// not parse as bucket URLs are compared as they are.
func SameBucket(a, b string) bool {
	if a == b {
		return true
	}
	sa, errA := parseBucketURL(a)
	sb, errB := parseBucketURL(b)
	if errA != nil || errB != nil {
		return false
	}
	return sa.location == sb.location
}
