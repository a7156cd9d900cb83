package migrate_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
)

// TestVerifyDownloadReadsEveryCopyBack: with VerifyDownload a copy is taken
// as proven only once its bytes were read back and hashed in this run, an
// earlier run's proof and a copy already there (right size, right sha256
// metadata) too. A copy whose bytes changed since while its listing and
// metadata did not is a conflict, left in place, and its proof is not
// confirmed, so neither the rewrite nor --delete-source act on it. Before,
// a rerun counted it "proven earlier" and went on to delete its source.
func TestVerifyDownloadReadsEveryCopyBack(t *testing.T) {
	dir, bucket := t.TempDir(), t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	var keys []string
	for _, c := range []string{"the first blob", "the second blob", "a third"} {
		k := writeBlob(t, dir, []byte(c), ".png")
		must(t, os.Chtimes(filepath.Join(dir, k), old, old))
		keys = append(keys, k)
	}
	src := openStore(t, dir)
	dst := openStore(t, "file://"+bucket)
	jp := filepath.Join(t.TempDir(), "j.jsonl")
	first := journal(t, jp)
	if rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: first, VerifyDownload: true}); rep.Copied != 3 {
		t.Fatalf("first copy: %+v", rep)
	}
	must(t, first.Close())

	// The first copy's bytes change in the bucket; its attributes stay.
	bad := []byte("other bytes, same len")[:len("the first blob")]
	must(t, os.WriteFile(filepath.Join(bucket, keys[0]), bad, 0o600))

	j := journal(t, jp)
	rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: j, VerifyDownload: true})
	if rep.Conflicts != 1 || rep.Resumed != 2 || rep.Failed != 0 || len(rep.ConflictList) != 1 || rep.ConflictList[0].Key != keys[0] {
		t.Fatalf("rerun with VerifyDownload: %d conflicts %v, %d resumed, %d failed; want the changed copy a conflict and the other two resumed",
			rep.Conflicts, rep.ConflictList, rep.Resumed, rep.Failed)
	}
	if rep.ConflictList[0].Actual != digest(bad) {
		t.Errorf("the conflict names %s as the copy's sha256, want %s", rep.ConflictList[0].Actual, digest(bad))
	}
	cands, kept, err := migrate.Deletable(t.Context(), j, dst, func(string) bool { return false }, 2)
	must(t, err)
	for _, c := range cands {
		if c.Key == keys[0] {
			t.Fatalf("the source of the changed copy is deletable: %v (kept %v)", cands, kept)
		}
	}
	if len(cands) != 2 {
		t.Errorf("deletable %v, want the two sources whose copies were read back", cands)
	}
	if b, _ := os.ReadFile(filepath.Join(bucket, keys[0])); string(b) != string(bad) {
		t.Errorf("the changed copy was overwritten: %q", b)
	}

	// A journal that knows none of them: the copies already there are
	// read back too.
	fresh := journal(t, filepath.Join(t.TempDir(), "j.jsonl"))
	rep = copyAll(t, migrate.Options{From: src, To: dst, Journal: fresh, VerifyDownload: true})
	if rep.Conflicts != 1 || rep.Existing != 2 || rep.ConflictList[0].Key != keys[0] {
		t.Fatalf("with a new journal: %d conflicts %v, %d already there; want the changed copy a conflict and the other two there", rep.Conflicts, rep.ConflictList, rep.Existing)
	}
	if _, ok := fresh.Proven(keys[0]); ok {
		t.Errorf("the changed copy was journaled as proven")
	}
}
