package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// The shards of a split copy every blob exactly once, each into a journal of
// its own, running at the same time; each shard's journal rolls back; a shard
// refuses to rewrite or delete sources.
func TestShardedMigrateCopiesEveryBlobOnce(t *testing.T) {
	srv := storetest.StartS3(t, nil)
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
	// The run on the whole store afterwards (the one that would rewrite)
	// finds every copy proven and uploads nothing.
	after, err := migrate.Run(context.Background(), migrate.RunOptions{Options: migrate.Options{From: src, To: dst}, JournalPath: journalBase})
	must(t, err)
	if after.Copy.Existing != int64(len(want)) || after.Copy.Copied != 0 {
		t.Errorf("the whole-store run after the shards: %d existing, %d copied; want %d, 0", after.Copy.Existing, after.Copy.Copied, len(want))
	}
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
