package scan_test

import (
	"context"
	"os"
	"testing"

	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// BenchmarkScanTree scans the session tree named by MEDIACTL_BENCH_TREE (made by
// go run ./bench/gensessions); bench/scan.sh runs the same through the CLI.
// With MEDIACTL_BENCH_STORE (the tree's .forge/files/inbound) every reference
// is also resolved against that store and each distinct key stat'ed.
func BenchmarkScanTree(b *testing.B) {
	dir := os.Getenv("MEDIACTL_BENCH_TREE")
	if dir == "" {
		b.Skip("MEDIACTL_BENCH_TREE unset: generate a tree with go run ./bench/gensessions")
	}
	ctx := context.Background()
	var stores []scan.Target
	if sd := os.Getenv("MEDIACTL_BENCH_STORE"); sd != "" {
		st, err := store.Open(ctx, sd)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		stores = []scan.Target{{Store: st}}
	}
	for b.Loop() {
		src, err := sessions.Open(ctx, dir, sessions.Options{})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := scan.Run(ctx, scan.Options{Sources: []sessions.Source{src}, Stores: stores})
		if err != nil || !rep.Complete {
			b.Fatal(err, rep.Problems)
		}
		b.SetBytes(rep.Sources[0].Bytes)
		src.Close()
	}
}
