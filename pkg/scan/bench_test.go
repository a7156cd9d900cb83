package scan_test

import (
	"context"
	"os"
	"testing"

	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
)

// BenchmarkScanTree scans the session tree named by MEDIACTL_BENCH_TREE (made by
// go run ./bench/gensessions); bench/scan.sh runs the same through the CLI.
func BenchmarkScanTree(b *testing.B) {
	dir := os.Getenv("MEDIACTL_BENCH_TREE")
	if dir == "" {
		b.Skip("MEDIACTL_BENCH_TREE unset: generate a tree with go run ./bench/gensessions")
	}
	ctx := context.Background()
	for b.Loop() {
		src, err := sessions.Open(ctx, dir, sessions.Options{})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := scan.Run(ctx, scan.Options{Sources: []sessions.Source{src}})
		if err != nil || !rep.Complete {
			b.Fatal(err, rep.Problems)
		}
		b.SetBytes(rep.Sources[0].Bytes)
		src.Close()
	}
}
