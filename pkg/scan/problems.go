package scan

import "fmt"

// ProblemLines words the problems the scan reports, one line each, and the
// sources it did not read completely when it reports none. The retention
// model (retain.Mark) and gc's checks of the trash word a scan's problems
// with it, so that every report says them alike.
func (r *Report) ProblemLines() []string {
	var out []string
	for _, pr := range r.Problems {
		out = append(out, fmt.Sprintf("session %s: %s", pr.Place, pr.Err))
	}
	for _, s := range r.Sources {
		if !s.Complete && len(r.Problems) == 0 {
			out = append(out, fmt.Sprintf("session source %s was not read completely", s.Source))
		}
	}
	return out
}

// Shortfall is what kept the scan from reading everything: nil when it read
// everything, never empty when it did not.
func (r *Report) Shortfall() []string {
	if r.Complete && !r.Interrupted {
		return nil
	}
	out := r.ProblemLines()
	if len(out) == 0 {
		out = append(out, "the sessions were not read completely")
	}
	return out
}
