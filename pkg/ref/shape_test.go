package ref

import (
	"bytes"
	"testing"
)

// scanPathByByte is scanPath without the eight-byte skip: the table read
// for every byte.
func scanPathByByte(b []byte) shape {
	var sh shape
	for _, c := range b {
		sh |= shapeOf[c]
	}
	return sh
}

// scanPath finds the shape a byte-by-byte read finds, for strings and byte
// slices, wherever in a word the bytes with a shape sit and next to bytes
// with the high bit set (UTF-8), which the word test must not take for them.
func FuzzScanPath(f *testing.F) {
	for _, s := range []string{"", "/srv/a/.forge/files/inbound/ab.png", "My Agent/x.png", "a\tb", "line\nbreak",
		"C:\\x", "nul\x00here", "\x80\xa0\xdc\xff\xe2\x80\x83 done", "\x1f\x20\x21", "ab\\cdefghijklmnop\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := scanPathByByte([]byte(s))
		if got := scanPath([]byte(s)); got != want {
			t.Fatalf("scanPath(%q) = %b, byte by byte %b", s, got, want)
		}
		if got := scanPath(s); got != want {
			t.Fatalf("scanPath(string %q) = %b, byte by byte %b", s, got, want)
		}
	})
}

// trimSpace trims what bytes.TrimSpace trims, its shortcut included.
func FuzzTrimSpace(f *testing.F) {
	for _, s := range []string{"", " ", "a", " a ", "a\n", "\u00a0a", "a\u0085", "\x85a\x85", "\x7fa\x7f", "\ta b\r"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := trimSpace(b), bytes.TrimSpace(b); !bytes.Equal(got, want) {
			t.Fatalf("trimSpace(%q) = %q, bytes.TrimSpace %q", b, got, want)
		}
	})
}
