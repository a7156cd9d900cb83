package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RealPath is p, absolute, with symbolic links resolved in its longest
// existing prefix: the folder a path names, as the operating system will
// reach it. A link whose target does not exist yet (MkdirAll would
// create it) is followed too: the folder would be made where it points.
func RealPath(p string) (string, error) {
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

// Within reports whether path is dir or below it (both absolute and clean).
func Within(path, dir string) bool {
	sep := string(filepath.Separator)
	return path == dir || dir == sep || strings.HasPrefix(path, dir+sep)
}
