package migrate

import (
	"net/http"
	"path"
	"strings"

	"github.com/mediactl/mediactl/pkg/mediatype"
)

// byExtension gives the types of the extensions mediatype has no signature
// for. It is fixed rather than taken from the host's MIME database, so that
// the same blob gets the same Content-Type on every machine.
var byExtension = map[string]string{
	".svg":  "image/svg+xml",
	".heic": "image/heic",
	".mp3":  "audio/mpeg",
	".mp4":  "video/mp4",
	".wav":  "audio/wav",
	".txt":  "text/plain; charset=utf-8",
	".json": "application/json",
	".bin":  "application/octet-stream",
}

// contentType decides the Content-Type of a blob from its first bytes and its
// name. The bytes win for the formats agent runtimes store (png, jpeg, gif,
// webp, pdf): a ".bin" that is a PNG is served as image/png, and a ".png" that
// is not one is not claimed to be. Otherwise the extension decides, and
// without a known extension the content is sniffed.
func contentType(key string, head []byte) string {
	if t := mediatype.Sniff(head); t != "" {
		return t
	}
	ext := strings.ToLower(path.Ext(key))
	if mediatype.ForExt(ext) != "" {
		// The name claims a format whose signature is missing.
		return "application/octet-stream"
	}
	if t, ok := byExtension[ext]; ok {
		return t
	}
	if len(head) == 0 {
		return "application/octet-stream"
	}
	return http.DetectContentType(head)
}
