package storelock

// OwnPIDNamespace is this process's process id namespace, for the tests.
var OwnPIDNamespace = ownPIDNamespace

// ClaimName is the name of the claim on breaking a stale lock, for the tests.
var ClaimName = claimName
