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
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	if err := j.Started("/src", b.Location()); err != nil {
		t.Fatal(err)
	}
	return j
}

// A shard's proof replaces the whole store's own only when it is more
// recent: a copy made again on the whole store after the split keeps its
// newer proof, and a shard run again after it wins.
func TestTakeShardProofsKeepsTheNewest(t *testing.T) {
	b := memBucket(t)
	path := filepath.Join(t.TempDir(), "j.jsonl")
	copied := func(j *Journal, key string, at int64, sum string) {
		t.Helper()
		err := j.append(Record{T: RecordCopied, Time: time.Unix(at, 0).UTC(), Key: key, Size: int64(len(key)), ModTime: time.Unix(at, 0), SHA256: sum})
		if err != nil {
			t.Fatal(err)
		}
	}
	const sumA, sumB = "aa00000000000000000000000000000000000000000000000000000000000000", "bb00000000000000000000000000000000000000000000000000000000000000"
	sj := startedJournal(t, ShardJournal(path, shard.Spec{K: 1, N: 2}), b)
	copied(sj, "older in the shard", 100, sumA)
	copied(sj, "newer in the shard", 300, sumA)
	copied(sj, "only in the shard", 100, sumA)
	sj.Close()

	j := startedJournal(t, path, b)
	copied(j, "older in the shard", 200, sumB)
	copied(j, "newer in the shard", 200, sumB)
	imported, err := takeShardProofs(j, path, "/src", b)
	if err != nil {
		t.Fatal(err)
	}
	if len(imported) != 1 || imported[0].Proofs != 2 || imported[0].Skipped != "" {
		t.Fatalf("imported %+v, want 2 proofs of one journal", imported)
	}
	for key, want := range map[string]int64{"older in the shard": 200, "newer in the shard": 300, "only in the shard": 100} {
		if p, ok := j.State().Copied.Get(key); !ok || p.At != want {
			t.Errorf("%s: proof %+v, %v; want the one proven at %d", key, p, ok, want)
		}
	}
	// The journal alone says the same when read again.
	j.Close()
	again, err := LoadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := again.State().Copied.Get("newer in the shard"); p.At != 300 || again.State().Copied.Len() != 3 {
		t.Errorf("read again: %d proofs, newer in the shard proven at %d", again.State().Copied.Len(), p.At)
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
