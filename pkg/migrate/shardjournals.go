package migrate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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
// of another migration, or one that cannot be read, is skipped and reported:
// its blobs are then proven as any blob the destination holds.
func takeShardProofs(j *Journal, path, from string, dst store.Bucket) ([]ImportedJournal, error) {
	paths, err := shardJournals(path)
	if err != nil {
		return nil, fmt.Errorf("journal %s: the shards' journals: %w", path, err)
	}
	writable := j.f != nil
	var out []ImportedJournal
	for _, p := range paths {
		imp := ImportedJournal{Journal: p}
		sj, err := LoadJournal(p)
		switch {
		case err != nil:
			imp.Skipped = err.Error()
		case sj.state.Runs == 0:
			imp.Skipped = "it records no run"
		case sj.state.From != from || sj.state.To != dst.Location():
			imp.Skipped = fmt.Sprintf("it migrated %s to %s, not %s to %s", sj.state.From, sj.state.To, from, dst.Location())
		}
		if imp.Skipped == "" {
			for key, proof := range sj.state.Copied.All() {
				if have, ok := j.state.Copied.Get(key); ok && have.At >= proof.At {
					continue // known, as recently proven (a later run here may have copied it again)
				}
				if !writable {
					j.state.Copied.set(key, proof)
				} else if err := j.append(Record{T: RecordCopied, Time: time.Unix(proof.At, 0).UTC(), Key: key, Size: proof.Size,
					ModTime: time.Unix(0, proof.ModTime).UTC(), SHA256: proof.Digest(), URL: ObjectURL(dst, key)}); err != nil {
					return out, err
				}
				imp.Proofs++
			}
		}
		out = append(out, imp)
	}
	if writable && len(out) > 0 {
		return out, j.Sync()
	}
	return out, nil
}
