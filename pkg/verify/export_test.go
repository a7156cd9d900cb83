package verify

// SetPairHashing turns pair hashing on or off (on forces it even where the
// CPU lacks SHA-NI, through the portable code; not with Jobs == 1) and returns
// a function that restores the setting. Tests that call it must not run in
// parallel.
func SetPairHashing(on bool) (restore func()) {
	old := pairHashing
	pairHashing = on
	return func() { pairHashing = old }
}

// Quarantine is the quarantine RunStores makes of one store, for the tests
// that hand it a chosen set of corrupt blobs and a fixed time.
var Quarantine = quarantine
