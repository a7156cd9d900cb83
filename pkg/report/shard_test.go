package report_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/report"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/target"
	"github.com/mediactl/mediactl/pkg/usage"
)

// shardFixture is a forge work dir for the sharding tests, as gc's
// (pkg/gc/shard_test.go): content-addressed blobs and opaque names in
// folders with spaces, ages on both sides of the fences, sidecars beside
// some uploads, and forge sessions that name a third of them, some only in
// prose. For the report besides: sessions that name overlapping runs of
// blobs (shared blobs, units naming blobs of many shards), a user member in
// some of them only (unattributed units by /user), references to blobs
// that are not there (content-addressed and opaque), a second store, and a
// trash run of an earlier gc.
type shardFixture struct {
	root   string
	owners map[string]string // sidecar → its upload
	tg     *target.Targets
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func casName(content, ext string) string {
	d := sha256.Sum256([]byte(content))
	return hex.EncodeToString(d[:]) + ext
}

func newShardFixture(t *testing.T) *shardFixture {
	t.Helper()
	root := filepath.Join(t.TempDir(), "work")
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	generated := filepath.Join(root, ".forge", "files", "generated")
	sess := filepath.Join(root, ".forge", "sessions")
	for _, d := range []string{inbound, generated, sess} {
		must(t, os.MkdirAll(d, 0o700))
	}
	f := &shardFixture{root: root, owners: map[string]string{}}
	write := func(dir, key, content string, age time.Duration) string {
		p := filepath.Join(dir, filepath.FromSlash(key))
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(content), 0o600))
		mt := time.Now().Add(-age)
		must(t, os.Chtimes(p, mt, mt))
		return p
	}
	ages := []time.Duration{time.Hour, 36 * time.Hour, 10 * 24 * time.Hour, 40 * 24 * time.Hour, 200 * 24 * time.Hour}
	exts := []string{".png", ".jpg", ".pdf", ".mp4", ""}
	var uris, prose []string
	for i := range 400 {
		content := strings.Repeat(fmt.Sprintf("blob %d & co ", i), 1+i%23)
		age := ages[(i/5)%len(ages)]
		var p string
		switch i % 5 {
		case 0, 1, 2:
			p = write(inbound, casName(content, exts[i%len(exts)]), content, age)
		case 3:
			p = write(inbound, fmt.Sprintf("uploads/user %d/photo %d.jpg", i%7, i), content, age)
		case 4:
			id := fmt.Sprintf("%032x", i*7919)
			p = write(inbound, id+".png", content, age)
			write(inbound, id+".json", `{"id": "`+id+`"}`, ages[(i+1)%len(ages)])
			f.owners[id+".json"] = id + ".png"
		}
		switch i % 3 {
		case 0:
			uris = append(uris, p)
		case 1:
			if i%2 == 0 {
				prose = append(prose, "see "+filepath.Base(p)+" & the rest")
			}
		}
	}
	for i := range 12 {
		content := fmt.Sprintf("generated %d", i)
		p := write(generated, casName(content, ".png"), content, ages[i%len(ages)])
		if i%2 == 0 {
			uris = append(uris, p)
		}
	}
	// Missing blobs: their references dangle.
	uris = append(uris, filepath.Join(inbound, casName("gone 1", ".png")), filepath.Join(inbound, "uploads/user 9/gone.jpg"),
		filepath.Join(generated, casName("gone 2", ".png")))
	type media struct {
		MIMEType string `json:"mimeType"`
		URI      string `json:"uri"`
	}
	type part struct {
		Type  string `json:"type"`
		Media *media `json:"media,omitempty"`
	}
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Parts   []part `json:"parts,omitempty"`
	}
	type session struct {
		TaskID   string    `json:"task_id"`
		User     string    `json:"user,omitempty"`
		Messages []message `json:"messages"`
	}
	save := func(s session, age time.Duration) {
		b, err := json.MarshalIndent(s, "", "  ")
		must(t, err)
		p := filepath.Join(sess, s.TaskID+".json")
		must(t, os.WriteFile(p, b, 0o600))
		mt := time.Now().Add(-age)
		must(t, os.Chtimes(p, mt, mt))
	}
	// Runs of 16 references, 4 of each shared with the next session.
	for i, n := 0, 0; i < len(uris); i, n = i+12, n+1 {
		var parts []part
		for _, u := range uris[i:min(i+16, len(uris))] {
			parts = append(parts, part{Type: "image", Media: &media{MIMEType: "image/png", URI: u}})
		}
		s := session{TaskID: fmt.Sprintf("t-%d", n), Messages: []message{{Role: "user", Content: "look", Parts: parts}}}
		if n%3 != 2 {
			s.User = fmt.Sprintf("user-%d", n%4)
		}
		save(s, ages[n%len(ages)])
	}
	// One user's sessions of one reference each: by /user, a unit of
	// theirs names a blob of one shard only.
	for i := range 10 {
		save(session{TaskID: fmt.Sprintf("t-solo-%d", i), User: "solo", Messages: []message{{Role: "user", Content: "this",
			Parts: []part{{Type: "image", Media: &media{MIMEType: "image/png", URI: uris[i*7]}}}}}}, time.Duration(i)*time.Hour)
	}
	save(session{TaskID: "t-prose", Messages: []message{{Role: "assistant", Content: strings.Join(prose, "\n")}}}, time.Hour)

	// An earlier gc moved the old orphans into the trash.
	ctx := context.Background()
	tg := f.open(t)
	gr, err := gc.Run(ctx, gc.RunOptions{
		Options: gc.Options{Sessions: tg.Sources, Policy: gc.Age, MaxAge: 100 * 24 * time.Hour, KeepReferenced: true},
		Stores:  tg.Stores[:1], CompanionOf: f.companionOf,
		Delete: true, Guards: gc.Guards{AllowNoReferences: true},
	})
	must(t, err)
	if gr.Outcome != outcome.OK || gr.Done() == 0 {
		t.Fatalf("gc: %s, %d removed: %+v", gr.Outcome, gr.Done(), gr.Stores[0])
	}
	tg.Close()
	f.tg = f.open(t)
	t.Cleanup(func() { f.tg.Close() })
	return f
}

