package retain

import (
	"bytes"
	"strings"
)

// MarkOutsideCopies wraps mark so that text naming a copy rather than a blob
// is blanked before mark sees it (see MarkOptions.CopiedTo): one of
// prefixes followed by a key for which isKey holds, ending where a name
// ends. longest is the length of the longest such key. Empty prefixes are
// ignored; without any, mark itself is returned.
//
// Mark applies it to the store's own index; gc applies it to the trashed
// blobs of a run that had proven copies, so that the trash is marked as the
// run decided.
func MarkOutsideCopies(mark func([]byte), prefixes []string, longest int, isKey func(key string) bool) func([]byte) {
	prefixes = nonEmpty(prefixes)
	if len(prefixes) == 0 {
		return mark
	}
	return markOutside(mark, copyNames{prefixes: prefixes, longest: longest, isKey: isKey})
}

// escapeSlashes is s with every '/' written "\/", as PHP's json_encode and
// some Java encoders write it, and as forge's tool calls sometimes carry it.
func escapeSlashes(s string) string { return strings.ReplaceAll(s, "/", `\/`) }

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// copyNames says which text names a copy rather than a blob of the store: a
// prefix (MarkOptions.CopiedTo) followed by a key of the store.
type copyNames struct {
	prefixes []string
	isKey    func(key string) bool
	longest  int // the length of the store's longest key
}

// markOutside wraps mark so that text naming a copy (see copyNames) is
// blanked before the rule sees it.
func markOutside(mark func([]byte), c copyNames) func([]byte) {
	escaped := make([]string, 0, len(c.prefixes))
	for _, p := range c.prefixes {
		if e := escapeSlashes(p); e != p {
			escaped = append(escaped, e)
		}
	}
	return func(s []byte) {
		if !containsAny(s, c.prefixes) && !containsAny(s, escaped) {
			mark(s)
			return
		}
		mark(blankCopies(s, c))
	}
}

func containsAny(s []byte, prefixes []string) bool {
	for _, p := range prefixes {
		if bytes.Contains(s, []byte(p)) {
			return true
		}
	}
	return false
}

// blankCopies returns a copy of s in which every prefix + key is replaced by
// spaces, and nothing else: a copy's path is often followed by more text in
// the same string (a URL's "&right=" and another path, a shell's
// "IMAGES=a.png:b.png"), which names other blobs and must still keep them.
//
// A copy's key ends where the rule reads a name as ending (nameEnds): at the
// end of s or before a byte that is not a token byte, trailing dots aside
// ("saved to …/ab.png."). Where several keys would fit, the shortest is
// blanked: the less text left out, the more the rule keeps. Text after a
// prefix that is no key of the store (a ".." path, a key followed by more of a
// name, "ab.png.bak") is left as it is.
//
// A copy's path written with "\/" for every slash (JSON as PHP writes it, a
// tool call's arguments) is blanked the same way: its key is read with "\/"
// as "/".
func blankCopies(s []byte, c copyNames) []byte {
	out := bytes.Clone(s)
	for _, p := range c.prefixes {
		out = c.blank(out, p, false)
		if e := escapeSlashes(p); e != p {
			out = c.blank(out, e, true)
		}
	}
	return out
}

// blank blanks in out every p followed by a key (with "\/" for '/' when
// escaped).
func (c copyNames) blank(out []byte, p string, escaped bool) []byte {
	for i := 0; ; {
		j := bytes.Index(out[i:], []byte(p))
		if j < 0 {
			break
		}
		start := i + j
		i = start + 1
		if n := c.keyAt(out[start+len(p):], escaped); n > 0 {
			end := start + len(p) + n
			for k := start; k < end; k++ {
				out[k] = ' '
			}
			i = end
		}
	}
	return out
}

// keyAt is the length of the shortest key of the store that rest starts with
// (with "\/" for each '/' when escaped) and that ends where a name ends, or
// 0.
func (c copyNames) keyAt(rest []byte, escaped bool) int {
	longest := c.longest
	if escaped {
		longest *= 2
	}
	for n := 1; n <= len(rest) && n <= longest; n++ {
		if !nameEnds(rest[n:]) {
			continue
		}
		key := string(rest[:n])
		if escaped {
			if strings.HasSuffix(key, `\`) {
				continue // half of a "\/"
			}
			key = strings.ReplaceAll(key, `\/`, "/")
		}
		if c.isKey(key) {
			return n
		}
	}
	return 0
}
