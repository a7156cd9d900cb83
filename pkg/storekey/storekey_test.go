package storekey

import (
	"errors"
	"path"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for key, want := range map[string]string{
		"a.png":                 "",
		"u/t/uploads/f.png":     "",
		"..a/b..":               "",
		".mediactlx/a":          "",
		"a/.mediactl":           "", // only the top-level folder is internal
		"":                      "empty key",
		"/abs":                  `starts with "/"`,
		`a\b`:                   "backslash",
		"a\x00b":                "NUL",
		"a//b":                  "empty segment",
		"a/":                    "empty segment",
		".":                     `"." segment`,
		"a/../b":                `".." segment`,
		".mediactl":             "internal folder",
		".mediactl/trash/a.png": "internal folder",
	} {
		err := Valid(key)
		if want == "" {
			if err != nil {
				t.Errorf("Valid(%q) = %v, want nil", key, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), want) {
			t.Errorf("Valid(%q) = %v, want ErrInvalidKey saying %q", key, err, want)
		}
	}
}

func TestValidInternal(t *testing.T) {
	if err := ValidInternal("trash/run/.mediactl/x"); err != nil {
		t.Errorf("ValidInternal of a nested name: %v", err)
	}
	if err := ValidInternal("trash/../../x"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("ValidInternal(trash/../../x) = %v, want ErrInvalidKey", err)
	}
	if got := Internal("trash/a"); got != ".mediactl/trash/a" || !IsInternal(got) {
		t.Errorf("Internal(trash/a) = %q", got)
	}
}

// FuzzValid checks that a valid key, joined to any root, stays below it and is
// not the internal folder, and that Valid never panics.
func FuzzValid(f *testing.F) {
	for _, s := range []string{"a.png", "a/b", "../x", "a//b", ".mediactl/x", "a\\b", "é/ü", "a\x00", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		err := Valid(key)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("Valid(%q) = %v, not wrapping ErrInvalidKey", key, err)
			}
			return
		}
		if path.Clean(key) != key {
			t.Fatalf("valid key %q is not clean (%q)", key, path.Clean(key))
		}
		const root = "/store/root"
		joined := path.Join(root, key)
		if !strings.HasPrefix(joined, root+"/") || strings.HasPrefix(joined, root+"/"+InternalDir+"/") || joined == root+"/"+InternalDir {
			t.Fatalf("valid key %q joins to %q", key, joined)
		}
		if err := ValidInternal(key); err != nil {
			t.Fatalf("valid key %q refused as internal name: %v", key, err)
		}
	})
}