func (f *shardFixture) open(t *testing.T) *target.Targets {
	t.Helper()
	tg, err := target.Open(context.Background(), target.Spec{Layout: "forge", Root: f.root})
	must(t, err)
	return tg
}

func (f *shardFixture) companionOf(s store.Store) func(string) (string, bool) {
	if !strings.HasSuffix(s.Location(), "inbound") {
		return nil
	}
	return func(key string) (string, bool) { o, ok := f.owners[key]; return o, ok }
}

// report runs the report of shard sh (shard.All: the whole store).
func (f *shardFixture) report(t *testing.T, rule owner.Rule, now time.Time, sh shard.Spec) *report.Report {
	t.Helper()
	var stores []scan.Target
	for _, s := range f.tg.Stores {
		stores = append(stores, scan.Target{Store: s, Resolver: f.tg.Resolver(s)})
	}
	rule.Layout = "forge"
	rep, err := report.Run(context.Background(), report.Options{Stores: stores, Sources: f.tg.Sources, Owners: rule,
		Companion: f.companionOf, Now: now, Shard: sh})
	must(t, err)
	if !rep.Complete {
		t.Fatalf("report %s incomplete: %v", sh, rep.Problems)
	}
	return rep
}

// roundTrip writes rep as `report -o json` does and reads it back as
// `report merge` does.
func roundTrip(t *testing.T, rep *report.Report) *report.Report {
	t.Helper()
	b, err := json.Marshal(struct {
		Schema string `json:"schema"`
		*report.Report
	}{report.Schema, rep})
	must(t, err)
	got, err := report.Decode(bytes.NewReader(b))
	must(t, err)
	return got
}

// comparable is the report as the merged one must equal it: without what
// a shard cannot say (the size cap), what only a merged report says, and
// the free space, which others change between the runs.
func comparable(t *testing.T, rep *report.Report) string {
	t.Helper()
	c := *rep
	c.Merged, c.Notes, c.Shard = nil, nil, ""
	c.Stores = nil
	for _, s := range rep.Stores {
		s2 := *s
		s2.Policies = nil
		for _, p := range s.Policies {
			if p.CapMet == nil {
				s2.Policies = append(s2.Policies, p)
			}
		}
		if fs := s.Growth.Filesystem; fs != nil {
			s2.Growth.Filesystem = &report.Filesystem{Size: fs.Size}
		}
		c.Stores = append(c.Stores, &s2)
	}
	b, err := json.MarshalIndent(&c, "", " ")
	must(t, err)
	return string(b)
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(la), len(lb))
}

