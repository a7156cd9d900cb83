package gc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/internal/realworld"
	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

// shardStore is a forge-like store for the sharding tests: content-addressed
// blobs and opaque names in folders (with spaces), ages on both sides of the
// fences, sidecars beside some uploads, and forge sessions (MarshalIndent,
// so "&" is \u0026) that name a third of them, some only in prose.
type shardStore struct {
	st       store.Store
	src      sessions.Source
	owners   map[string]string
	all      []string
	inbound  string
	sessions string
}

func newShardStore(t *testing.T) *shardStore {
	t.Helper()
	w := newForgeWork(t)
	s := &shardStore{inbound: w.inbound, sessions: w.sessions, owners: map[string]string{}}
	write := func(key, content string, age time.Duration) string {
		p := filepath.Join(w.inbound, filepath.FromSlash(key))
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(content), 0o600))
		mt := time.Now().Add(-age)
		must(t, os.Chtimes(p, mt, mt))
		s.all = append(s.all, key)
		return key
	}
	ages := []time.Duration{time.Hour, 36 * time.Hour, 10 * 24 * time.Hour, 40 * 24 * time.Hour}
	var parts []forgePart
	var prose []string
	for i := range 600 {
		content := fmt.Sprintf("blob %d & co", i)
		age := ages[i%len(ages)]
		var key string
		switch i % 5 {
		case 0, 1, 2:
			key = write(name(content), content, age)
		case 3:
			key = write(fmt.Sprintf("uploads/user %d/photo %d.jpg", i%7, i), content, age)
		case 4:
			// An upload and its sidecar, decided together.
			id := fmt.Sprintf("%032x", i*7919)
			key = write(id+".png", content, age)
			side := write(id+".json", `{"id": "`+id+`"}`, ages[(i+1)%len(ages)])
			s.owners[side] = key
		}
		switch i % 3 {
		case 0:
			parts = append(parts, forgePart{Type: "image", Media: &forgeMedia{MIMEType: "image/png", URI: filepath.Join(w.inbound, filepath.FromSlash(key))}})
		case 1:
			if i%2 == 0 {
				prose = append(prose, "see "+filepath.Base(key)+" & the rest")
			}
		}
	}
	for i := 0; i < len(parts); i += 40 {
		end := min(i+40, len(parts))
		saveForge(t, w.sessions, forgeSession{TaskID: fmt.Sprintf("t-%d", i), Messages: []forgeMessage{{Role: "user", Content: "look", Parts: parts[i:end]}}})
	}
	saveForge(t, w.sessions, textSession("t-prose", strings.Join(prose, "\n")))
	var err error
	s.st, err = store.Open(context.Background(), w.inbound)
	must(t, err)
	s.src, err = sessions.Open(context.Background(), w.sessions, sessions.Options{})
	must(t, err)
	t.Cleanup(func() { s.st.Close(); s.src.Close() })
	return s
}

func (s *shardStore) companion(key string) (string, bool) { o, ok := s.owners[key]; return o, ok }

func (s *shardStore) plan(t *testing.T, opts gc.Options, sh shard.Spec) *gc.Plan {
	t.Helper()
	opts.Store, opts.Sessions, opts.Shard, opts.Companion = s.st, []sessions.Source{s.src}, sh, s.companion
	p, err := gc.MakePlan(context.Background(), opts)
	must(t, err)
	if !p.Complete {
		t.Fatalf("plan %s incomplete: %v", sh, p.Problems)
	}
	return p
}

