package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

// memBucket is an empty mem:// bucket, closed when the test ends.
func memBucket(t *testing.T) store.Bucket {
	t.Helper()
	dst, err := store.Open(t.Context(), "mem://")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	return dst.(store.Bucket)
}

// startedJournal opens the journal at path with a run of /src to b started.
func startedJournal(t *testing.T, path string, b store.Bucket) *Journal {
	t.Helper()
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	if err := j.Started("/src", b.Location()); err != nil {
		t.Fatal(err)
	}
	return j
}

// A shard's proof is taken over where the whole store's journal has none;
// where it has one, the two must prove the same copy (when each was made does
// not matter: the hosts' clocks may differ). Where they disagree, neither is
// trusted for the run, and the journal's file keeps only its own.
func TestTakeShardProofsTrustsOnlyAgreement(t *testing.T) {
	b := memBucket(t)
	path := filepath.Join(t.TempDir(), "j.jsonl")
	copied := func(j *Journal, key string, at int64, sum string) {
		t.Helper()
		err := j.append(Record{T: RecordCopied, Time: time.Unix(at, 0).UTC(), Key: key, Size: int64(len(key)), ModTime: time.Unix(100, 0), SHA256: sum})
		if err != nil {
			t.Fatal(err)
		}
	}
	const sumA, sumB = "aa00000000000000000000000000000000000000000000000000000000000000", "bb00000000000000000000000000000000000000000000000000000000000000"
	sj := startedJournal(t, ShardJournal(path, shard.Spec{K: 1, N: 2}), b)
	copied(sj, "the same copy", 900, sumA)
	copied(sj, "another copy, proven later by a clock ahead", 900, sumA)
	copied(sj, "only in the shard", 100, sumA)
	sj.Close()
	// A shard of another split, read after it, proves the disagreeing key
	// the same way again: with nothing left to disagree with, it must still
	// not be taken.
	sj = startedJournal(t, ShardJournal(path, shard.Spec{K: 3, N: 4}), b)
	copied(sj, "another copy, proven later by a clock ahead", 900, sumA)
	sj.Close()

	j := startedJournal(t, path, b)
	copied(j, "the same copy", 200, sumA)
	copied(j, "another copy, proven later by a clock ahead", 200, sumB)
	imported, err := takeShardProofs(j, path, "/src", b)
	if err != nil {
		t.Fatal(err)
	}
	if len(imported) != 2 || imported[0].Proofs != 1 || imported[0].Disagreed != 1 || imported[1].Proofs != 0 || imported[1].Disagreed != 1 {
		t.Fatalf("imported %+v, want 1 proof taken over and 1 disagreeing, then 1 disagreeing", imported)
	}
	proven := j.State().Copied
	if p, ok := proven.Get("the same copy"); !ok || p.At != 200 {
		t.Errorf("the same copy: proof %+v, %v; want the journal's own", p, ok)
	}
	if p, ok := proven.Get("another copy, proven later by a clock ahead"); ok {
		t.Errorf("two proofs of different copies, and one is trusted: %+v", p)
	}
	if p, ok := proven.Get("only in the shard"); !ok || p.At != 100 {
		t.Errorf("only in the shard: proof %+v, %v; want the shard's", p, ok)
	}
	// The file took over only the shard's new proof.
	j.Close()
	again, err := LoadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	st := again.State().Copied
	if p, _ := st.Get("another copy, proven later by a clock ahead"); st.Len() != 3 || p.Digest() != sumB {
		t.Errorf("read again: %d proofs, the disagreeing one %s; want 3, the journal's own", st.Len(), p.Digest())
	}
}

// A shard journal damaged anywhere is not taken over at all, not even the
// proofs before the damage: it is named with the line, and its blobs are left
// to be proven by the destination.
func TestTakeShardProofsSkipsADamagedJournal(t *testing.T) {
	b := memBucket(t)
	path := filepath.Join(t.TempDir(), "j.jsonl")
	const sum = "aa00000000000000000000000000000000000000000000000000000000000000"
	damaged := `{"t":"start","time":"2026-12-01T00:00:00Z","version":1,"from":"/src","to":"` + b.Location() + `"}
{"t":"copied","time":"2026-12-01T00:00:01Z","key":"before","size":6,"sha256":"` + sum + `"}
{"t":"copied","time":"2026-12-01T00:00:02Z","key":"bad","size":3,"sha256":"not hex"}
{"t":"copied","time":"2026-12-01T00:00:03Z","key":"after","size":5,"sha256":"` + sum + `"}
`
	if err := os.WriteFile(ShardJournal(path, shard.Spec{K: 0, N: 3}), []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	j := startedJournal(t, path, b)
	imported, err := takeShardProofs(j, path, "/src", b)
	if err != nil {
		t.Fatal(err)
	}
	if len(imported) != 1 || imported[0].Proofs != 0 || !strings.Contains(imported[0].Skipped, "line 3") {
		t.Fatalf("imported %+v, want the journal skipped at line 3", imported)
	}
	if n := j.State().Copied.Len(); n != 0 {
		t.Fatalf("%d proofs taken from a damaged journal", n)
	}
}
