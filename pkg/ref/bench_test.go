package ref

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkExtractForgeSession measures extraction over a generated forge session
// file (go run ./bench/gensessions); set MEDIACTL_BENCH_SESSION to its path, or
// a small built-in document is used.
func BenchmarkExtractForgeSession(b *testing.B) {
	data := []byte(`{"messages":[{"role":"user","content":"What is in this image? Please compare the invoice total with the report summary.","parts":[{"type":"text","text":"What is in this image?"},{"type":"image","media":{"mimeType":"image/png","uri":"/srv/agent/.forge/files/inbound/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png"}}]},{"role":"assistant","content":"A cat."}]}`)
	if p := os.Getenv("MEDIACTL_BENCH_SESSION"); p != "" {
		var err error
		if data, err = os.ReadFile(filepath.Clean(p)); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	e := &Extractor{Found: func(Reference, Place) { n++ }}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := e.Document(bytes.NewReader(data), Place{}); err != nil {
			b.Fatal(err)
		}
	}
	if n == 0 {
		b.Fatal("no references found")
	}
}
