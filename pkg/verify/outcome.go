package verify

import "github.com/mediactl/mediactl/pkg/outcome"

// Outcome is what the verification of the store came to. Corrupt blobs and
// dangling references are found problems; with strict, anomalies are too.
func (r *Report) Outcome(strict bool) outcome.Outcome {
	switch {
	case r.Interrupted:
		return outcome.Interrupted
	case !r.Complete:
		return outcome.Incomplete
	case r.Counts[Corrupt] > 0:
		return outcome.Found
	case r.Sessions != nil && r.Sessions.Scan.DanglingReferences > 0:
		return outcome.Found
	case strict && r.AnomalyCount > 0:
		return outcome.Found
	}
	return outcome.OK
}
