// Package mediatype recognizes the formats agent runtimes store — PNG, JPEG,
// GIF, WebP and PDF — by their first bytes, and the extensions that claim
// them.
//
// Both uses in mediactl need the same answer: verify reports a blob whose
// content contradicts its extension, and migrate labels each upload with the
// Content-Type its bytes show. The table is fixed rather than taken from the
// host's MIME database, so a blob gets the same answer on every machine.
package mediatype

import (
	"bytes"
	"strings"
)

// HeadLen is how many leading bytes of a content Sniff needs.
const HeadLen = 12

// The formats, each with its media type, the extensions that name it (the
// usual one first) and its signature.
var formats = []struct {
	mediaType string
	exts      []string
	match     func(head []byte) bool
}{
	{"image/png", []string{".png"}, func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) }},
	{"image/jpeg", []string{".jpg", ".jpeg"}, func(b []byte) bool { return bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}) }},
	{"image/gif", []string{".gif"}, func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
	}},
	{"image/webp", []string{".webp"}, func(b []byte) bool {
		return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP"
	}},
	{"application/pdf", []string{".pdf"}, func(b []byte) bool { return bytes.HasPrefix(b, []byte("%PDF-")) }},
}

// Sniff returns the media type whose signature starts head, or "" when head
// starts like none of the formats.
func Sniff(head []byte) string {
	for _, f := range formats {
		if f.match(head) {
			return f.mediaType
		}
	}
	return ""
}

// ForExt returns the media type an extension (".png", any case) claims, or
// "" when it names none of the formats.
func ForExt(ext string) string {
	ext = strings.ToLower(ext)
	for _, f := range formats {
		for _, e := range f.exts {
			if e == ext {
				return f.mediaType
			}
		}
	}
	return ""
}

// Ext returns the usual extension of a media type Sniff returns (".jpg" for
// "image/jpeg"), or "".
func Ext(mediaType string) string {
	for _, f := range formats {
		if f.mediaType == mediaType {
			return f.exts[0]
		}
	}
	return ""
}
