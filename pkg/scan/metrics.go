package scan

import "github.com/mediactl/mediactl/pkg/metrics"

// MetricCounts are the gauges of a scan (one series for all its stores):
// references, problems and, when stores were given, dangling references.
func (r *Report) MetricCounts() map[metrics.Gauge]int64 {
	counts := map[metrics.Gauge]int64{
		metrics.References: r.References,
		metrics.Problems:   int64(len(r.Problems)),
	}
	if len(r.Stores) > 0 {
		counts[metrics.Dangling] = r.DanglingReferences
	}
	return counts
}
