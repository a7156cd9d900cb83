package trash

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// PlaceError says why a folder cannot hold removed blobs of a store.
type PlaceError struct {
	Dir   string // the folder as given
	Real  string // its real path, symbolic links resolved
	Store string // the store's directory
	// Relation is "inside" (the folder is the store or below it: its
	// contents would be listed as blobs), "contains" (the store is below
	// the folder) or "root" (the folder is /).
	Relation string
}

func (e *PlaceError) Error() string {
	switch e.Relation {
	case "inside":
		return fmt.Sprintf("%s (really %s) is inside the store %s", e.Dir, e.Real, e.Store)
	case "contains":
		return fmt.Sprintf("%s (really %s) contains the store %s", e.Dir, e.Real, e.Store)
	}
	return fmt.Sprintf("%s (really %s) is the root of the file system", e.Dir, e.Real)
}

// CheckDir refuses a folder for removed blobs (a trash directory, a
// quarantine) that, with symbolic links resolved in both, is the store or
// inside it, contains it, or is /. The folder need not exist yet: its
// nearest existing ancestor is resolved. It returns a *PlaceError.
func CheckDir(storeDir, dir string) error {
	real, err := realPath(dir)
	if err != nil {
		return fmt.Errorf("trash: %s: %w", dir, err)
	}
	st, err := realPath(storeDir)
	if err != nil {
		return fmt.Errorf("trash: %s: %w", storeDir, err)
	}
	e := &PlaceError{Dir: dir, Real: real, Store: storeDir}
	switch {
	case real == string(filepath.Separator):
		e.Relation = "root"
	case within(real, st):
		e.Relation = "inside"
	case within(st, real):
		e.Relation = "contains"
	default:
		return nil
	}
	return e
}

// realPath is p, absolute, with symbolic links resolved in its longest
// existing prefix. A link whose target does not exist yet (MkdirAll would
// create it) is followed too: the folder would be made where it points.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	cur := abs
	for hops := 0; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		} else if !os.IsNotExist(err) {
			return "", err
		}
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if hops++; hops > 40 {
				return "", fmt.Errorf("%s: too many links", p)
			}
			target, err := os.Readlink(cur)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			cur = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Join(cur, rest), nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func within(path, dir string) bool {
	return path == dir || dir == string(filepath.Separator) || strings.HasPrefix(path, dir+string(filepath.Separator))
}
