package migrate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

// ImportedJournal is a shard's journal whose proven copies a run on the whole
// store took over (see Run): the shards copy, and the run that rewrites and
// deletes the sources afterwards finds their copies proven in their journals
// instead of asking the destination about every blob again.
type ImportedJournal struct {
	Journal string `json:"journal"`
	// Proofs are the proven copies the run's own journal did not hold yet;
	// it holds them now (a dry run only counts them).
	Proofs int `json:"proofs"`
	// Disagreed are the copies the run's own journal proved otherwise (an
	// earlier split's shard, a version copied again since): neither proof
	// is trusted, and the copy step proves each again from the destination.
	Disagreed int `json:"disagreed,omitempty"`
	// Skipped says why none were taken: a journal of another migration, or
	// one that could not be read.
	Skipped string `json:"skipped,omitempty"`
}

// ShardJournals are the journals of the shards of the migration whose
// journal is path (ShardJournal names them, beside it), for any split, in
// name order.
func ShardJournals(path string) ([]string, error) { return shardJournals(path) }

// shardJournals returns the journals ShardJournal names beside path, for any
// split, in name order.
func shardJournals(path string) ([]string, error) {
	dir, name := filepath.Split(path)
	ext := filepath.Ext(name)
	prefix := strings.TrimSuffix(name, ext) + ".shard-"
	entries, err := os.ReadDir(filepath.Clean(dir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, ext) {
			continue
		}
		s, err := shard.Parse(strings.Replace(strings.TrimSuffix(strings.TrimPrefix(n, prefix), ext), "-of-", "/", 1), nil)
		if err != nil || !s.Sharded() || shardJournal(path, s) != filepath.Join(dir, n) {
			continue // a name that only looks like one
		}
		out = append(out, filepath.Join(dir, n))
	}
	slices.Sort(out)
	return out, nil
}

// takeShardProofs adds to j the proven copies of the shard journals beside
// path that migrated from to dst, each as a copied record (so that j alone
// knows every copy, for the rewrite, delete-source and rollback), or, on a
// journal opened for reading (a dry run), to its state only. A shard journal
// of another migration, or one that cannot be read in full, is skipped and
// reported: its blobs are then proven as any blob the destination holds.
//
// Where j already proves a key the shard also proves, the two must agree
// (size, modification time and digest of the source); if they do not, say
// a shard of an earlier split copied a version the whole store has copied
// again since, neither is trusted: clocks of other hosts cannot say which is
// newer, and the copy step proves the key again from the destination.
//
// Each journal is read twice from one open file, once to check it whole and
// once, as far as the check read, to take its proofs over, so that its proofs
// are never all held a second time.
func takeShardProofs(j *Journal, path, from string, dst store.Bucket) ([]ImportedJournal, error) {
	paths, err := shardJournals(path)
	if err != nil {
		return nil, fmt.Errorf("journal %s: the shards' journals: %w", path, err)
	}
	var out []ImportedJournal
	// Keys whose proofs disagreed stay untrusted for the run: a later record
	// (another split's journal, the same shard copying again) finds nothing
	// left to disagree with, and must not be taken either.
	disagreed := map[string]bool{}
	for _, p := range paths {
		imp, err := takeShardJournal(j, p, from, dst.Location(), disagreed)
		if err != nil {
			return out, err
		}
		out = append(out, imp)
	}
	if j.f != nil && len(out) > 0 {
		return out, j.Sync()
	}
	return out, nil
}

// takeShardJournal takes the proofs of the shard journal at p over into j, as
// takeShardProofs describes.
func takeShardJournal(j *Journal, p, from, to string, disagreed map[string]bool) (ImportedJournal, error) {
	imp := ImportedJournal{Journal: p}
	f, err := os.Open(p)
	if err != nil {
		imp.Skipped = err.Error()
		return imp, nil
	}
	defer f.Close()
	good, why := checkShardJournal(f, from, to)
	if why != "" {
		imp.Skipped = why
		return imp, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return imp, fmt.Errorf("journal %s: %w", p, err)
	}
	take := func(rec Record) error {
		if rec.T != RecordCopied {
			return nil
		}
		proof, err := copiedProof(rec)
		if err != nil {
			return err
		}
		if disagreed[rec.Key] {
			imp.Disagreed++
			return nil
		}
		if have, ok := j.state.Copied.Get(rec.Key); ok {
			if sameCopy(have, proof) {
				return nil
			}
			imp.Disagreed++
			disagreed[rec.Key] = true
			j.state.Copied.drop(rec.Key)
			return nil
		}
		imp.Proofs++
		if j.f == nil {
			j.state.Copied.set(rec.Key, proof)
			return nil
		}
		return j.append(rec)
	}
	if _, err := scanJournal(io.LimitReader(f, good), take); err != nil {
		return imp, fmt.Errorf("journal %s: %w", p, err)
	}
	return imp, nil
}

// sameCopy reports whether two proofs prove the same copy of the same source,
// whenever each was made.
func sameCopy(a, b Proof) bool {
	return a.Size == b.Size && a.ModTime == b.ModTime && a.SHA256 == b.SHA256
}

// checkShardJournal reads the journal r whole, as LoadJournal would, without
// keeping its proofs. It returns the length of its well-formed prefix and why
// it is not to be taken over ("" when it is): unreadable, no run in it, or a
// migration of another source or to another destination.
func checkShardJournal(r io.Reader, from, to string) (int64, string) {
	st := newJournalState()
	good, err := scanJournal(r, func(rec Record) error {
		if rec.T == RecordCopied {
			_, err := copiedProof(rec)
			return err
		}
		return st.apply(rec)
	})
	switch {
	case err != nil:
		return good, err.Error()
	case st.Runs == 0:
		return good, "it records no run"
	case !store.SameBucket(st.From, from) || !store.SameBucket(st.To, to):
		return good, fmt.Sprintf("it migrated %s to %s, not %s to %s", st.From, st.To, from, to)
	}
	return good, ""
}
