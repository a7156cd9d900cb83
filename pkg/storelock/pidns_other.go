//go:build !linux

package storelock

// pidNamespace is "" where processes have no namespaces to tell apart.
func pidNamespace() string { return "" }
