package report

// ResolveBlock is how many pairs attribute resolves at a time.
var ResolveBlock = &resolveBlock
