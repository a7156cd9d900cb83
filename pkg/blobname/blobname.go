// Package blobname recognises content-addressed blob names.
//
// A content-addressed name is the lower-case hex sha256 of the blob's bytes
// followed by an optional extension: "9f86d0…0f00a08.png". The extension is empty
// or a dot and 1–8 characters of [a-z0-9]. Such a name can be verified by hashing
// the blob. Any other name (coffer's "<uuid-hex>.jpg", a Supabase object key) is
// opaque: its existence can be checked, its content cannot.
package blobname

import (
	"encoding/hex"
	"path"
	"strings"
)

// DigestLen is the length of a hex sha256 digest.
const DigestLen = 64

// MaxExtLen is the length of the longest extension a content-addressed name
// may have, its dot included (".markdown").
const MaxExtLen = 9

// Digest is a sha256 digest.
type Digest [32]byte

// String returns the lower-case hex form.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Name is a parsed content-addressed name.
type Name struct {
	Digest Digest
	Ext    string // "" or ".png"
}

// String renders the name.
func (n Name) String() string { return n.Digest.String() + n.Ext }

// Parse parses the base name of key (the part after the last "/") as a
// content-addressed name. ok is false for opaque names.
func Parse(key string) (n Name, ok bool) {
	n.Digest, n.Ext, ok = ParseBase(path.Base(key))
	if !ok {
		return Name{}, false
	}
	return n, true
}

// ParseBase parses base, a name without a folder, as a content-addressed
// name: its digest and its extension (a part of base). It allocates nothing
// and checks the digest by table, without a branch per digit: scans and the
// gc plan ask it about every reference.
func ParseBase(base string) (d Digest, ext string, ok bool) {
	if len(base) < DigestLen || !validExt(base[DigestLen:]) {
		return d, "", false
	}
	var bad byte
	for i := range d {
		hi, lo := lowerHexValue[base[2*i]], lowerHexValue[base[2*i+1]]
		bad |= hi | lo
		d[i] = hi<<4 | lo&0x0f
	}
	if bad&0xf0 != 0 {
		return Digest{}, "", false
	}
	return d, base[DigestLen:], true
}

// lowerHexValue is the value of a lower-case hex digit, 0xff for any other
// byte.
var lowerHexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

// ParseDigest parses a 64-character hex digest in either case.
func ParseDigest(s string) (Digest, bool) {
	var d Digest
	if len(s) != DigestLen {
		return d, false
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return d, false
	}
	return d, true
}

// validExt reports whether ext is a valid extension of a content-addressed name:
// empty, or "." and 1–8 characters of [a-z0-9].
func validExt(ext string) bool {
	if ext == "" {
		return true
	}
	if ext[0] != '.' || len(ext) < 2 || len(ext) > MaxExtLen {
		return false
	}
	for i := 1; i < len(ext); i++ {
		c := ext[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

var tempSuffixes = []string{".tmp", ".temp", ".part", ".partial", ".download", ".crdownload", ".swp", "~"}

// IsTemporary recognises the leftovers and in-progress files of writers —
// "x.json.tmp", ".tmp-1234", "x.part" — which are never blobs: verify reports
// them, gc never collects them.
func IsTemporary(key string) bool {
	base := key[strings.LastIndexByte(key, '/')+1:]
	for _, s := range tempSuffixes {
		if len(base) >= len(s) && strings.EqualFold(base[len(base)-len(s):], s) {
			return true
		}
	}
	if len(base) >= 4 && (strings.EqualFold(base[:4], ".tmp") || strings.EqualFold(base[:4], "tmp-")) {
		return true
	}
	for i := 0; i+5 <= len(base); i++ {
		if base[i] == '.' && strings.EqualFold(base[i:i+5], ".tmp.") {
			return true
		}
	}
	return false
}
