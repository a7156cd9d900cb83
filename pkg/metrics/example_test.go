package metrics_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mediactl/mediactl/pkg/metrics"
	"github.com/mediactl/mediactl/pkg/outcome"
)

// A nightly gc on a store writes its series; the file then holds them beside
// any other run's.
func ExampleWrite() {
	dir, _ := os.MkdirTemp("", "metrics")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mediactl.prom")
	err := metrics.Write(path, time.Unix(1_700_000_000, 0), metrics.Report{
		Command:  "gc",
		Store:    "/srv/agent/.forge/files/inbound",
		Outcome:  outcome.OK,
		Duration: 2 * time.Second,
		Counts:   map[metrics.Gauge]int64{metrics.Removed: 3, metrics.RemovedBytes: 4096},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fams, _ := metrics.Read(path)
	for _, m := range fams["mediactl_last_success_timestamp_seconds"].Metric {
		fmt.Println(m.Label[0].GetValue(), m.Label[1].GetValue(), m.GetGauge().GetValue())
	}
	// Output: gc /srv/agent/.forge/files/inbound 1.7e+09
}
