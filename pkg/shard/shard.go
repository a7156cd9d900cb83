// Package shard splits one store's blobs into N disjoint parts, so that N
// processes (the pods of a Kubernetes Indexed Job, say) can each scan,
// verify, collect or migrate one part, and together all of it.
//
// A blob belongs to exactly one shard, decided by its key alone: the first 64
// bits of a hash h, and shard ⌊h·N / 2⁶⁴⌋. For a content-addressed name
// (<64 hex><ext>, in any folder) h is the start of the digest the name
// already carries, so a shard's blobs are one contiguous range of digests;
// for any other key, h is the start of the SHA-256 of the key. The split is
// a range of a uniform hash, not h mod N, so that a shard's content-addressed
// blobs have the hex prefixes [Spec.HexRange] names.
//
// Every shard still reads every session: a reference anywhere may name a blob
// of any shard. What divides by N is the blob side: the listing each shard
// keeps, its index, its plan, its hashing and its copies.
package shard

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/mediactl/mediactl/pkg/blobname"
)

// MaxShards is the most shards a run may be split into: far more than any
// Indexed Job's completions a store needs, few enough that a shard's range
// of digests is never empty.
const MaxShards = 1 << 16

// IndexEnv is the variable Kubernetes sets, in each pod of an Indexed Job, to
// the pod's completion index (0 to completions−1); "auto/N" reads it.
const IndexEnv = "JOB_COMPLETION_INDEX"

// Spec is one shard of N: K in [0, N). The zero value is the whole store
// (no sharding); so is 0/1, written out.
type Spec struct {
	K, N int
}

// All is the whole store.
var All = Spec{}

// Sharded reports whether s is a part of the store, not all of it.
func (s Spec) Sharded() bool { return s.N > 1 }

// String is "K/N", or "" for the whole store.
func (s Spec) String() string {
	if s.N == 0 {
		return ""
	}
	return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.N)
}

// shardOf returns the shard, out of n, that key belongs to (0 when n ≤ 1).
func shardOf(key string, n int) int {
	if n <= 1 {
		return 0
	}
	hi, _ := bits.Mul64(hash(key), uint64(n))
	return int(hi)
}

// Owns reports whether key belongs to shard s. Every key belongs to the
// whole store.
func (s Spec) Owns(key string) bool {
	if s.N <= 1 {
		return true
	}
	return shardOf(key, s.N) == s.K
}

func hash(key string) uint64 {
	if n, ok := blobname.Parse(key); ok {
		return binary.BigEndian.Uint64(n.Digest[:8])
	}
	sum := sha256.Sum256([]byte(key))
	return binary.BigEndian.Uint64(sum[:8])
}

// HexRange returns the lower-case hex prefixes, all of one length, that
// together hold every digest of shard s: the content-addressed names a
// shard owns all start with one of them (and the first and last prefix may
// also hold digests of the neighbouring shards). It is nil for the whole
// store.
func (s Spec) HexRange() []string {
	if s.N <= 1 {
		return nil
	}
	// Enough hex digits that a shard spans at least one whole prefix.
	digits := 1
	for 1<<(4*digits) < s.N {
		digits++
	}
	width := uint(4 * digits)
	first := lowBound(s.K, s.N) >> (64 - width)
	last := uint64(1)<<width - 1
	if s.K+1 < s.N {
		last = (lowBound(s.K+1, s.N) - 1) >> (64 - width)
	}
	out := make([]string, 0, last-first+1)
	for p := first; p <= last; p++ {
		out = append(out, fmt.Sprintf("%0*x", digits, p))
	}
	return out
}

// lowBound is the smallest h with ⌊h·n/2⁶⁴⌋ = k, that is ⌈k·2⁶⁴/n⌉, for
// 0 ≤ k < n.
func lowBound(k, n int) uint64 {
	if k == 0 {
		return 0
	}
	q, r := bits.Div64(uint64(k), 0, uint64(n))
	if r != 0 {
		q++
	}
	return q
}

// SyntaxError is a shard that cannot be read.
type SyntaxError struct {
	Text   string
	Reason string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("shard %q: %s", e.Text, e.Reason)
}

// ErrNoIndex is wrapped by the error of Parse for "auto/N" when the
// completion index is not set.
var ErrNoIndex = errors.New(IndexEnv + " is not set")

// Parse reads "K/N" (0 ≤ K < N ≤ MaxShards) or "auto/N", which takes K from
// the completion index that getenv returns for IndexEnv. An empty text is
// the whole store.
func Parse(text string, getenv func(string) string) (Spec, error) {
	if text == "" {
		return All, nil
	}
	k, n, ok := strings.Cut(text, "/")
	if !ok {
		return All, &SyntaxError{text, "write K/N, such as 3/16 (shard 3 of 16, counting from 0), or auto/N"}
	}
	nn, err := strconv.Atoi(n)
	if err != nil || nn < 1 || nn > MaxShards {
		return All, &SyntaxError{text, fmt.Sprintf("N must be a whole number from 1 to %d", MaxShards)}
	}
	if k == "auto" {
		if getenv == nil {
			return All, fmt.Errorf("shard %q: %w", text, ErrNoIndex)
		}
		k = getenv(IndexEnv)
		if k == "" {
			return All, fmt.Errorf("shard %q: %w", text, ErrNoIndex)
		}
	}
	kk, err := strconv.Atoi(k)
	if err != nil || kk < 0 || kk >= nn {
		return All, &SyntaxError{text, fmt.Sprintf("K must be a whole number from 0 to %d (shards count from 0, as %s does)", nn-1, IndexEnv)}
	}
	return Spec{K: kk, N: nn}, nil
}

// JobOf is the name of the Kubernetes Job of which this process runs an
// index, given its host name and the value of IndexEnv ("" when it runs in
// none): an Indexed Job names each pod's host "<job name>-<index>", and a
// CronJob names each Job it starts after the minute it was due, so the shards
// of one night's split share it and the next night's do not. A host name
// that does not end in "-<index>" gives "".
func JobOf(hostname, index string) string {
	job, ok := strings.CutSuffix(hostname, "-"+index)
	if index == "" || !ok || !ValidSplit(job) {
		return ""
	}
	return job
}

// ValidSplit reports whether s can name a split: 1 to 63 lower-case letters,
// digits and '-', starting and ending with a letter or a digit (a
// Kubernetes name).
func ValidSplit(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
