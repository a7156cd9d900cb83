package storelock

// OwnPIDNamespace is this process's process id namespace, for the tests.
var OwnPIDNamespace = ownPIDNamespace
