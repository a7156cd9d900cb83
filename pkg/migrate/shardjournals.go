package migrate

import (
	"fmt"
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
	// Proofs are the proven copies the run's own journal did not hold yet,
	// or held as proven earlier than the shard proved them; it holds them
	// now (a dry run only counts them).
	Proofs int `json:"proofs"`
	// Skipped says why none were taken: a journal of another migration, or
	// one that could not be read.
	Skipped string `json:"skipped,omitempty"`
}

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
		if err != nil || !s.Sharded() || ShardJournal(path, s) != filepath.Join(dir, n) {
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
// Each journal is read twice, once to check it whole and once to take its
// proofs over, so that its proofs are never all held a second time.
func takeShardProofs(j *Journal, path, from string, dst store.Bucket) ([]ImportedJournal, error) {
	paths, err := shardJournals(path)
	if err != nil {
		return nil, fmt.Errorf("journal %s: the shards' journals: %w", path, err)
	}
	writable := j.f != nil
	var out []ImportedJournal
	for _, p := range paths {
		imp := ImportedJournal{Journal: p}
		if imp.Skipped = checkShardJournal(p, from, dst.Location()); imp.Skipped == "" {
			take := func(rec Record) error {
				if rec.T != RecordCopied {
					return nil
				}
				proof, err := copiedProof(rec)
				if err != nil {
					return err
				}
				if have, ok := j.state.Copied.Get(rec.Key); ok && have.At >= proof.At {
					return nil // known, as recently proven (a later run here may have copied it again)
				}
				imp.Proofs++
				if !writable {
					j.state.Copied.set(rec.Key, proof)
					return nil
				}
				return j.append(rec)
			}
			if err := readJournalFile(p, take); err != nil {
				return out, err
			}
		}
		out = append(out, imp)
	}
	if writable && len(out) > 0 {
		return out, j.Sync()
	}
	return out, nil
}

// checkShardJournal reads the journal at p whole, as LoadJournal would,
// without keeping its proofs, and says why it is not to be taken over ("" when
// it is): unreadable, no run in it, or a migration of another source or to
// another destination.
func checkShardJournal(p, from, to string) string {
	st := newJournalState()
	err := readJournalFile(p, func(rec Record) error {
		if rec.T == RecordCopied {
			_, err := copiedProof(rec)
			return err
		}
		return st.apply(rec)
	})
	switch {
	case err != nil:
		return err.Error()
	case st.Runs == 0:
		return "it records no run"
	case st.From != from || st.To != to:
		return fmt.Sprintf("it migrated %s to %s, not %s to %s", st.From, st.To, from, to)
	}
	return ""
}

func readJournalFile(p string, fn func(Record) error) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("journal %s: %w", p, err)
	}
	defer f.Close()
	if _, err := scanJournal(f, fn); err != nil {
		return fmt.Errorf("journal %s: %w", p, err)
	}
	return nil
}