// The reports of the N shards of a split, merged, are the report of the
// whole store, for N in {1, 2, 3, 7} and by the task and by a pointer
// (with unattributed units): every count, table, owner and policy but the
// size cap. Each shard's report alone leaves the size cap and the days
// until full out and says so, and holds only its blobs.
func TestShardedReportsMergeToTheWholeReport(t *testing.T) {
	f := newShardFixture(t)
	now := time.Now()
	for _, rule := range []owner.Rule{{}, {Pointer: "/user"}} {
		whole := f.report(t, rule, now, shard.All)
		want := comparable(t, whole)
		tot := whole.Totals
		if tot.Shared.Blobs == 0 || tot.InTrash.Blobs == 0 || tot.DanglingBlobs != 3 || tot.Orphaned.Blobs == 0 || len(whole.Owners) < 4 {
			t.Fatalf("%+v: the fixture does not exercise the report: %+v, %d owners", rule, tot, len(whole.Owners))
		}
		if rule.Pointer != "" && whole.Unattributed.Units == 0 {
			t.Fatalf("no unattributed unit by %s", rule.Pointer)
		}
		for _, n := range []int{1, 2, 3, 7} {
			var in []report.Input
			var blobs int64
			for k := range n {
				sh := shard.Spec{K: k, N: n}
				rep := f.report(t, rule, now, sh)
				checkShard(t, rep, sh)
				blobs += rep.Totals.Stored.Blobs
				in = append(in, report.Input{Name: fmt.Sprintf("shard-%d.json", k), Report: roundTrip(t, rep)})
			}
			if n > 1 && blobs != tot.Stored.Blobs {
				t.Errorf("N=%d: the shards hold %d blobs, the store %d", n, blobs, tot.Stored.Blobs)
			}
			merged, err := report.Merge(in, report.MergeOptions{})
			must(t, err)
			if !merged.Complete || merged.Outcome() != whole.Outcome() || len(merged.Merged.Missing) != 0 || len(merged.Merged.Shards) != n {
				t.Errorf("N=%d: complete %v, outcome %s (want %s), merged %+v", n, merged.Complete, merged.Outcome(), whole.Outcome(), merged.Merged)
			}
			if got := comparable(t, merged); got != want {
				t.Errorf("%+v, N=%d: the merged report differs from the whole store's at %s", rule, n, firstDiff(got, want))
			}
			for i, s := range merged.Stores {
				w, m := whole.Stores[i].Growth.Filesystem, s.Growth.Filesystem
				if (w.DaysUntilFull == nil) != (m.DaysUntilFull == nil) {
					t.Errorf("N=%d, %s: days until full %v, the whole store's %v", n, s.Store, m.DaysUntilFull, w.DaysUntilFull)
				}
			}
		}
	}
}

// checkShard: a shard's report holds its blobs only, and leaves out what a
// shard cannot know.
func checkShard(t *testing.T, rep *report.Report, sh shard.Spec) {
	t.Helper()
	if rep.Shard != sh.String() {
		t.Errorf("shard %q, want %s", rep.Shard, sh)
	}
	if !sh.Sharded() {
		return
	}
	if len(rep.Notes) == 0 {
		t.Errorf("%s: no notes", sh)
	}
	for _, s := range rep.Stores {
		for _, p := range s.Policies {
			if p.CapMet != nil || strings.HasPrefix(p.Name, "max-size") {
				t.Errorf("%s, %s: a size cap on a shard: %+v", sh, s.Store, p)
			}
		}
		if fs := s.Growth.Filesystem; fs == nil || fs.DaysUntilFull != nil {
			t.Errorf("%s, %s: file system %+v, want one without days until full", sh, s.Store, fs)
		}
	}
}

