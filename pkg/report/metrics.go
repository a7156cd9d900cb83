package report

import (
	"math"
	"slices"
	"strings"

	"github.com/mediactl/mediactl/pkg/metrics"
)

// MetricCounts are the gauges of one store: what it holds, what sessions
// name, its orphans, its growth and, for a local store that grows, the days
// until its file system is full.
func (s *StoreReport) MetricCounts() map[metrics.Gauge]int64 {
	counts := map[metrics.Gauge]int64{
		metrics.Blobs:             s.Stored.Blobs,
		metrics.Bytes:             s.Stored.Bytes,
		metrics.Referenced:        s.Referenced.Blobs,
		metrics.ReferencedBytes:   s.Referenced.Bytes,
		metrics.Orphans:           s.Orphaned.Blobs,
		metrics.OrphanBytes:       s.Orphaned.Bytes,
		metrics.Problems:          int64(len(s.Problems)),
		metrics.GrowthBytesPerDay: int64(math.Round(s.Growth.BytesPerDay)),
	}
	if s.Corrupt != nil {
		counts[metrics.Corrupt] = s.Corrupt.Blobs
	}
	if fs := s.Growth.Filesystem; fs != nil && fs.DaysUntilFull != nil {
		counts[metrics.DaysUntilFull] = int64(math.Floor(*fs.DaysUntilFull))
	}
	return counts
}

// TopOwnerMetrics are the series of the n owners holding the most exclusive
// bytes (what forgetting them would free), largest first: n bounds how many
// series a run adds, whatever the number of owners.
func (r *Report) TopOwnerMetrics(n int) []metrics.OwnerCounts {
	owners := slices.Clone(r.Owners)
	slices.SortFunc(owners, func(a, b *OwnerStats) int {
		if a.Exclusive.Bytes != b.Exclusive.Bytes {
			if a.Exclusive.Bytes > b.Exclusive.Bytes {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if n >= 0 && len(owners) > n {
		owners = owners[:n]
	}
	out := make([]metrics.OwnerCounts, 0, len(owners))
	for _, o := range owners {
		out = append(out, metrics.OwnerCounts{Owner: o.ID, Counts: map[metrics.Gauge]int64{
			metrics.OwnerReferenced: o.Referenced.Bytes,
			metrics.OwnerExclusive:  o.Exclusive.Bytes,
		}})
	}
	return out
}
