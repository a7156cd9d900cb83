package sessions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkWalkLargeFolder walks one folder of 20,000 session files and
// reports the most memory the walk held at once, per file ("live-B/file",
// sampled every 1,000 files after a collection). Every shard of a sharded
// run walks every session file, so this is paid once per shard, whatever N.
// Measured 2026-12-02 here: 346 B/file (179 ms a walk) with os.ReadDir's
// entries and the paths kept as strings, 144 B/file (158 ms) with names only
// and the paths kept as 64-bit hashes; on the 29,154 files of bench/scale.sh's
// 10M tree, 367 and 159. With documents known by change time and size too
// (a 32-byte identity in the read set, one word a path), 143 B/file.
func BenchmarkWalkLargeFolder(b *testing.B) {
	dir := b.TempDir()
	const files = 20000
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("t-%06d.json", i))
		if err := os.WriteFile(p, []byte(`{"task_id":"t"}`), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	src, err := Open(context.Background(), dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var peak uint64
	b.ResetTimer()
	for range b.N {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		n := 0
		c, err := src.Walk(context.Background(), func(Item) error {
			if n++; n%1000 == 0 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > base {
					peak = max(peak, ms.HeapAlloc-base)
				}
			}
			return nil
		})
		if err != nil || c.Documents != files {
			b.Fatalf("walked %d documents, err %v; want %d", c.Documents, err, files)
		}
	}
	b.ReportMetric(float64(peak)/files, "live-B/file")
}
