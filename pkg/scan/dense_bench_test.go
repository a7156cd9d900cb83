package scan_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// denseTree writes a forge work directory whose sessions are dense with
// references, as bench/gensessions -prose 60 writes them (about 1.5 per KiB):
// every user message has a media part naming a blob by its absolute path, a
// quarter of the replies read it again through a tool call whose arguments are
// JSON in a string. Files are pretty-printed by encoding/json as forge writes
// them. Every missingEvery-th distinct blob is not in inbound/: those dangle.
func denseTree(tb testing.TB, files, msgsPerFile, distinct, missingEvery int) (root string, refs int) {
	tb.Helper()
	root = tb.TempDir()
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	dir := filepath.Join(root, ".forge", "sessions")
	for _, d := range []string{inbound, dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	name := func(i int) string {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		d := sha256.Sum256(b[:])
		return hex.EncodeToString(d[:]) + ".png"
	}
	for i := range distinct {
		if i%missingEvery == 0 {
			continue
		}
		if err := os.WriteFile(filepath.Join(inbound, name(i)), []byte("x"), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	next := 0
	for f := range files {
		var msgs []any
		for range msgsPerFile {
			uri := filepath.Join(inbound, name(next%distinct))
			text := "please compare the invoice total with the chart on this page"
			msgs = append(msgs, map[string]any{"role": "user", "content": text, "parts": []any{
				map[string]any{"type": "text", "text": text},
				map[string]any{"type": "image", "media": map[string]any{"mimeType": "image/png", "uri": uri}},
			}})
			refs++
			reply := map[string]any{"role": "assistant", "content": "a cat sat on the mat"}
			if next%4 == 0 {
				args, err := json.Marshal(map[string]any{"path": uri, "mode": "read"})
				if err != nil {
					tb.Fatal(err)
				}
				reply["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", next), "type": "function",
					"function": map[string]any{"name": "read_file", "arguments": string(args)}}}
				refs++
			}
			msgs = append(msgs, reply)
			next++
		}
		out, err := json.MarshalIndent(map[string]any{"task_id": fmt.Sprintf("t-%d", f), "messages": msgs}, "", "  ")
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("t-%06d.json", f)), out, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return root, refs
}

// BenchmarkScanDense scans a small reference-dense tree (about 6 MB, 12,500
// references over 4,000 blobs, 40 of them missing) against its store: the per-reference path of
// extraction, resolution, the collector and one stat per distinct key. It
// reports ns per reference.
func BenchmarkScanDense(b *testing.B) {
	root, refs := denseTree(b, 40, 250, 4000, 100)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(root, ".forge", "files", "inbound"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		src, err := sessions.Open(ctx, filepath.Join(root, ".forge", "sessions"), sessions.Options{})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := scan.Run(ctx, scan.Options{
			Sources: []sessions.Source{src},
			Stores:  []scan.Target{{Store: st, Resolver: scan.NewResolver(st, []string{root})}},
		})
		if err != nil || !rep.Complete {
			b.Fatal(err, rep.Problems)
		}
		if rep.References != int64(refs) || rep.DistinctBlobs != 4000 || rep.DanglingBlobs != 40 {
			b.Fatalf("references %d (want %d), distinct %d, dangling %d", rep.References, refs, rep.DistinctBlobs, rep.DanglingBlobs)
		}
		b.SetBytes(rep.Sources[0].Bytes)
		src.Close()
	}
	reportPerRef(b, refs, cpu0)
}

// BenchmarkScanDenseNoStore is BenchmarkScanDense without a store: extraction
// and the distinct-blob set only.
func BenchmarkScanDenseNoStore(b *testing.B) {
	root, refs := denseTree(b, 40, 250, 4000, 100)
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		src, err := sessions.Open(ctx, filepath.Join(root, ".forge", "sessions"), sessions.Options{})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := scan.Run(ctx, scan.Options{Sources: []sessions.Source{src}})
		if err != nil || !rep.Complete {
			b.Fatal(err, rep.Problems)
		}
		if rep.References != int64(refs) || rep.DistinctBlobs != 4000 {
			b.Fatalf("references %d (want %d), distinct %d", rep.References, refs, rep.DistinctBlobs)
		}
		b.SetBytes(rep.Sources[0].Bytes)
		src.Close()
	}
	reportPerRef(b, refs, cpu0)
}

// cpuTime is the CPU time the process has used: on a machine shared with
// other work, CPU per reference says more than wall time.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportPerRef(b *testing.B, refs int, cpu0 time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(refs), "ns/ref")
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N)/float64(refs), "cpu-ns/ref")
}
