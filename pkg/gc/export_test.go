package gc

// SetPhaseHook calls f at each boundary of a store's run (see phaseHook)
// until the returned function is called.
func SetPhaseHook(f func(phase string)) (reset func()) {
	phaseHook = f
	return func() { phaseHook = nil }
}
