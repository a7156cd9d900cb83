package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// The shards of a split copy every blob exactly once, each into a journal of
// its own, running at the same time; the run on the whole store afterwards
// takes their proven copies over from their journals, without a request per
// blob; each journal rolls back; a shard refuses to rewrite or delete sources.
func TestShardedMigrateCopiesEveryBlobOnce(t *testing.T) {
	var heads atomic.Int64
	srv := storetest.StartS3(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				heads.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	want := map[string]bool{}
	for i := range 120 {
		if i%4 == 3 {
			key := fmt.Sprintf("photo %d.jpg", i)
			must(t, os.WriteFile(filepath.Join(dir, key), []byte(fmt.Sprint("opaque ", i)), 0o600))
			want[key] = true
			continue
		}
		want[writeBlob(t, dir, append(append([]byte{}, pngHead...), fmt.Sprint("picture ", i)...), ".png")] = true
	}
	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "sharded"))
	journalBase := filepath.Join(t.TempDir(), "j.jsonl")
	const n = 7
	reports := make(chan *migrate.RunReport, n)
	for k := range n {
		go func() {
			rep, err := migrate.Run(context.Background(), migrate.RunOptions{
				Options:     migrate.Options{From: src, To: dst, Select: migrate.Selection{Shard: shard.Spec{K: k, N: n}}},
				JournalPath: journalBase,
			})
			if err != nil {
				t.Error(err)
			}
			reports <- rep
		}()
	}
	copied := map[string]int{}
	journals := map[string]bool{}
	for range n {
		rep := <-reports
		if rep == nil {
			continue
		}
		if rep.Locked != nil || rep.Copy == nil {
			t.Fatalf("shard %s: locked %v", rep.Shard, rep.Locked)
		}
		journals[rep.Journal] = true
		j, err := migrate.LoadJournal(rep.Journal)
		must(t, err)
		for key := range j.State().Copied.All() {
			copied[key]++
		}
		j.Close()
	}
	if len(journals) != n {
		t.Errorf("%d journals for %d shards: %v", len(journals), n, journals)
	}
	for key := range want {
		if copied[key] != 1 {
			t.Errorf("%s copied by %d shards", key, copied[key])
		}
		if _, err := dst.Stat(context.Background(), key); err != nil {
			t.Errorf("%s not in the destination: %v", key, err)
		}
	}
	if len(copied) != len(want) {
		t.Errorf("%d keys copied, the store has %d", len(copied), len(want))
	}
	// A journal beside them that only looks like a shard's, and one of
	// another migration, are not taken over.
	must(t, os.WriteFile(filepath.Join(filepath.Dir(journalBase), "j.shard-x-of-3.jsonl"), []byte("not a journal\n"), 0o600))
	other := journal(t, migrate.ShardJournal(journalBase, shard.Spec{K: 0, N: 2}))
	must(t, other.Started("/elsewhere", "s3://other"))
	must(t, other.Close())

	// The run on the whole store afterwards (the one that would rewrite)
	// finds every copy proven in the shards' journals: it uploads nothing and
	// asks the destination about none of them; its own journal then holds
	// them all. Its dry run says so first.
	for _, dry := range []bool{true, false} {
		heads.Store(0)
		after, err := migrate.Run(context.Background(), migrate.RunOptions{Options: migrate.Options{From: src, To: dst, DryRun: dry}, JournalPath: journalBase})
		must(t, err)
		if after.Copy.Resumed != int64(len(want)) || after.Copy.Existing != 0 || after.Copy.Copied != 0 || heads.Load() != 0 {
			t.Errorf("dry %v: the whole-store run after the shards: %d resumed, %d existing, %d copied, %d HEAD requests; want %d, 0, 0, 0",
				dry, after.Copy.Resumed, after.Copy.Existing, after.Copy.Copied, heads.Load(), len(want))
		}
		taken, skipped := 0, 0
		for _, imp := range after.Imported {
			taken += imp.Proofs
			if imp.Skipped != "" {
				skipped++
				if !strings.Contains(imp.Skipped, "/elsewhere") {
					t.Errorf("dry %v: %s skipped: %s", dry, imp.Journal, imp.Skipped)
				}
			}
		}
		if len(after.Imported) != n+1 || skipped != 1 || taken != len(want) {
			t.Errorf("dry %v: imported %+v: want %d journals taken over, %d proofs, one of another migration skipped", dry, after.Imported, n, len(want))
		}
	}
	whole, err := migrate.LoadJournal(journalBase)
	must(t, err)
	if got := whole.State().Copied.Len(); got != len(want) {
		t.Errorf("the whole store's journal knows %d copies, want %d", got, len(want))
	}
	again, err := migrate.Run(context.Background(), migrate.RunOptions{Options: migrate.Options{From: src, To: dst}, JournalPath: journalBase})
	must(t, err)
	newProofs := 0
	for _, imp := range again.Imported {
		newProofs += imp.Proofs
	}
	if again.Copy.Resumed != int64(len(want)) || len(again.Imported) != n+1 || newProofs != 0 {
		t.Errorf("a second whole-store run: %d resumed, imported %+v; want every proof known already", again.Copy.Resumed, again.Imported)
	}
	journals[journalBase] = true
	for path := range journals {
		rb, err := migrate.Rollback(context.Background(), migrate.RollbackOptions{JournalPath: path})
		if err != nil {
			t.Fatalf("rollback %s: %v", path, err)
		}
		if rb.Outcome.String() != "ok" {
			t.Errorf("rollback %s: %s %v", path, rb.Outcome, rb.Notes)
		}
	}

	srcs, err := sessions.Open(context.Background(), t.TempDir(), sessions.Options{})
	must(t, err)
	defer srcs.Close()
	_, err = migrate.Run(context.Background(), migrate.RunOptions{
		Options:      migrate.Options{From: src, To: dst, Select: migrate.Selection{Shard: shard.Spec{K: 0, N: 2}}},
		DeleteSource: true, Sessions: []sessions.Source{srcs},
	})
	if !errors.Is(err, migrate.ErrShardedSessionStep) {
		t.Errorf("delete-source on a shard: %v", err)
	}
}

