package migrate

import "testing"

func TestContentType(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"
	jpeg := "\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01"
	for _, c := range []struct {
		key, head, want string
	}{
		{"a.png", png, "image/png"},
		{"a.bin", png, "image/png"},                           // the bytes win
		{"a.png", jpeg, "image/jpeg"},                         // over a wrong name too
		{"a.PNG", "not an image", "application/octet-stream"}, // a name claiming a signature that is missing
		{"a.jpeg", "", "application/octet-stream"},
		{"a.pdf", "%PDF-1.4\n", "application/pdf"},
		{"a.txt", "hello", "text/plain; charset=utf-8"},
		{"a.SVG", "<svg/>", "image/svg+xml"},
		{"a.bin", "hello", "application/octet-stream"},
		{"a", "<html><body>", "text/html; charset=utf-8"}, // no known extension: sniffed
		{"a", "", "application/octet-stream"},
	} {
		if got := contentType(c.key, []byte(c.head)); got != c.want {
			t.Errorf("contentType(%q, %q) = %q, want %q", c.key, c.head, got, c.want)
		}
	}
}
