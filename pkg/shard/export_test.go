package shard

// Of is which shard, out of n, a key belongs to, for the tests that check
// the split itself rather than one Spec's share of it.
var Of = shardOf
