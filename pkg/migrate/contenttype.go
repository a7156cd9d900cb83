package migrate

import (
	"bytes"
	"net/http"
	"path"
	"strings"
)

// byExtension is fixed rather than taken from the host's MIME database, so that
// the same blob gets the same Content-Type on every machine.
var byExtension = map[string]string{
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".gif":  "image/gif",
	".webp": "image/webp",
	".pdf":  "application/pdf",
	".svg":  "image/svg+xml",
	".heic": "image/heic",
	".mp3":  "audio/mpeg",
	".mp4":  "video/mp4",
	".wav":  "audio/wav",
	".txt":  "text/plain; charset=utf-8",
	".json": "application/json",
	".bin":  "application/octet-stream",
}

// ContentType decides the Content-Type of a blob from its first bytes and its
// name. The bytes win for the formats agent runtimes store (png, jpeg, gif,
// webp, pdf): a ".bin" that is a PNG is served as image/png, and a ".png" that
// is not one is not claimed to be. Otherwise the extension decides, and
// without a known extension the content is sniffed.
func ContentType(key string, head []byte) string {
	if t := magic(head); t != "" {
		return t
	}
	ext := strings.ToLower(path.Ext(key))
	if t, ok := byExtension[ext]; ok {
		switch t {
		case "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf":
			// The name claims a format whose signature is missing.
			return "application/octet-stream"
		}
		return t
	}
	if len(head) == 0 {
		return "application/octet-stream"
	}
	return http.DetectContentType(head)
}

func magic(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && bytes.Equal(b[:4], []byte("RIFF")) && bytes.Equal(b[8:12], []byte("WEBP")):
		return "image/webp"
	case bytes.HasPrefix(b, []byte("%PDF-")):
		return "application/pdf"
	}
	return ""
}