// The union of the N shards' plans is the plan of the whole store, and no
// blob is in two shards, for N in {1, 2, 3, 7, 16} and every policy that may
// be sharded; a companion is always in its owner's shard.
func TestShardedPlansAddUpToTheWholePlan(t *testing.T) {
	s := newShardStore(t)
	now := time.Now()
	policies := map[string]gc.Options{
		"refcount":                  {Now: now},
		"refcount min-age 0":        {Now: now, MinAge: retain.NoMinAge},
		"age 30d":                   {Now: now, Policy: gc.Age, MaxAge: 30 * 24 * time.Hour},
		"age 7d keeping referenced": {Now: now, Policy: gc.Age, MaxAge: 7 * 24 * time.Hour, KeepReferenced: true},
	}
	for name, opts := range policies {
		whole := s.plan(t, opts, shard.All)
		want := keys(whole)
		if len(want) == 0 || len(want) == len(s.all) {
			t.Fatalf("%s: %d candidates of %d blobs: the fixture does not tell shards apart", name, len(want), len(s.all))
		}
		for _, n := range []int{1, 2, 3, 7, 16} {
			var got []string
			var blobs, referenced int64
			for k := range n {
				p := s.plan(t, opts, shard.Spec{K: k, N: n})
				blobs += p.Blobs
				referenced += p.Referenced
				for _, key := range keys(p) {
					if !(shard.Spec{K: k, N: n}).Owns(ownerOr(s.owners, key)) {
						t.Errorf("%s, %d/%d: candidate %s is another shard's", name, k, n, key)
					}
				}
				got = append(got, keys(p)...)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s, N=%d: union of the shards' plans\n got  %d %v\n want %d %v", name, n, len(got), got, len(want), want)
			}
			if blobs != whole.Blobs || referenced != whole.Referenced {
				t.Errorf("%s, N=%d: shards hold %d blobs (%d referenced), the store %d (%d)", name, n, blobs, referenced, whole.Blobs, whole.Referenced)
			}
		}
	}
}

func ownerOr(owners map[string]string, key string) string {
	if o, ok := owners[key]; ok {
		return o
	}
	return key
}

// A size cap is a decision over all blobs at once: refused on a shard.
func TestShardedSizeCapIsRefused(t *testing.T) {
	s := newShardStore(t)
	_, err := gc.MakePlan(context.Background(), gc.Options{Store: s.st, Sessions: []sessions.Source{s.src}, MaxSize: 1, Shard: shard.Spec{K: 1, N: 4}})
	if !errors.Is(err, gc.ErrShardedCap) {
		t.Fatalf("size cap on a shard: %v, want ErrShardedCap", err)
	}
}

// The stores forge's own code wrote: the shards' plans add up to the
// generator's ground truth.
func TestShardedRealWorldForge(t *testing.T) {
	root, truth := realworld.Forge(t)
	files := filepath.Join(root, ".forge", "files")
	want := stringList(truth["expect_gc_delete_default"])
	for _, n := range []int{2, 7} {
		var got []string
		for _, d := range []string{"inbound", "generated"} {
			for k := range n {
				for _, key := range planKeys(t, filepath.Join(files, d), filepath.Join(root, ".forge", "sessions"), gc.Options{Shard: shard.Spec{K: k, N: n}}) {
					got = append(got, d+"/"+key)
				}
			}
		}
		checkSet(t, fmt.Sprintf("N=%d", n), got, want)
	}
}

// Sharded sweeps run side by side; together they remove exactly what one
// run on the whole store would, and every run is named by its shard.
func TestShardedSweeps(t *testing.T) {
	s := newShardStore(t)
	whole := keys(s.plan(t, gc.Options{}, shard.All))
	n := 3
	done := make(chan *gc.Report, n)
	for k := range n {
		go func() {
			rep, err := gc.Run(context.Background(), gc.RunOptions{
				Options: gc.Options{Sessions: []sessions.Source{s.src}, Shard: shard.Spec{K: k, N: n}},
				Stores:  []store.Store{s.st}, CompanionOf: func(store.Store) func(string) (string, bool) { return s.companion },
				Delete: true, Guards: gc.Guards{AllowNoReferences: true},
			})
			if err != nil {
				t.Error(err)
			}
			done <- rep
		}()
	}
	var removed int64
	for range n {
		rep := <-done
		if rep == nil {
			continue
		}
		sr := rep.Stores[0]
		if sr.Locked != nil || sr.Result == nil {
			t.Fatalf("a shard did not sweep: locked %v, outcome %s, err %v", sr.Locked, sr.Outcome, sr.Err)
		}
		if !strings.HasSuffix(sr.Result.Run, fmt.Sprintf("-shard-%s-of-%d", strings.Split(sr.Plan.Shard, "/")[0], n)) {
			t.Errorf("run %q is not named by its shard %s", sr.Result.Run, sr.Plan.Shard)
		}
		removed += sr.Result.Trashed
	}
	if removed != int64(len(whole)) {
		t.Errorf("shards removed %d blobs, the whole plan had %d", removed, len(whole))
	}
	for _, key := range whole {
		if _, err := os.Lstat(filepath.Join(s.inbound, filepath.FromSlash(key))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still in the store: %v", key, err)
		}
	}
	if left := keys(s.plan(t, gc.Options{}, shard.All)); len(left) != 0 {
		t.Errorf("after the shards, the whole plan still has %v", left)
	}
}
