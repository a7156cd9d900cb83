package gc

import (
	"github.com/mediactl/mediactl/pkg/metrics"
	"github.com/mediactl/mediactl/pkg/trash"
)

// MetricCounts are the gauges of one store's gc. planned_* is the plan, in
// a dry run and a real one; removed_* what the run removed, reported (as
// zeros when nothing was: a refused or incomplete store) only by a real run.
// There is no dangling count: gc marks the blobs sessions name and resolves
// no reference against the store, so its scan's dangling count is 0 whatever
// dangles; scan and verify, which resolve them, write that gauge.
func (s *StoreReport) MetricCounts(dryRun bool) map[metrics.Gauge]int64 {
	counts := map[metrics.Gauge]int64{}
	if p := s.Plan; p != nil {
		counts[metrics.Blobs] = p.Blobs
		counts[metrics.Bytes] = p.Bytes
		counts[metrics.Planned] = int64(p.Candidates.Len())
		counts[metrics.PlannedBytes] = p.CandidateBytes
		counts[metrics.Problems] = int64(len(p.Problems))
		if p.SessionsRead {
			counts[metrics.Referenced] = p.Referenced
		}
	}
	if dryRun {
		return counts
	}
	res := s.Result
	if res == nil {
		res = &trash.Result{}
	}
	counts[metrics.Removed] = res.Deleted + res.Trashed
	counts[metrics.RemovedBytes] = res.Bytes
	counts[metrics.Trashed] = res.Trashed
	counts[metrics.Deleted] = res.Deleted
	counts[metrics.Failed] = int64(len(res.Failed))
	counts[metrics.Restored] = 0
	if s.Trash != nil {
		counts[metrics.Restored] = int64(len(s.Trash.Restored))
	}
	if m := s.Marks; m != nil {
		counts[metrics.Marked] = m.Marked
		if m.Deleted != nil {
			counts[metrics.Deleted] += m.Deleted.Deleted
			counts[metrics.Removed] += m.Deleted.Deleted
			counts[metrics.RemovedBytes] += m.Deleted.Bytes
			counts[metrics.Failed] += int64(len(m.Deleted.Failed))
		}
	}
	return counts
}
