package mediatype

import (
	"bytes"
	"testing"
)

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		head string
		want string
	}{
		{"\x89PNG\r\n\x1a\n\x00\x00\x00\x0d", "image/png"},
		{"\x89PNG\r\n", ""}, // cut short
		{"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"},
		{"GIF87a", "image/gif"},
		{"GIF89a\x01\x00", "image/gif"},
		{"GIF90a", ""},
		{"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"RIFF\x24\x00\x00\x00WAVEfmt ", ""},
		{"RIFF\x24\x00\x00\x00WEB", ""},
		{"%PDF-1.7\n", "application/pdf"},
		{"%PDF", ""},
		{"", ""},
		{"<html>", ""},
	} {
		if got := Sniff([]byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q) = %q, want %q", c.head, got, c.want)
		}
	}
}

func TestExtensions(t *testing.T) {
	for ext, want := range map[string]string{
		".png": "image/png", ".PNG": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".JPEG": "image/jpeg",
		".gif": "image/gif", ".webp": "image/webp", ".pdf": "application/pdf",
		".bin": "", ".svg": "", "": "", "png": "",
	} {
		if got := ForExt(ext); got != want {
			t.Errorf("ForExt(%q) = %q, want %q", ext, got, want)
		}
	}
	for mt, want := range map[string]string{"image/jpeg": ".jpg", "image/png": ".png", "application/pdf": ".pdf", "text/plain": "", "": ""} {
		if got := Ext(mt); got != want {
			t.Errorf("Ext(%q) = %q, want %q", mt, got, want)
		}
	}
	// Every format round-trips through its usual extension.
	for _, f := range formats {
		if got := ForExt(Ext(f.mediaType)); got != f.mediaType {
			t.Errorf("ForExt(Ext(%q)) = %q", f.mediaType, got)
		}
	}
}

// FuzzSniff checks, on any bytes, that Sniff needs no more than HeadLen of
// them and names only a format whose extension claims it back.
func FuzzSniff(f *testing.F) {
	for _, s := range []string{"\x89PNG\r\n\x1a\n", "\xff\xd8\xff", "GIF89a", "RIFF\x00\x00\x00\x00WEBP", "%PDF-", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Sniff(b)
		if short := Sniff(b[:min(len(b), HeadLen)]); short != got {
			t.Fatalf("Sniff of the first %d bytes = %q, of all %d = %q", HeadLen, short, len(b), got)
		}
		if got != "" && ForExt(Ext(got)) != got {
			t.Fatalf("Sniff = %q, which no extension claims", got)
		}
		if got == "" && bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Fatal("a PDF signature was not recognized")
		}
	})
}