// Merge refuses reports it cannot add up, naming them; a missing shard
// makes the merged report incomplete and says which.
func TestMergeRefuses(t *testing.T) {
	f := newShardFixture(t)
	now := time.Now()
	shards := map[string]*report.Report{}
	for _, sh := range []shard.Spec{{K: 0, N: 3}, {K: 1, N: 3}, {K: 2, N: 3}, {K: 0, N: 2}} {
		shards[sh.String()] = roundTrip(t, f.report(t, owner.Rule{}, now, sh))
	}
	whole := roundTrip(t, f.report(t, owner.Rule{}, now, shard.All))
	in := func(names ...string) []report.Input {
		var out []report.Input
		for _, n := range names {
			r := shards[n]
			if r == nil {
				r = whole
			}
			out = append(out, report.Input{Name: strings.ReplaceAll(n, "/", "-") + ".json", Report: r})
		}
		return out
	}
	otherStore := *shards["1/3"]
	s0 := *otherStore.Stores[0]
	s0.Store = "/elsewhere"
	otherStore.Stores = append([]*report.StoreReport{&s0}, otherStore.Stores[1:]...)
	cases := []struct {
		name   string
		in     []report.Input
		reason string
		names  []string
	}{
		{"mixed splits", in("0/3", "1/3", "0/2"), "different splits", []string{"0-3.json (shard 0/3 of a split into 3)", "0-2.json (shard 0/2 of a split into 2)"}},
		{"twice", in("0/3", "1/3", "1/3"), "shard 1/3 given twice", []string{"1-3.json, 1-3.json"}},
		{"unsharded", in("0/3", "whole"), "without --shard", []string{"whole.json"}},
		{"other store", append(in("0/3"), report.Input{Name: "other.json", Report: &otherStore}), "different stores", []string{"0-3.json (stores ", "other.json (stores /elsewhere (local)"}},
	}
	for _, c := range cases {
		_, err := report.Merge(c.in, report.MergeOptions{})
		var me *report.MergeError
		if !errors.As(err, &me) || !errors.Is(err, usage.Err) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %v, want a usage error saying %q", c.name, err, c.reason)
			continue
		}
		for _, x := range c.names {
			if !strings.Contains(err.Error(), x) {
				t.Errorf("%s: %q does not say %s", c.name, err, x)
			}
		}
	}

	rep, err := report.Merge(in("2/3", "0/3"), report.MergeOptions{})
	must(t, err)
	if rep.Complete || rep.Outcome() != outcome.Incomplete || strings.Join(rep.Merged.Missing, ",") != "1/3" ||
		strings.Join(rep.Merged.Shards, ",") != "0/3,2/3" || !strings.Contains(strings.Join(rep.Problems, "\n"), "shard 1/3 is missing") {
		t.Errorf("a missing shard: complete %v, outcome %s, merged %+v, problems %v", rep.Complete, rep.Outcome(), rep.Merged, rep.Problems)
	}

	// An interrupted shard: its report has no stores; the others count.
	cutShort := &report.Report{Shard: "1/3", Interrupted: true, Problems: []string{}}
	rep, err = report.Merge(append(in("0/3", "2/3"), report.Input{Name: "1-3.json", Report: cutShort}), report.MergeOptions{})
	must(t, err)
	if rep.Complete || rep.Outcome() != outcome.Incomplete || len(rep.Merged.Missing) != 0 || len(rep.Stores) != 2 ||
		!strings.Contains(strings.Join(rep.Problems, "\n"), "shard 1/3 was interrupted") {
		t.Errorf("an interrupted shard: complete %v, outcome %s, merged %+v, %d stores, problems %v", rep.Complete, rep.Outcome(), rep.Merged, len(rep.Stores), rep.Problems)
	}

	_, err = report.Decode(strings.NewReader(`{"schema": "mediactl.report/v9", "stores": []}`))
	var se *report.SchemaError
	if !errors.As(err, &se) || se.Schema != "mediactl.report/v9" || !errors.Is(err, usage.Err) {
		t.Errorf("an unknown schema: %v", err)
	}
	if _, err := report.Decode(strings.NewReader(`{"type":"owner"}`)); !errors.Is(err, usage.Err) {
		t.Errorf("an NDJSON record: %v", err)
	}
}
