package sessions

import (
	"context"
	"os"
	"testing"
)

// BenchmarkWalkDatabase walks the database named by MEDIACTL_BENCH_DB
// ("sqlite:PATH" or a postgres:// URL, e.g. bench/scale.sh's coffer.db) and
// hands every item to a consumer that only counts it: the cost of the read
// and the hand-off, without the extractor.
func BenchmarkWalkDatabase(b *testing.B) {
	spec := os.Getenv("MEDIACTL_BENCH_DB")
	if spec == "" {
		b.Skip("MEDIACTL_BENCH_DB unset: give sqlite:PATH or a postgres:// URL")
	}
	ctx := context.Background()
	src, err := Open(ctx, spec, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	for b.Loop() {
		var n, bytes int64
		c, err := src.Walk(ctx, func(it Item) error {
			if it.Err != nil {
				b.Fatal(it.Err)
			}
			n++
			for _, v := range it.Values {
				bytes += int64(len(v.Text))
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(bytes)
		b.ReportMetric(float64(c.Rows), "rows")
		b.ReportMetric(float64(n), "items")
	}
}
