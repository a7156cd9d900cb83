package jsonwalk

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// countStrings is a handler that only counts the strings it is given: what
// the walk itself costs.
type countStrings struct{ n int }

func (c *countStrings) Begin(*Walker, byte) error                 { return nil }
func (c *countStrings) End(*Walker, byte) error                   { return nil }
func (c *countStrings) String(w *Walker, s []byte, _ int64) error { c.n++; return nil }

// BenchmarkWalkSession walks a pretty-printed session: a generated forge file
// when MEDIACTL_BENCH_SESSION names one (go run ./bench/gensessions), else
// messages built here in the same shape.
func BenchmarkWalkSession(b *testing.B) {
	var data []byte
	if p := os.Getenv("MEDIACTL_BENCH_SESSION"); p != "" {
		var err error
		if data, err = os.ReadFile(filepath.Clean(p)); err != nil {
			b.Fatal(err)
		}
	} else {
		msg := "    {\n      \"content\": \"path chunk photo image a result call\",\n      \"parts\": [\n        {\n          \"media\": {\n            \"mimeType\": \"image/png\",\n            \"uri\": \"/srv/a/.forge/files/inbound/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png\"\n          },\n          \"type\": \"image\"\n        }\n      ],\n      \"role\": \"user\"\n    }"
		data = []byte("{\n  \"messages\": [\n" + strings.Repeat(msg+",\n", 999) + msg + "\n  ]\n}\n")
	}
	h := &countStrings{}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := New(bytes.NewReader(data), h, Limits{}).Run(); err != nil {
			b.Fatal(err)
		}
	}
	if h.n == 0 {
		b.Fatal("no strings")
	}
}
