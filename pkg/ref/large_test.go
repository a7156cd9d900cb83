package ref

import (
	"fmt"
	"io"
	"runtime"
	"testing"
)

// sessionStream generates one forge-style session document of about size bytes
// on the fly, so that no test file of that size is needed.
type sessionStream struct {
	size, n int64
	i       int
	pending []byte
	closed  bool
	sample  func()
}

func (s *sessionStream) Read(p []byte) (int, error) {
	if len(s.pending) == 0 {
		switch {
		case s.n == 0:
			s.pending = []byte(`{"task_id": "big", "messages": [`)
		case s.n < s.size:
			sep := ","
			if s.i == 0 {
				sep = ""
			}
			s.pending = fmt.Appendf(nil, `%s
    {"role": "user", "content": "message %d: what is in this picture? it was taken at the lake last summer",
     "parts": [{"type": "image", "media": {"mimeType": "image/png", "uri": "/srv/agent/.forge/files/inbound/%064x.png"}}]}`, sep, s.i, s.i)
			s.i++
			if s.i%20000 == 0 && s.sample != nil {
				s.sample()
			}
		case !s.closed:
			s.pending, s.closed = []byte("]}\n"), true
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	s.n += int64(n)
	return n, nil
}

// TestLargeDocumentBoundedMemory streams a 200 MB session document through the
// extractor and checks that the heap never holds more than a small multiple of
// the read buffer: the document is never loaded whole.
func TestLargeDocumentBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 200 MB")
	}
	var peak uint64
	var ms runtime.MemStats
	sample := func() {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	runtime.GC()
	sample()
	base := peak
	src := &sessionStream{size: 200 << 20, sample: sample}
	refs := 0
	e := &Extractor{Found: func(Reference, Place) { refs++ }}
	if err := e.Document(src, Place{Document: "big.json"}); err != nil {
		t.Fatal(err)
	}
	if src.n < 200<<20 || refs != src.i {
		t.Fatalf("read %d bytes, %d references of %d", src.n, refs, src.i)
	}
	if grown := peak - base; grown > 32<<20 {
		t.Fatalf("heap grew by %d MiB while streaming 200 MB", grown>>20)
	}
	t.Logf("200 MB, %d references, heap growth at most %d KiB", refs, (peak-base)>>10)
}
