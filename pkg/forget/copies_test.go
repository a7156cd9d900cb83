package forget

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/target"
	"github.com/mediactl/mediactl/pkg/trash"
)

// run is forget with every option a command gives it: the layout's
// stores, resolvers, bases and companions, and o's owners, delete and
// trash folder.
func (w *work) run(o Options) *Report {
	w.t.Helper()
	rep, err := w.runErr(o)
	if err != nil {
		w.t.Fatal(err)
	}
	return rep
}

// runErr is run, for a run that may be refused.
func (w *work) runErr(o Options) (*Report, error) {
	w.t.Helper()
	ctx := context.Background()
	tg, err := target.Open(ctx, target.Spec{Layout: "forge", Root: w.root})
	if err != nil {
		w.t.Fatal(err)
	}
	defer tg.Close()
	for _, s := range tg.Stores {
		o.Stores = append(o.Stores, scan.Target{Store: s, Resolver: tg.Resolver(s)})
	}
	o.Sources, o.Rule, o.Resolver, o.Bases = tg.Sources, owner.Rule{Layout: "forge"}, tg.Resolver, tg.Bases
	o.Companion = func(s store.Store) func(string) (string, bool) { return tg.Companion(s) }
	return Run(ctx, o)
}

// uris saves forge's session of task whose media parts have these URIs.
func (w *work) uris(task, text string, uris ...string) {
	var parts []string
	for _, u := range uris {
		parts = append(parts, fmt.Sprintf(`{"type":"image","media":{"mimeType":"image/png","uri":%q}}`, u))
	}
	doc := fmt.Sprintf(`{"task_id":%q,"messages":[{"role":"user","content":%q,"parts":[%s]}]}`, task, text, strings.Join(parts, ","))
	if err := os.WriteFile(filepath.Join(w.sess, task+".json"), []byte(doc), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// migrated runs migrate on the inbound store as an operator does: copy to
// to, --rewrite with template, --delete-source (into trashDir when given);
// with purge, the trash runs are purged after it, so that the media live
// only in the bucket.
func (w *work) migrated(to, template, trashDir string, purge bool) {
	w.t.Helper()
	ctx := context.Background()
	tg, err := target.Open(ctx, target.Spec{Layout: "forge", Root: w.root})
	if err != nil {
		w.t.Fatal(err)
	}
	defer tg.Close()
	src := tg.Stores[0]
	dst, err := store.Open(ctx, to)
	if err != nil {
		w.t.Fatal(err)
	}
	defer dst.Close()
	tpl, err := migrate.ParseTemplate(template, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	rws, err := tg.OpenRewriters(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	defer func() {
		for _, rw := range rws {
			rw.Close()
		}
	}()
	rep, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: src, To: dst},
		Rewrite: true, Rewriters: rws, Template: tpl, Resolver: tg.Resolver(src),
		DeleteSource: true, TrashDir: trashDir, Sessions: tg.Sources, Bases: tg.Bases, Command: "migrate"})
	if err != nil {
		w.t.Fatal(err)
	}
	if rep.Outcome != outcome.OK || rep.Delete == nil || rep.Delete.Result == nil || rep.Delete.Result.Trashed == 0 {
		w.t.Fatalf("migrate: %s %+v %+v notes %v", rep.Outcome, rep.Check, rep.Delete, rep.Notes)
	}
	// The migration happened a while before the erasure, as it does: a copy
	// written the instant the run begins counts as written during it.
	if dir, ok := strings.CutPrefix(to, "file://"); ok {
		then := time.Now().Add(-time.Hour)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			return os.Chtimes(p, then, then)
		})
		if err != nil {
			w.t.Fatal(err)
		}
	}
	if !purge {
		return
	}
	st := src
	if trashDir != "" {
		if st, err = trash.AtDir(src, trashDir, trash.Owned); err != nil {
			w.t.Fatal(err)
		}
		defer st.Close()
	}
	err = storelock.Do(ctx, src, "gc", func(l *storelock.Lock) error {
		if trashDir != "" {
			if l, err = l.Through(st); err != nil {
				return err
			}
		}
		runs, err := trash.Runs(ctx, st)
		for _, run := range runs {
			if _, err := trash.PurgeRun(ctx, l, run.Run); err != nil {
				return err
			}
		}
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// bucket is a destination of migrate for the tests: its URL, the rewrite
// template, and the reference a rewritten session holds for a key.
type bucket struct {
	name     string
	url      string
	template string
	ref      func(key string) string
	// other is another spelling of a reference to the copy of key, which
	// scan and replay resolve to the same object.
	other func(key string) string
}

func buckets(t *testing.T, w *work) []bucket {
	remote := filepath.Join(w.root, ".forge", "files", "remote")
	if err := os.MkdirAll(remote, 0o755); err != nil {
		t.Fatal(err)
	}
	s3 := storetest.StartS3(t, nil)
	s3url := s3.Bucket(t, "media")
	s3mnt := storetest.StartS3(t, nil).Bucket(t, "media")
	return []bucket{
		{name: "file", url: "file://" + remote, template: remote + "/{key}",
			ref:   func(k string) string { return remote + "/" + k },
			other: func(k string) string { return "file://" + remote + "/" + k }},
		{name: "s3-url", url: s3url + "&prefix=inbound/",
			ref:   func(k string) string { return "s3://media/inbound/" + k },
			other: func(k string) string { return "s3://media/inbound/./" + k }},
		{name: "s3-mount", url: s3mnt + "&prefix=inbound/", template: "/mnt/media/{prefix}{key}",
			ref:   func(k string) string { return "/mnt/media/inbound/" + k },
			other: func(k string) string { return "/mnt/media//inbound/" + k }},
	}
}

func digestOf(key string) string { return strings.TrimSuffix(key, ".png") }

func findErased(rep *Report, key string) *Blob {
	for i := range rep.Erased {
		if rep.Erased[i].Key == key {
			return &rep.Erased[i]
		}
	}
	return nil
}

func keptOf(rep *Report, key string) []Kept {
	var out []Kept
	for _, k := range rep.Kept {
		if k.Key == key {
			out = append(out, k)
		}
	}
	return out
}

// copyThere says whether the bucket holds key.
func copyThere(t *testing.T, url, key string) bool {
	t.Helper()
	dst, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	_, err = dst.Stat(context.Background(), key)
	return err == nil
}

// After migrate --rewrite --delete-source and a purge, the owner's media
// live only in the bucket: forget deletes the copy only their units name,
// keeps one another owner names (as the sessions wrote it, or in another
// spelling, or by its name in text), and leaves a copy whose bytes changed
// since the journal proved it (incomplete).
func TestForgetCopiesOnlyInTheBucket(t *testing.T) {
	for _, bk := range buckets(t, newWork(t)) {
		t.Run(bk.name, func(t *testing.T) {
			w := newWork(t)
			if bk.name == "file" {
				bk = buckets(t, w)[0]
			}
			mine := w.blob("only alice sent this", "")
			shared := w.blob("alice and bob sent this", "")
			spelled := w.blob("dave names its copy his way", "")
			worded := w.blob("carol quotes its digest", "")
			changed := w.blob("alice's, overwritten in the bucket", "")
			w.session("alice", "", mine, shared, spelled, worded, changed)
			w.session("bob", "", shared)
			w.session("carol", "hello")
			w.session("dave", "hello")
			w.migrated(bk.url, bk.template, "", true)
			for _, k := range []string{mine, shared, spelled, worded, changed} {
				if w.exists(k) || !copyThere(t, bk.url, k) {
					t.Fatalf("%s: after migrate the source should be gone and the copy there", k)
				}
			}
			w.session("carol", "the picture, sha256 "+strings.ToUpper(digestOf(worded)))
			w.uris("dave", "mine too", bk.other(spelled))
			dst, err := store.Open(context.Background(), bk.url)
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			other := strings.ToUpper("alice's, overwritten in the bucket") // its size, other bytes
			sum := sha256.Sum256([]byte(other))
			if err := dst.Put(context.Background(), changed, strings.NewReader(other), store.PutOptions{Metadata: map[string]string{migrate.MetadataKey: hex.EncodeToString(sum[:])}}); err != nil {
				t.Fatal(err)
			}

			dry := w.run(Options{Owners: []string{"alice"}})
			if b := findErased(dry, mine); b == nil || !slices.Equal(b.Where, []string{"copy " + dst.Location() + " (" + mine + ")"}) || b.Bucket != dst.Location() || b.RemovedAt != nil {
				t.Fatalf("dry run: %+v", dry.Erased)
			}
			if !copyThere(t, bk.url, mine) {
				t.Fatal("the dry run deleted a copy")
			}

			rep := w.run(Options{Owners: []string{"alice"}, Delete: true})
			if rep.Outcome != outcome.Incomplete {
				t.Fatalf("outcome %s, want incomplete (a changed copy): %+v", rep.Outcome, rep)
			}
			b := findErased(rep, mine)
			if b == nil || b.RemovedAt == nil || b.References != 1 || b.SHA256 != digestOf(mine) || b.Bucket != dst.Location() || b.Store != w.inbox ||
				!slices.Equal(b.Where, []string{"copy " + dst.Location() + " (" + mine + ")"}) {
				t.Fatalf("receipt of the copy: %+v", rep.Erased)
			}
			if len(rep.Erased) != 1 {
				t.Errorf("erased %v, want only %s", keysOf(rep.Erased), mine)
			}
			if copyThere(t, bk.url, mine) {
				t.Error("the copy only alice named is still there")
			}
			for key, why := range map[string]string{shared: KeptNamedPrecisely, spelled: KeptNamedPrecisely, worded: KeptNamedByRule, changed: KeptCopyChanged} {
				if !copyThere(t, bk.url, key) {
					t.Errorf("%s: the copy is gone", key)
				}
				if k := keptOf(rep, key); len(k) != 1 || k[0].Reason != why || k[0].Bucket != dst.Location() || k[0].Store != w.inbox {
					t.Errorf("%s: kept %+v, want %q", key, k, why)
				}
			}
			if !slices.ContainsFunc(rep.Problems, func(p string) bool { return strings.Contains(p, changed) && strings.Contains(p, "sha256") }) {
				t.Errorf("problems %v do not say the copy changed", rep.Problems)
			}
			for _, k := range rep.Kept {
				for _, who := range []string{"bob", "carol", "dave"} {
					if strings.Contains(k.Reason, who) {
						t.Errorf("kept reason names an owner: %q", k.Reason)
					}
				}
			}
		})
	}
}

// A session another owner saves after the moves, naming the copy, keeps
// it: the copies are deleted only after the read that follows the moves.
// Its source, still in the store, is put back with it.
func TestForgetCopyNamedDuringRun(t *testing.T) {
	for _, purge := range []bool{true, false} {
		t.Run(fmt.Sprintf("purged=%v", purge), func(t *testing.T) {
			w := newWork(t)
			bk := buckets(t, w)[1]
			mine := w.blob("alice's", "")
			gone := w.blob("alice's other", "")
			w.session("alice", "", mine, gone)
			w.session("bob", "hello")
			w.migrated(bk.url, bk.template, "", purge)
			if !purge {
				// The sources are in migrate's trash run: rollback's way back.
				if w.exists(mine) {
					t.Fatal("the source is still in the store")
				}
			}
			phaseHook = func(p string) {
				if p == "moved" {
					w.uris("bob", "I keep this one", bk.ref(mine))
				}
			}
			t.Cleanup(func() { phaseHook = nil })
			rep := w.run(Options{Owners: []string{"alice"}, Delete: true})
			if rep.Outcome != outcome.OK {
				t.Fatalf("%s %+v", rep.Outcome, rep)
			}
			if !copyThere(t, bk.url, mine) {
				t.Fatal("the copy named during the run is gone")
			}
			if copyThere(t, bk.url, gone) {
				t.Error("the other copy stayed")
			}
			// Purged, the copy is kept for itself; in migrate's trash run, the
			// source is too (bob's text holds its name), and the copy with it.
			want := KeptCopyNamedDuringRun
			if !purge {
				want = KeptNamedDuringRun
			}
			if k := keptOf(rep, mine); len(k) != 1 || k[0].Reason != want {
				t.Errorf("kept %+v, want %q", k, want)
			}
			if got := keysOf(rep.Erased); !slices.Equal(got, []string{gone}) {
				t.Errorf("erased %v", got)
			}
			runs, err := trash.Runs(context.Background(), storeOf(t, w.inbox))
			if err != nil {
				t.Fatal(err)
			}
			if purge && len(runs) != 0 {
				t.Errorf("runs left: %+v", runs)
			}
			if b := findErased(rep, gone); b == nil || b.References != 1 || rep.Dangling != 1 || len(b.Where) != 2-map[bool]int{true: 1}[purge] {
				t.Errorf("the receipt of gone: %+v", b)
			} else if !purge && (!strings.HasPrefix(b.Where[0], "trash run ") || !strings.HasPrefix(b.Where[1], "copy s3://media/")) {
				t.Errorf("gone went from %v, want its source's run and its copy", b.Where)
			}
			if !purge {
				// mine's source stays in migrate's run, with its copy; gone's
				// source went from it: the run holds mine alone.
				if len(runs) != 1 || runs[0].Blobs != 1 {
					t.Errorf("runs %+v", runs)
				}
			}
		})
	}
}

// A copy uploaded again after the read that follows the moves (a writer
// re-used it) is left in place: each copy is checked right before its
// delete.
func TestForgetCopyUploadedAgainDuringRun(t *testing.T) {
	w := newWork(t)
	bk := buckets(t, w)[0]
	body := "alice's"
	mine := w.blob(body, "")
	w.session("alice", "", mine)
	w.migrated(bk.url, bk.template, "", true)
	dst, err := store.Open(context.Background(), bk.url)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	phaseHook = func(p string) {
		if p == "reread" {
			if err := dst.Put(context.Background(), mine, strings.NewReader(body), store.PutOptions{Metadata: map[string]string{migrate.MetadataKey: digestOf(mine)}}); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { phaseHook = nil })
	rep := w.run(Options{Owners: []string{"alice"}, Delete: true})
	if !copyThere(t, bk.url, mine) || len(rep.Erased) != 0 {
		t.Fatalf("%s %+v", rep.Outcome, rep)
	}
	if k := keptOf(rep, mine); len(k) != 1 || k[0].Reason != KeptChanged {
		t.Errorf("kept %+v", k)
	}
}

// An object the journal proves no copy of is not the owner's, however
// their session names it: one another tool put in the bucket, one reached
// by a traversal out of the bucket's prefix, one under the internal folder.
func TestForgetCopyNotProvenStays(t *testing.T) {
	w := newWork(t)
	bk := buckets(t, w)[0]
	mine := w.blob("alice's", "")
	w.session("alice", "", mine)
	w.migrated(bk.url, bk.template, "", true)
	remote := strings.TrimPrefix(bk.url, "file://")
	foreign := "0000000000000000000000000000000000000000000000000000000000000000.png"
	for _, p := range []string{filepath.Join(remote, foreign), filepath.Join(w.root, "outside.png"), filepath.Join(remote, ".mediactl", "x.png")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not alice's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.uris("alice", "", bk.ref(mine), bk.ref(foreign), remote+"/../../../outside.png", "file://"+remote+"/.mediactl/x.png")
	rep := w.run(Options{Owners: []string{"alice"}, Delete: true})
	if rep.Outcome != outcome.OK || !slices.Equal(keysOf(rep.Erased), []string{mine}) {
		t.Fatalf("%s: erased %v", rep.Outcome, keysOf(rep.Erased))
	}
	for _, p := range []string{filepath.Join(remote, foreign), filepath.Join(w.root, "outside.png"), filepath.Join(remote, ".mediactl", "x.png")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
