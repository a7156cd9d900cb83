package verify

import "github.com/mediactl/mediactl/pkg/metrics"

// MetricCounts are the gauges of one store's verify; q is its quarantine,
// or nil.
func (r *Report) MetricCounts(q *QuarantineReport) map[metrics.Gauge]int64 {
	counts := map[metrics.Gauge]int64{
		metrics.Blobs:      r.Blobs,
		metrics.Checked:    r.Selected,
		metrics.Corrupt:    r.Counts[Corrupt],
		metrics.Unreadable: r.Counts[Unreadable],
	}
	problems := int64(0)
	if r.ListError != "" {
		problems++
	}
	if s := r.Sessions; s != nil {
		counts[metrics.Orphans] = s.Orphans
		counts[metrics.OrphanBytes] = s.OrphanBytes
		if s.Scan != nil {
			counts[metrics.Dangling] = s.Scan.DanglingReferences
			problems += int64(len(s.Scan.Problems))
		}
	}
	counts[metrics.Problems] = problems
	if q != nil {
		counts[metrics.Quarantined] = int64(len(q.Moved))
		counts[metrics.Failed] = int64(len(q.Kept))
	}
	return counts
}
