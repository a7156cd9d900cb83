package verify_test

import (
	"context"
	"os"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/verify"
)

// BenchmarkVerifyStore verifies the store named by MEDIACTL_BENCH_STORE (made by
// go run ./bench/genblobs); bench/verify.sh runs the same through the CLI
// against sha256sum.
func BenchmarkVerifyStore(b *testing.B) {
	dir := os.Getenv("MEDIACTL_BENCH_STORE")
	if dir == "" {
		b.Skip("MEDIACTL_BENCH_STORE unset: generate a store with go run ./bench/genblobs")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for b.Loop() {
		rep, err := verify.Run(ctx, verify.Options{Store: st})
		if err != nil || !rep.Complete || rep.Counts[verify.Corrupt] != 0 {
			b.Fatal(err, rep)
		}
		b.SetBytes(rep.BytesRead)
	}
}
