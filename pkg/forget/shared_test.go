package forget

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/target"
)

// twoPods are two forge work dirs migrated into one bucket (s3, in
// process), content-addressed: pod A uploads the picture alice and bob
// both sent, pod B finds it there and proves it as its own. B's sessions
// name the one object.
type twoPods struct {
	a, b     *work
	url, tpl string
	pic      string
}

func newTwoPods(t *testing.T) *twoPods {
	p := &twoPods{a: newWork(t), b: newWork(t)}
	p.url = storetest.StartS3(t, nil).Bucket(t, "media") + "&prefix=inbound/"
	p.tpl = "/mnt/media/{prefix}{key}"
	p.pic = p.a.blob("the same picture", "")
	if p.b.blob("the same picture", "") != p.pic {
		t.Fatal("not one key")
	}
	p.a.session("alice", "", p.pic)
	p.a.session("carol", "hello")
	return p
}

// bucket opens the bucket, closed with the test.
func (p *twoPods) bucket(t *testing.T) store.Store {
	t.Helper()
	dst, err := store.Open(context.Background(), p.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	return dst
}

// forgeTarget opens w's forge work dir as the command does, closed with the
// test.
func forgeTarget(t *testing.T, w *work) *target.Targets {
	t.Helper()
	tg, err := target.Open(context.Background(), target.Spec{Layout: "forge", Root: w.root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// migrateB migrates pod B's store into the bucket, bob's session naming the
// picture.
func (p *twoPods) migrateB() {
	p.b.session("bob", "", p.pic)
	p.b.migrated(p.url, p.tpl, "", true)
}

// The review's case: forget alice on pod A must not delete the object bob's
// session on pod B names. The bucket records B's migration; pod A's run
// does not read B's sessions: the copy stays, said, and the run is not
// complete.
func TestForgetSharedBucketCopy(t *testing.T) {
	p := newTwoPods(t)
	p.a.migrated(p.url, p.tpl, "", true)
	p.migrateB()
	if p.a.exists(p.pic) || p.b.exists(p.pic) || !copyThere(t, p.url, p.pic) {
		t.Fatal("the picture should live only in the bucket")
	}
	for _, del := range []bool{false, true} {
		rep := p.a.run(Options{Owners: []string{"alice"}, Delete: del})
		if !copyThere(t, p.url, p.pic) {
			t.Fatalf("delete %v: bob's session on pod B names %s, and the copy is gone", del, p.pic)
		}
		if k := keptOf(rep, p.pic); len(k) != 1 || k[0].Reason != KeptCopyShared {
			t.Errorf("delete %v: kept %+v", del, k)
		}
		if len(rep.Erased) != 0 || rep.Outcome != outcome.Incomplete {
			t.Errorf("delete %v: erased %v, outcome %s", del, keysOf(rep.Erased), rep.Outcome)
		}
		if !slices.ContainsFunc(rep.Problems, func(s string) bool { return strings.Contains(s, p.b.inbox) && strings.Contains(s, "other migrations") }) {
			t.Errorf("delete %v: problems %v do not name pod B's store", del, rep.Problems)
		}
	}
}

// A store migrated into the bucket while forget runs, after its decision
// (pod B proves the copy as its own after the moves): the records are read
// again right before the copies' deletes, and the copy stays.
func TestForgetBucketSharedDuringRun(t *testing.T) {
	p := newTwoPods(t)
	p.a.migrated(p.url, p.tpl, "", true)
	phaseHook = func(ph string) {
		if ph == "moved" {
			p.migrateB()
		}
	}
	t.Cleanup(func() { phaseHook = nil })
	rep := p.a.run(Options{Owners: []string{"alice"}, Delete: true})
	if !copyThere(t, p.url, p.pic) {
		t.Fatalf("pod B migrated during the run and names %s; the copy is gone (erased %v)", p.pic, keysOf(rep.Erased))
	}
	if k := keptOf(rep, p.pic); len(k) != 1 || k[0].Reason != KeptCopyShared || rep.Outcome != outcome.Incomplete {
		t.Errorf("kept %+v, outcome %s", k, rep.Outcome)
	}
}

// A migration the bucket holds no record of (made before mediactl kept
// them) leaves its copies alone: whether another store's share the bucket
// is unknown. Run again, the migration records itself, and forget erases.
func TestForgetCopyOfUnrecordedMigration(t *testing.T) {
	p := newTwoPods(t)
	w := p.a
	w.migrated(p.url, p.tpl, "", true)
	ctx := context.Background()
	dst := p.bucket(t)
	claims, err := migrate.Claims(ctx, dst)
	if err != nil || len(claims) != 1 {
		t.Fatalf("records %+v, %v", claims, err)
	}
	for id := range claims {
		if err := store.Unwrap(dst).(store.Internal).DeleteInternal(ctx, migrate.ClaimName(id)); err != nil {
			t.Fatal(err)
		}
	}
	rep := w.run(Options{Owners: []string{"alice"}, Delete: true})
	if !copyThere(t, p.url, p.pic) || len(rep.Erased) != 0 || rep.Outcome != outcome.Incomplete {
		t.Fatalf("without the record: erased %v, outcome %s", keysOf(rep.Erased), rep.Outcome)
	}
	if !slices.ContainsFunc(rep.Problems, func(s string) bool {
		return strings.Contains(s, "no record") && strings.Contains(s, "run that migrate again")
	}) {
		t.Errorf("problems %v", rep.Problems)
	}

	// migrate again, as the problem says: nothing to copy; it records itself.
	tg := forgeTarget(t, w)
	if _, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: tg.Stores[0], To: dst}}); err != nil {
		t.Fatal(err)
	}
	rep = w.run(Options{Owners: []string{"alice"}, Delete: true})
	if copyThere(t, p.url, p.pic) || len(rep.Erased) != 1 || rep.Outcome != outcome.OK {
		t.Fatalf("recorded: erased %v, kept %+v, outcome %s, problems %v", keysOf(rep.Erased), rep.Kept, rep.Outcome, rep.Problems)
	}
	if j, _ := filepath.Glob(filepath.Join(w.inbox, ".mediactl", "migrate", "*.jsonl")); len(j) != 1 {
		t.Errorf("journals %v: the second run should have used the first one's", j)
	}
}

// A store migrated into the bucket by a mediactl that left no record, the
// first to copy the picture there: pod A's migration finds it there and
// proves it, and its journal says so. forget on A leaves it alone: it may
// be that store's object.
func TestForgetCopyFoundInTheBucket(t *testing.T) {
	p := newTwoPods(t)
	ctx := context.Background()
	dst := p.bucket(t)
	p.migrateB()
	claims, err := migrate.Claims(ctx, dst)
	if err != nil || len(claims) != 1 {
		t.Fatalf("records %+v, %v", claims, err)
	}
	for id := range claims { // as an older mediactl: no record
		if err := store.Unwrap(dst).(store.Internal).DeleteInternal(ctx, migrate.ClaimName(id)); err != nil {
			t.Fatal(err)
		}
	}
	p.a.migrated(p.url, p.tpl, "", true)
	rep := p.a.run(Options{Owners: []string{"alice"}, Delete: true})
	if !copyThere(t, p.url, p.pic) {
		t.Fatalf("bob's session on pod B names %s, and forget on A deleted it (erased %v)", p.pic, keysOf(rep.Erased))
	}
	if k := keptOf(rep, p.pic); len(k) != 1 || k[0].Reason != KeptCopyFound || rep.Outcome != outcome.Incomplete {
		t.Errorf("kept %+v, outcome %s", k, rep.Outcome)
	}
	if !slices.ContainsFunc(rep.Problems, func(s string) bool { return strings.Contains(s, "found them in the bucket already") }) {
		t.Errorf("problems %v", rep.Problems)
	}
}

// A store migrated into the bucket's root holds the keys below every
// prefix too: pod B's store keeps the picture in a folder named as pod A's
// prefix, so both proved one object. Its record is above A's prefix, and
// forget on A reads it there.
func TestForgetRecordAbovePrefix(t *testing.T) {
	p := newTwoPods(t)
	root := strings.TrimSuffix(p.url, "&prefix=inbound/")
	p.a.migrated(p.url, p.tpl, "", true)
	if err := os.MkdirAll(filepath.Join(p.b.inbox, "inbound"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(p.b.inbox, p.pic), filepath.Join(p.b.inbox, "inbound", p.pic)); err != nil {
		t.Fatal(err)
	}
	p.b.session("bob", "", "inbound/"+p.pic)
	p.b.migrated(root, p.tpl, "", true)
	if !copyThere(t, root, "inbound/"+p.pic) || p.b.exists("inbound/"+p.pic) {
		t.Fatal("pod B's picture should live only in the bucket")
	}
	rep := p.a.run(Options{Owners: []string{"alice"}, Delete: true})
	if !copyThere(t, p.url, p.pic) {
		t.Fatalf("bob's session on pod B names inbound/%s at the bucket's root, and forget on A deleted it (erased %v)", p.pic, keysOf(rep.Erased))
	}
	if k := keptOf(rep, p.pic); len(k) != 1 || k[0].Reason != KeptCopyShared || rep.Outcome != outcome.Incomplete {
		t.Errorf("kept %+v, outcome %s", k, rep.Outcome)
	}
	if !slices.ContainsFunc(rep.Problems, func(s string) bool { return strings.Contains(s, `folder "" above it`) }) {
		t.Errorf("problems %v", rep.Problems)
	}
}

// A journal of this run's stores whose migration copied nothing (forge's
// generated/ folder, empty, migrated into the same bucket) recorded itself
// too: that record is the run's own, not another store's.
func TestForgetOwnRecordWithoutCopies(t *testing.T) {
	p := newTwoPods(t)
	w := p.a
	if err := os.MkdirAll(filepath.Join(w.root, ".forge", "files", "generated"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.migrated(p.url, p.tpl, "", true)
	ctx := context.Background()
	tg := forgeTarget(t, w)
	dst := p.bucket(t)
	gen := tg.Stores[1]
	if !strings.HasSuffix(gen.Location(), "generated") {
		t.Fatalf("store %s", gen.Location())
	}
	if rep, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: gen, To: dst}}); err != nil || rep.Copy.Copied != 0 {
		t.Fatalf("generated/: %+v, %v", rep, err)
	}
	if c, err := migrate.Claims(ctx, dst); err != nil || len(c) != 2 {
		t.Fatalf("records %+v, %v", c, err)
	}
	rep := w.run(Options{Owners: []string{"alice"}, Delete: true})
	if copyThere(t, p.url, p.pic) || len(rep.Erased) != 1 || rep.Outcome != outcome.OK {
		t.Fatalf("erased %v, kept %+v, outcome %s, problems %v", keysOf(rep.Erased), rep.Kept, rep.Outcome, rep.Problems)
	}
}

// A migration split into shards with its journal outside the store
// (--journal FILE): the shards' journals lie beside it, and their records
// are this run's own when forget is given that journal.
func TestForgetShardedMigrationJournal(t *testing.T) {
	p := newTwoPods(t)
	w := p.a
	ctx := context.Background()
	tg := forgeTarget(t, w)
	dst := p.bucket(t)
	journal := filepath.Join(t.TempDir(), "media.jsonl")
	for k := range 2 {
		if _, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: tg.Stores[0], To: dst, Select: migrate.Selection{Shard: shard.Spec{K: k, N: 2}}}, JournalPath: journal}); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := migrate.Claims(ctx, dst); err != nil || len(c) != 2 {
		t.Fatalf("the shards' records %+v, %v", c, err)
	}
	tpl, err := migrate.ParseTemplate(p.tpl, nil)
	if err != nil {
		t.Fatal(err)
	}
	rws, err := tg.OpenRewriters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, rw := range rws {
			rw.Close()
		}
	}()
	rep, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: tg.Stores[0], To: dst}, JournalPath: journal,
		Rewrite: true, Rewriters: rws, Template: tpl, Resolver: tg.Resolver(tg.Stores[0]),
		DeleteSource: true, Sessions: tg.Sources, Bases: tg.Bases, Command: "migrate"})
	if err != nil || rep.Outcome != outcome.OK {
		t.Fatalf("the whole store's run: %+v, %v", rep, err)
	}
	got := w.run(Options{Owners: []string{"alice"}, Delete: true, Journal: journal})
	if copyThere(t, p.url, p.pic) || len(got.Erased) != 1 || got.Outcome != outcome.OK {
		t.Fatalf("erased %v, kept %+v, outcome %s, problems %v", keysOf(got.Erased), got.Kept, got.Outcome, got.Problems)
	}
}
