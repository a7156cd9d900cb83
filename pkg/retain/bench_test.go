package retain

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"
)

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkIndexMillion adds 1,000,000 content-addressed keys
// (MEDIACTL_BENCH_BLOBS to change it) and marks half of them with forge
// session strings. It reports the bytes the index keeps per blob
// (live-B/blob) and the time per marked string (ns/mark).
func BenchmarkIndexMillion(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("MEDIACTL_BENCH_BLOBS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	key := func(i int) string {
		d := sha256.Sum256(strconv.AppendInt(nil, int64(i), 10))
		return fmt.Sprintf("%x.png", d)
	}
	texts := make([][]byte, 0, (n+1)/2)
	for i := 0; i < n; i += 2 {
		texts = append(texts, []byte("/srv/agent/.forge/files/inbound/"+key(i)))
	}
	var live uint64
	var markNs float64
	for b.Loop() {
		runtime.GC()
		base := heapObjects()
		x := NewIndex()
		for i := range n {
			x.Add(key(i)) // a fresh string, as a listing gives: the index must not keep it
		}
		start := time.Now()
		for _, s := range texts {
			x.Mark(s)
		}
		markNs = float64(time.Since(start).Nanoseconds()) / float64(len(texts))
		runtime.GC()
		live = heapObjects() - base
		for i := range n {
			if x.Referenced(i) != (i%2 == 0) {
				b.Fatalf("blob %d: referenced %v", i, x.Referenced(i))
			}
		}
		runtime.KeepAlive(x)
	}
	b.ReportMetric(float64(live)/float64(n), "live-B/blob")
	b.ReportMetric(markNs, "ns/mark")
}

// BenchmarkMarkProse marks the strings of a forge session dense with
// references, as the retention rule sees every session string: mostly prose
// ("path chunk photo image …"), member names, and one absolute path to a
// content-addressed blob in ten strings, against an index of 200,000 blobs.
// It is the per-byte cost of the rule (MB/s of session strings).
func BenchmarkMarkProse(b *testing.B) {
	for _, kind := range []struct {
		name string
		key  func(i int) string
	}{
		// forge: content-addressed names, matched by their digest.
		{"forge", func(i int) string {
			d := sha256.Sum256(strconv.AppendInt(nil, int64(i), 10))
			return fmt.Sprintf("%x.png", d)
		}},
		// coffer: uuid4().hex and the user's suffix, matched by the hex part.
		{"coffer", func(i int) string {
			d := sha256.Sum256(strconv.AppendInt(nil, int64(i), 10))
			return fmt.Sprintf("%x.final copy", d[:16])
		}},
		// agent-runs uploads: the user's own file names, matched by the
		// words of their stems.
		{"uploads", func(i int) string {
			return fmt.Sprintf("agent-inputs/u%d/t%d/uploads/Scan %d of invoice-%d.pdf", i%97, i%1013, i, i*7)
		}},
	} {
		b.Run(kind.name, func(b *testing.B) { benchmarkMarkProse(b, kind.key) })
	}
}

// benchmarkMarkProse marks the strings of a session dense with references,
// as the retention rule sees every session string: mostly prose ("path chunk
// photo image …"), member names, and one absolute path to a blob in ten
// strings, against an index of 200,000 blobs named by key. It is the
// per-byte cost of the rule (MB/s of session strings).
func benchmarkMarkProse(b *testing.B, key func(int) string) {
	const n = 200_000
	x := NewIndex()
	for i := range n {
		x.Add(key(i))
	}
	words := []string{"path", "chunk", "photo", "image", "a", "result", "call", "on", "agent", "assistant", "table", "summary", "token", "error", "scan", "of"}
	var texts [][]byte
	size := 0
	for i := 0; size < 4<<20; i++ {
		var s []byte
		switch {
		case i%10 == 0:
			s = []byte("/home/u/files/" + path.Base(key(i*7%n)))
		case i%3 == 0:
			s = []byte([]string{"content", "parts", "media", "uri", "mimeType", "role", "type", "text"}[i%8])
		default:
			for k := range 5 + i%11 {
				s = append(append(s, words[(i+k*3)%len(words)]...), ' ')
			}
		}
		texts = append(texts, s)
		size += len(s)
	}
	x.Referenced(0) // freeze: the tables are built once per store, not per string
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, s := range texts {
			x.Mark(s)
		}
	}
}
