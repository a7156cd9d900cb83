package store

import (
	"github.com/mediactl/mediactl/pkg/storekey"
)

// ValidKey reports whether key may name a blob of a store. It returns nil for a
// valid key, or an error wrapping [ErrInvalidKey] that names the key and says what
// is wrong with it. A key is invalid when it is empty, starts with "/", contains a
// backslash or a NUL byte, has an empty, "." or ".." segment (so "a//b" and "a/" are
// invalid), or when its first segment is [InternalDir]. It is [storekey.Valid].
//
// Every store method applies ValidKey to the keys it is given, so that nothing
// outside the store root (or inside the internal folder) can be addressed.
func ValidKey(key string) error { return storekey.Valid(key) }

// validInternal checks name, a path relative to InternalDir (such as
// "trash/2024/x.png"), with the rules of ValidKey except the internal-folder one.
func validInternal(name string) error { return storekey.ValidInternal(name) }

// pathError is a reason why a key is invalid.
type pathError = storekey.PathError

// checkPath applies the lexical rules shared by keys and internal paths.
func checkPath(p string) error { return storekey.CheckPath(p) }

// internalName returns the store-relative path of name inside InternalDir.
func internalName(name string) string { return storekey.Internal(name) }
