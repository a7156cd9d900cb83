package scan

import "github.com/mediactl/mediactl/pkg/outcome"

// Outcome is what the scan came to: interrupted beats incomplete beats
// found. An incomplete scan is incomplete even when it found dangling
// references: its counts are partial.
func (r *Report) Outcome() outcome.Outcome {
	switch {
	case r.Interrupted:
		return outcome.Interrupted
	case !r.Complete:
		return outcome.Incomplete
	case r.DanglingReferences > 0:
		return outcome.Found
	}
	return outcome.OK
}
