package gc

import "time"

// SetPhaseHook calls f at each boundary of a store's run (see phaseHook)
// until the returned function is called.
func SetPhaseHook(f func(phase string)) (reset func()) {
	phaseHook = f
	return func() { phaseHook = nil }
}

// SetRereadMargin sets the margin of the check after the moves (see
// RereadMargin), so that a test's sessions can be older than it.
func SetRereadMargin(d time.Duration) (reset func()) {
	rereadMargin = d
	return func() { rereadMargin = RereadMargin }
}

// Purge is RunPurge's step under a lock the test holds: the check against
// the sessions, then trash.Purge, with its error as it is.
var Purge = purge

// SetRunClock names the mark and deleted runs a run starts with the time f
// gives (see runClock), until the returned function is called.
func SetRunClock(f func() time.Time) (reset func()) {
	runClock = f
	return func() { runClock = time.Now }
}
