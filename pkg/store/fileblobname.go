package store

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fileblobAttrsExt ends the name of the file in which gocloud's fileblob
// keeps an object's attributes, beside the object's own file; fileblob
// refuses an object name that ends in it.
const fileblobAttrsExt = ".attrs"

// fileblobPath returns the file that gocloud's fileblob (gocloud.dev
// v0.49) reads for the object name (the store's prefix included): a slash
// path relative to the bucket's folder. It is fileblob's own mapping —
// escapeKey, then filepath.Join with the folder, which cleans the path —
// and refuses what fileblob refuses: a name that is not UTF-8, one that
// leaves the folder or names the folder itself, and one ending in ".attrs".
// Reads of a file:// bucket open this file themselves (openFile), confined,
// instead of through fileblob, whose reader follows links.
func fileblobPath(name string) (string, error) {
	if !utf8.ValidString(name) {
		return "", fmt.Errorf("%w %q: not UTF-8, which a bucket key must be", ErrInvalidKey, name)
	}
	// filepath.Join(folder, escaped) is Clean(folder + "/" + escaped): the
	// escaped name's leading slashes vanish, and ".." climbs from the folder.
	p := path.Clean(strings.TrimLeft(fileblobEscape(name), "/"))
	if p == "." {
		return "", fmt.Errorf("%w %q: it names the bucket's folder itself", ErrInvalidKey, name)
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%w %q: it leaves the bucket's folder", ErrInvalidKey, name)
	}
	if strings.HasSuffix(p, fileblobAttrsExt) {
		return "", fmt.Errorf("%w %q: fileblob keeps attributes in files ending in %q, which name no object", ErrInvalidKey, name, fileblobAttrsExt)
	}
	return p, nil
}

// fileblobEscape is fileblob's escapeKey: the name of the file in which
// fileblob keeps the object name, with "/" still the separator (fileblob
// then replaces it with the system's). It escapes, as "__0x<hex>__", the
// control characters, the "/" that ends "../" or "//" or the name, on
// Windows a backslash and <>:"|?* — and, as the HexEscape of gocloud's
// internal escape package does whatever the caller asks, the start of
// anything that reads as such an escape.
func fileblobEscape(s string) string {
	return hexEscape(s, func(r []rune, i int) bool {
		c := r[i]
		switch {
		case c < 32:
			return true
		case os.PathSeparator != '/' && c == os.PathSeparator:
			return true
		case i > 1 && c == '/' && r[i-1] == '.' && r[i-2] == '.':
			return true
		case i > 0 && c == '/' && r[i-1] == '/':
			return true
		case c == '/' && i == len(r)-1:
			return true
		case os.PathSeparator == '\\' && (c == '>' || c == '<' || c == ':' || c == '"' || c == '|' || c == '?' || c == '*'):
			return true
		}
		return false
	})
}

// hexEscape is gocloud.dev/internal/escape.HexEscape (v0.49, Apache-2.0),
// which cannot be imported: s with every rune for which shouldEscape is true
// written "__0x<hex>__", and so is the start of any substring HexUnescape
// would read as an escape, and the "_" that would complete one in front of
// an escaped rune. A string that is not UTF-8 has its bad bytes replaced by
// U+FFFD, as there (fileblobPath refuses such names first).
func hexEscape(s string, shouldEscape func(s []rune, i int) bool) string {
	runes := []rune(s)
	escapeAt := make([]bool, len(runes))
	var pending []int
	n := 0
	for i := range runes {
		if shouldEscape(runes, i) || isEscapeSequence(runes, i) {
			escapeAt[i] = true
			pending = append(pending, i)
			n++
		}
	}
	for len(pending) > 0 {
		i := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if j, ok := danglingEscapePrefix(runes, i); ok && !escapeAt[j] {
			escapeAt[j] = true
			pending = append(pending, j)
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 13*n)
	for i, r := range runes {
		if escapeAt[i] {
			fmt.Fprintf(&b, "__%#x__", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// danglingEscapePrefix reports whether r[:end] ends with "__0x<hex>" or
// "__0x<hex>_", which the "__" of an escape at r[end] would complete, and
// returns the index of its leading "_".
func danglingEscapePrefix(r []rune, end int) (int, bool) {
	if end > 0 && r[end-1] == '_' {
		end--
	}
	start := end
	for start > 0 && r[start-1] != '_' {
		start--
	}
	if start < 2 || end-start < 2 || r[start] != '0' || r[start+1] != 'x' || r[start-2] != '_' {
		return 0, false
	}
	if _, err := strconv.ParseInt(string(r[start+2:end]), 16, 32); err != nil {
		return 0, false
	}
	return start - 2, true
}

// isEscapeSequence reports whether HexUnescape would read an escape
// ("__0x<hex>__") starting at r[i].
func isEscapeSequence(r []rune, i int) bool {
	if i+4 > len(r) || r[i] != '_' || r[i+1] != '_' || r[i+2] != '0' || r[i+3] != 'x' {
		return false
	}
	j := i + 4
	for j < len(r) && r[j] != '_' {
		j++
	}
	if j+1 >= len(r) || r[j+1] != '_' {
		return false
	}
	_, err := strconv.ParseInt(string(r[i+4:j]), 16, 32)
	return err == nil
}
