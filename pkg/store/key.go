package store

import (
	"fmt"
	"strings"
)

// ValidKey reports whether key may name a blob of a store. It returns nil for a
// valid key, or an error wrapping [ErrInvalidKey] that names the key and says what
// is wrong with it. A key is invalid when it is empty, starts with "/", contains a
// backslash or a NUL byte, has an empty, "." or ".." segment (so "a//b" and "a/" are
// invalid), or when its first segment is [InternalDir].
//
// Every store method applies ValidKey to the keys it is given, so that nothing
// outside the store root (or inside the internal folder) can be addressed.
func ValidKey(key string) error {
	if err := checkPath(key); err != nil {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, err)
	}
	if first, _, _ := strings.Cut(key, "/"); first == InternalDir {
		return fmt.Errorf("%w %q: %s is mediactl's internal folder", ErrInvalidKey, key, InternalDir)
	}
	return nil
}

// validInternal checks name, a path relative to InternalDir (such as
// "trash/2024/x.png"), with the rules of ValidKey except the internal-folder one.
func validInternal(name string) error {
	if err := checkPath(name); err != nil {
		return fmt.Errorf("%w: internal path %q: %s", ErrInvalidKey, name, err)
	}
	return nil
}

// pathError is a reason why a key is invalid.
type pathError string

func (e pathError) Error() string { return string(e) }

// checkPath applies the lexical rules shared by keys and internal paths.
func checkPath(p string) error {
	switch {
	case p == "":
		return pathError("empty key")
	case p[0] == '/':
		return pathError(`starts with "/"`)
	case strings.IndexByte(p, '\\') >= 0:
		return pathError("contains a backslash")
	case strings.IndexByte(p, 0) >= 0:
		return pathError("contains a NUL byte")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "":
			return pathError(`has an empty segment ("//" or a trailing "/")`)
		case ".", "..":
			return pathError(fmt.Sprintf("has a %q segment", seg))
		}
	}
	return nil
}

// internalName returns the store-relative path of name inside InternalDir.
func internalName(name string) string { return InternalDir + "/" + name }
