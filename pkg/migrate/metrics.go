package migrate

import "github.com/mediactl/mediactl/pkg/metrics"

// MetricCounts are the gauges of the migrated store. A dry run reports what
// it would copy as planned_*; copied_* is for runs that copied.
func (r *RunReport) MetricCounts(dryRun bool) map[metrics.Gauge]int64 {
	counts := map[metrics.Gauge]int64{}
	if cr := r.Copy; cr != nil {
		if dryRun {
			counts[metrics.Planned] = cr.Copied
			counts[metrics.PlannedBytes] = cr.CopiedBytes
		} else {
			counts[metrics.Copied] = cr.Copied
			counts[metrics.CopiedBytes] = cr.CopiedBytes
		}
		counts[metrics.Corrupt] = cr.Corrupt
		counts[metrics.Conflicts] = cr.Conflicts
		counts[metrics.Failed] = cr.Failed
	}
	if ck := r.Check; ck != nil {
		counts[metrics.StillLocal] = ck.StillLocal
		counts[metrics.Unresolved] = ck.Unresolved
	}
	if d := r.Delete; d != nil && d.Result != nil {
		counts[metrics.Removed] = d.Result.Trashed + d.Result.Deleted
		counts[metrics.RemovedBytes] = d.Result.Bytes
		counts[metrics.Trashed] = d.Result.Trashed
		counts[metrics.Failed] += int64(len(d.Result.Failed))
	}
	return counts
}
