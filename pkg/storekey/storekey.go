// Package storekey is the syntax of blob-store keys, shared by the stores
// (pkg/store) and by what resolves references into keys (pkg/ref) without the
// one depending on the other.
//
// A key is a slash-separated path relative to a store root ("ab12….png",
// "u/t/uploads/f.png"). It never starts with "/", never has an empty, "." or
// ".." segment, never contains a backslash or a NUL byte, and never names the
// internal folder [InternalDir], where mediactl keeps its own state. These rules
// are purely lexical: they hold on every platform and for every kind of store,
// so a key that passes [Valid] cannot leave the store root however it is joined
// to it.
package storekey

import (
	"errors"
	"fmt"
	"strings"
)

// InternalDir is the top-level folder where mediactl keeps its own state (trash,
// journals, locks) inside a store. It is never listed as a blob and no key may
// name it.
const InternalDir = ".mediactl"

// ErrInvalidKey is wrapped by the errors of [Valid] and [ValidInternal]: the key
// could leave the store root or names the internal folder.
var ErrInvalidKey = errors.New("invalid key")

// Valid reports whether key may name a blob of a store. It returns nil for a
// valid key, or an error wrapping [ErrInvalidKey] that names the key and says
// what is wrong with it. A key is invalid when it is empty, starts with "/",
// contains a backslash or a NUL byte, has an empty, "." or ".." segment (so
// "a//b" and "a/" are invalid), or when its first segment is [InternalDir].
func Valid(key string) error {
	if err := CheckPath(key); err != nil {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, err)
	}
	if IsInternal(key) {
		return fmt.Errorf("%w %q: %s is mediactl's internal folder", ErrInvalidKey, key, InternalDir)
	}
	return nil
}

// ValidInternal checks name, a path relative to [InternalDir] (such as
// "trash/2024/x.png"), with the rules of [Valid] except the internal-folder one.
func ValidInternal(name string) error {
	if err := CheckPath(name); err != nil {
		return fmt.Errorf("%w: internal path %q: %s", ErrInvalidKey, name, err)
	}
	return nil
}

// IsInternal reports whether the store-relative path p is [InternalDir] or lies
// below it.
func IsInternal(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return first == InternalDir
}

// Internal returns the store-relative path of name, a path relative to
// [InternalDir].
func Internal(name string) string { return InternalDir + "/" + name }

// PathError is the reason CheckPath gives for a path it refuses.
type PathError string

func (e PathError) Error() string { return string(e) }

// CheckPath applies the lexical rules shared by keys and internal paths (all of
// [Valid] but the internal-folder rule). The error, a [PathError], says what is
// wrong without naming p, so that callers can phrase their own message.
func CheckPath(p string) error {
	switch {
	case p == "":
		return PathError("empty key")
	case p[0] == '/':
		return PathError(`starts with "/"`)
	case strings.IndexByte(p, '\\') >= 0:
		return PathError("contains a backslash")
	case strings.IndexByte(p, 0) >= 0:
		return PathError("contains a NUL byte")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "":
			return PathError(`has an empty segment ("//" or a trailing "/")`)
		case ".", "..":
			return PathError(fmt.Sprintf("has a %q segment", seg))
		}
	}
	return nil
}