// A proof taken over from a shard's journal is no more than evidence: a copy
// deleted from the destination after the shard made it is uploaded again by
// the run on the whole store, which the rewrite would otherwise point at
// nothing.
func TestWholeRunUploadsWhatAShardCopiedAndTheBucketLost(t *testing.T) {
	ctx := context.Background()
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	var names []string
	for i := range 8 {
		names = append(names, writeBlob(t, dir, append(append([]byte{}, pngHead...), fmt.Sprint("picture ", i)...), ".png"))
	}
	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "lost"))
	journalBase := filepath.Join(t.TempDir(), "j.jsonl")
	for k := range 2 {
		_, err := migrate.Run(ctx, migrate.RunOptions{
			Options:     migrate.Options{From: src, To: dst, Select: migrate.Selection{Shard: shard.Spec{K: k, N: 2}}},
			JournalPath: journalBase,
		})
		must(t, err)
	}
	must(t, dst.Delete(ctx, names[3]))
	for _, dry := range []bool{true, false} {
		rep, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: src, To: dst, DryRun: dry}, JournalPath: journalBase})
		must(t, err)
		if rep.Copy.Resumed != int64(len(names)-1) || rep.Copy.Copied != 1 {
			t.Errorf("dry %v: %d resumed, %d copied; want %d, 1", dry, rep.Copy.Resumed, rep.Copy.Copied, len(names)-1)
		}
	}
	if got := readObject(t, dst, names[3]); digest(got)+".png" != names[3] {
		t.Errorf("%s holds other bytes after the run", names[3])
	}
}
