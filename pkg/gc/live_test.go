package gc_test

// Tests that a live runtime would write: while gc reads, plans and moves, the
// runtime keeps saving sessions, and a content-addressed writer names an old
// blob it found present without writing it again (so the blob keeps its old
// modification time). Each test saves such a session at one boundary of the
// run, the way the runtime saves it (a JSON file replaced by rename, a JSON
// Lines file appended in place, a row committed to SQLite in WAL mode or to
// PostgreSQL, an object put into a session bucket), and checks that the blob
// is in the store at the end and that the report says why.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// liveTurn is a user turn with one image part, as forge's file session
// store writes it: the part names the blob by its absolute path.
func liveTurn(uri string) string {
	return fmt.Sprintf(`{"role":"user","content":"What's in this image?","parts":[{"type":"text","text":"What's in this image?"},{"type":"image","media":{"mimeType":"image/png","uri":%q}}]}`, uri)
}

// liveSource is a session store a runtime keeps writing to: open gives the
// source gc reads, save saves one more session unit naming uri.
type liveSource struct {
	name string
	open func(t *testing.T, first string) (src sessions.Source, save func(t *testing.T, uri string))
}

func liveSources() []liveSource {
	return []liveSource{
		{"json files replaced by rename", func(t *testing.T, first string) (sessions.Source, func(*testing.T, string)) {
			dir := t.TempDir()
			n := 0
			save := func(t *testing.T, uri string) {
				// forge: <task>.json.tmp, fsync, rename over <task>.json.
				n++
				name := filepath.Join(dir, fmt.Sprintf("t-%d.json", n))
				doc := fmt.Sprintf("{\n  \"task_id\": \"t-%d\",\n  \"messages\": [%s],\n  \"updated_at\": %q\n}\n", n, liveTurn(uri), time.Now().UTC().Format(time.RFC3339Nano))
				f, err := os.OpenFile(name+".tmp", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
				must(t, err)
				_, err = f.WriteString(doc)
				must(t, err)
				must(t, f.Sync())
				must(t, f.Close())
				must(t, os.Rename(name+".tmp", name))
			}
			save(t, first)
			src, err := sessions.Open(context.Background(), dir, sessions.Options{})
			must(t, err)
			t.Cleanup(func() { src.Close() })
			return src, save
		}},
		{"json lines appended in place", func(t *testing.T, first string) (sessions.Source, func(*testing.T, string)) {
			dir := t.TempDir()
			name := filepath.Join(dir, "history.jsonl")
			save := func(t *testing.T, uri string) {
				f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
				must(t, err)
				_, err = f.WriteString(liveTurn(uri) + "\n")
				must(t, err)
				must(t, f.Close())
			}
			save(t, first)
			src, err := sessions.Open(context.Background(), dir, sessions.Options{})
			must(t, err)
			t.Cleanup(func() { src.Close() })
			return src, save
		}},
		{"sqlite in WAL mode", func(t *testing.T, first string) (sessions.Source, func(*testing.T, string)) {
			path := filepath.Join(t.TempDir(), "coffer.db")
			// coffer keeps one connection open in WAL mode; rows commit while
			// gc reads.
			db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
			must(t, err)
			db.SetMaxOpenConns(1)
			t.Cleanup(func() { db.Close() })
			_, err = db.Exec(`CREATE TABLE chat_messages(id INTEGER PRIMARY KEY, conversation_id TEXT NOT NULL, role TEXT, content TEXT, created_at TEXT)`)
			must(t, err)
			save := func(t *testing.T, uri string) {
				_, err := db.Exec(`INSERT INTO chat_messages(conversation_id, role, content, created_at) VALUES (?, 'user', ?, ?)`,
					"c-1", `[{"type":"text","text":"see"},{"type":"image","path":"`+uri+`"}]`, time.Now().UTC().Format(time.RFC3339))
				must(t, err)
			}
			save(t, first)
			src, err := sessions.Open(context.Background(), "sqlite:"+path, sessions.Options{})
			must(t, err)
			t.Cleanup(func() { src.Close() })
			return src, save
		}},
		{"postgres", func(t *testing.T, first string) (sessions.Source, func(*testing.T, string)) {
			u := sessionstest.PostgresDatabase(t, "mediactl_live")
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, u)
			must(t, err)
			t.Cleanup(func() { conn.Close(context.Background()) })
			_, err = conn.Exec(ctx, `CREATE TABLE messages(id serial PRIMARY KEY, thread_id uuid NOT NULL, role text, content text, metadata jsonb, created_at timestamptz DEFAULT now())`)
			must(t, err)
			save := func(t *testing.T, uri string) {
				_, err := conn.Exec(ctx, `INSERT INTO messages(thread_id, role, content, metadata) VALUES ('00000000-0000-0000-0000-000000000001', 'user', 'look', $1::jsonb)`,
					fmt.Sprintf(`{"attachments":[{"path":%q}]}`, uri))
				must(t, err)
			}
			save(t, first)
			src, err := sessions.Open(ctx, u, sessions.Options{})
			must(t, err)
			t.Cleanup(func() { src.Close() })
			return src, save
		}},
		{"session bucket", func(t *testing.T, first string) (sessions.Source, func(*testing.T, string)) {
			dir := t.TempDir()
			n := 0
			save := func(t *testing.T, uri string) {
				n++
				must(t, os.MkdirAll(filepath.Join(dir, "tasks"), 0o700))
				must(t, os.WriteFile(filepath.Join(dir, "tasks", fmt.Sprintf("t-%d.json", n)), []byte(`{"messages":[`+liveTurn(uri)+`]}`), 0o600))
			}
			save(t, first)
			src, err := sessions.Open(context.Background(), "file://"+dir, sessions.Options{})
			must(t, err)
			t.Cleanup(func() { src.Close() })
			return src, save
		}},
	}
}

// liveRun is one gc --delete on a local store of three old blobs: used (a
// session names it), reused (no session names it when gc reads; the runtime
// names it during the run) and orphan.
type liveRun struct {
	f                    *fixture
	used, reused, orphan string
	src                  sessions.Source
	save                 func(*testing.T, string)
	saveAt               string // the phase at which the runtime saves
	saved                atomic.Bool
	reusedURI            string
	noTrash              bool
}

func newLiveRun(t *testing.T, ls liveSource, saveAt string, noTrash bool) *liveRun {
	f := newFixture(t)
	r := &liveRun{f: f, saveAt: saveAt, noTrash: noTrash}
	r.used = f.blob(t, "used", 72*time.Hour)
	r.reused = f.blob(t, "reused", 72*time.Hour)
	r.orphan = f.blob(t, "orphan", 72*time.Hour)
	r.reusedURI = filepath.Join(f.inbound, r.reused)
	r.src, r.save = ls.open(t, filepath.Join(f.inbound, r.used))
	return r
}

// progress saves the session at the first blob removed, when asked to.
type progress struct {
	add func()
}

func (p progress) Add(int64) { p.add() }
func (p progress) Finish()   {}

func (r *liveRun) run(t *testing.T) *gc.Report {
	t.Helper()
	saveOnce := func() {
		if r.saved.CompareAndSwap(false, true) {
			r.save(t, r.reusedURI)
		}
	}
	defer gc.SetPhaseHook(func(p string) {
		if p == r.saveAt {
			saveOnce()
		}
	})()
	opts := gc.RunOptions{Options: gc.Options{Sessions: []sessions.Source{r.src}}, Stores: []store.Store{r.f.st}, Delete: true, NoTrash: r.noTrash}
	if r.saveAt == "sweep" {
		opts.Progress = func(store.Store, int64) gc.Progress { return progress{add: saveOnce} }
	}
	rep, err := gc.Run(context.Background(), opts)
	must(t, err)
	if !r.saved.Load() {
		t.Fatalf("the runtime never saved at %q", r.saveAt)
	}
	return rep
}

func restoredKeys(s *gc.StoreReport, reason string) []string {
	var out []string
	if s.Trash != nil {
		for _, r := range s.Trash.Restored {
			if r.Reason == reason {
				out = append(out, r.Key)
			}
		}
	}
	return out
}

// TestLiveWriterDuringTheRun: for every kind of session source, a session
// saved at each boundary of gc's run (after it read the sessions, while it
// moves, after the last move) names a blob gc planned: the blob is in the
// store at the end, with and without the trash, and the report says it was
// named during the run.
func TestLiveWriterDuringTheRun(t *testing.T) {
	for _, ls := range liveSources() {
		for _, at := range []string{"planned", "sweep", "moved"} {
			for _, noTrash := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/no-trash=%v", ls.name, at, noTrash), func(t *testing.T) {
					r := newLiveRun(t, ls, at, noTrash)
					rep := r.run(t)
					if rep.Outcome != outcome.OK {
						t.Fatalf("outcome %v: %v", rep.Outcome, rep.Stores[0].Err)
					}
					s := rep.Stores[0]
					if got := restoredKeys(s, gc.NamedDuringRun); len(got) != 1 || got[0] != r.reused {
						t.Fatalf("restored as named during the run: %v, want [%s] (check %+v)", got, r.reused, s.Trash)
					}
					for _, k := range []string{r.used, r.reused} {
						if _, err := os.Stat(filepath.Join(r.f.inbound, k)); err != nil {
							t.Errorf("%s is not in the store: %v", k, err)
						}
					}
					if _, err := os.Stat(filepath.Join(r.f.inbound, r.orphan)); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("the orphan is still in the store: %v", err)
					}
					res := s.Result
					runs, err := trash.Runs(context.Background(), r.f.st)
					must(t, err)
					if noTrash {
						if res.Deleted != 1 || res.Trashed != 0 || res.Run != "" || len(runs) != 0 {
							t.Errorf("without the trash: deleted %d, trashed %d, run %q, runs left %v", res.Deleted, res.Trashed, res.Run, runs)
						}
					} else if res.Trashed != 1 || len(runs) != 1 || runs[0].Blobs != 1 {
						t.Errorf("with the trash: trashed %d, runs %+v; want the orphan alone in one run", res.Trashed, runs)
					}
				})
			}
		}
	}
}

// TestLiveWriterAfterTheReread: a session saved after the check that follows
// the moves read the sessions again names a blob that stays in the trash for
// now; the next gc run puts it back before it removes anything (the outage
// is bounded by the next run), and so does a purge.
func TestLiveWriterAfterTheReread(t *testing.T) {
	for _, next := range []string{"gc", "purge"} {
		t.Run(next, func(t *testing.T) {
			r := newLiveRun(t, liveSources()[0], "reread", false)
			rep := r.run(t)
			if rep.Outcome != outcome.OK {
				t.Fatalf("outcome %v: %v", rep.Outcome, rep.Stores[0].Err)
			}
			if _, err := os.Stat(filepath.Join(r.f.inbound, r.reused)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the blob named after the reread is in the store already: %v", err)
			}
			run := rep.Stores[0].Result.Run
			var restored []gc.Restored
			switch next {
			case "gc":
				rep, err := gc.Run(context.Background(), gc.RunOptions{Options: gc.Options{Sessions: []sessions.Source{r.src}}, Stores: []store.Store{r.f.st}, Delete: true})
				must(t, err)
				if rep.Outcome != outcome.OK || rep.Stores[0].Trash == nil {
					t.Fatalf("next gc: %v %+v", rep.Outcome, rep.Stores[0])
				}
				restored = rep.Stores[0].Trash.Restored
			case "purge":
				pr, err := gc.Purge(context.Background(), locktest.Of(t, r.f.st), gc.PurgeOptions{Cutoff: time.Now().Add(time.Hour), Sessions: []sessions.Source{r.src}})
				must(t, err)
				if len(pr.Purged.Runs) != 1 || pr.Purged.Blobs != 1 {
					t.Errorf("purged %+v, want the run with the orphan alone", pr.Purged)
				}
				restored = pr.Trash.Restored
			}
			if len(restored) != 1 || restored[0].Key != r.reused || restored[0].Run != run || restored[0].Reason != gc.NamedSince {
				t.Fatalf("restored %+v, want %s from %s, %q", restored, r.reused, run, gc.NamedSince)
			}
			if b, err := os.ReadFile(filepath.Join(r.f.inbound, r.reused)); err != nil || string(b) != "reused" {
				t.Fatalf("the blob after the %s: %q, %v", next, b, err)
			}
		})
	}
}

// TestRereadIncompletePutsEverythingBack: when the check after the moves
// cannot read every session (a session file cut short), the run is
// incomplete and every blob it moved goes back, with and without the trash.
func TestRereadIncompletePutsEverythingBack(t *testing.T) {
	for _, noTrash := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-trash=%v", noTrash), func(t *testing.T) {
			f := newFixture(t)
			used := f.blob(t, "used", 72*time.Hour)
			orphans := []string{f.blob(t, "orphan-1", 72*time.Hour), f.blob(t, "orphan-2", 72*time.Hour)}
			f.session(t, "s.json", used)
			defer gc.SetPhaseHook(func(p string) {
				if p == "moved" {
					must(t, os.WriteFile(filepath.Join(f.sess, "cut.json"), []byte(`{"messages":[{"parts":[{"media":{"uri":"`), 0o600))
				}
			})()
			rep, err := gc.Run(context.Background(), gc.RunOptions{Options: gc.Options{Sessions: []sessions.Source{f.src}}, Stores: []store.Store{f.st}, Delete: true, NoTrash: noTrash})
			must(t, err)
			s := rep.Stores[0]
			if rep.Outcome != outcome.Incomplete || !errors.Is(s.Err, gc.ErrTrashCheckIncomplete) {
				t.Fatalf("outcome %v, error %v; want incomplete, the check after the moves", rep.Outcome, s.Err)
			}
			if s.PutBack != 2 || s.Result.Trashed != 0 || s.Result.Deleted != 0 {
				t.Errorf("put back %d, trashed %d, deleted %d; want 2 put back", s.PutBack, s.Result.Trashed, s.Result.Deleted)
			}
			for _, k := range append(orphans, used) {
				if _, err := os.Stat(filepath.Join(f.inbound, k)); err != nil {
					t.Errorf("%s is not back in the store: %v", k, err)
				}
			}
			if runs, err := trash.Runs(context.Background(), f.st); err != nil || len(runs) != 0 {
				t.Errorf("runs left: %v, %v", runs, err)
			}
		})
	}
}

// TestPurgeNeedsTheSessions: a purge reads the sessions first; without them
// it deletes nothing unless told the runtime is stopped, and a check that
// could not read every session deletes nothing.
func TestPurgeNeedsTheSessions(t *testing.T) {
	f := newFixture(t)
	orphan := f.blob(t, "orphan", 72*time.Hour)
	f.session(t, "s.json")
	rep, err := gc.Run(context.Background(), gc.RunOptions{Options: gc.Options{Sessions: []sessions.Source{f.src}}, Stores: []store.Store{f.st}, Delete: true, Guards: gc.Guards{AllowNoReferences: true}})
	must(t, err)
	if rep.Stores[0].Result == nil || rep.Stores[0].Result.Trashed != 1 {
		t.Fatalf("gc: %+v", rep.Stores[0])
	}
	cutoff := time.Now().Add(time.Hour)
	l := locktest.Of(t, f.st)
	if _, err := gc.Purge(context.Background(), l, gc.PurgeOptions{Cutoff: cutoff}); !errors.Is(err, gc.ErrPurgeNeedsSessions) {
		t.Fatalf("purge without sessions = %v", err)
	}
	must(t, os.WriteFile(filepath.Join(f.sess, "cut.json"), []byte(`{"messages":[`), 0o600))
	pr, err := gc.Purge(context.Background(), l, gc.PurgeOptions{Cutoff: cutoff, Sessions: []sessions.Source{f.src}})
	if !errors.Is(err, gc.ErrTrashCheckIncomplete) || len(pr.Purged.Runs) != 0 {
		t.Fatalf("purge on sessions not all read = %v, purged %+v", err, pr.Purged)
	}
	if runs, _ := trash.Runs(context.Background(), f.st); len(runs) != 1 {
		t.Fatalf("runs after a refused purge: %v", runs)
	}
	pr, err = gc.Purge(context.Background(), l, gc.PurgeOptions{Cutoff: cutoff, Unchecked: true})
	must(t, err)
	if pr.Trash != nil || pr.Purged.Blobs != 1 {
		t.Fatalf("unchecked purge %+v", pr)
	}
	if _, err := os.Stat(filepath.Join(f.inbound, orphan)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("orphan: %v", err)
	}
}

// TestExpiredRunsStayTrashed: the age policy without --keep-referenced
// removes referenced blobs on purpose; a later check does not put them back.
func TestExpiredRunsStayTrashed(t *testing.T) {
	f := newFixture(t)
	used := f.blob(t, "used", 40*24*time.Hour)
	f.session(t, "s.json", used)
	rep, err := gc.Run(context.Background(), gc.RunOptions{Options: gc.Options{Policy: gc.Age, MaxAge: 30 * 24 * time.Hour, Sessions: []sessions.Source{f.src}}, Stores: []store.Store{f.st}, Delete: true})
	must(t, err)
	if rep.Outcome != outcome.OK || rep.Stores[0].Result.Trashed != 1 {
		t.Fatalf("age run: %v %+v", rep.Outcome, rep.Stores[0].Result)
	}
	pr, err := gc.Purge(context.Background(), locktest.Of(t, f.st), gc.PurgeOptions{Cutoff: time.Now().Add(time.Hour), Sessions: []sessions.Source{f.src}})
	must(t, err)
	if len(pr.Trash.Restored) != 0 || pr.Purged.Blobs != 1 {
		t.Fatalf("purge put back %v, purged %+v; want the expired blob purged", pr.Trash.Restored, pr.Purged)
	}
}

// storeKind is a kind of store the live tests run on.
type storeKind struct {
	name   string
	bucket bool
	open   func(t *testing.T) store.Store
}

func storeKinds() []storeKind {
	bucket := func(url func(t *testing.T) string) func(t *testing.T) store.Store {
		return func(t *testing.T) store.Store {
			st, err := store.Open(context.Background(), url(t))
			must(t, err)
			t.Cleanup(func() { st.Close() })
			return st
		}
	}
	return []storeKind{
		{"local", false, func(t *testing.T) store.Store {
			st, err := store.Open(context.Background(), t.TempDir())
			must(t, err)
			t.Cleanup(func() { st.Close() })
			return st
		}},
		{"trash-dir", false, func(t *testing.T) store.Store {
			root := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(root, "inbound"), 0o700))
			st, err := store.OpenLocal(filepath.Join(root, "inbound"))
			must(t, err)
			t.Cleanup(func() { st.Close() })
			td, err := trash.AtDir(st, filepath.Join(root, "trash"), trash.MoveInto)
			must(t, err)
			return td
		}},
		{"file bucket", true, bucket(func(t *testing.T) string { return "file://" + t.TempDir() })},
		{"s3", true, bucket(func(t *testing.T) string { return storetest.StartS3(t, nil).Bucket(t, "media") })},
		{"gcs", true, bucket(func(t *testing.T) string { return storetest.StartGCS(t).Bucket(t, "media") })},
		{"azure", true, bucket(func(t *testing.T) string { return storetest.StartAzurite(t).Container(t, "media") })},
		{"seaweedfs", true, bucket(func(t *testing.T) string { return storetest.SeaweedFS(t).Bucket(t, "media") })},
	}
}

// liveStore is a store of three blobs (used, reused, orphan) and a folder of
// sessions, one naming used.
type liveStore struct {
	st   store.Store
	keys map[string]string
	dir  string
	src  sessions.Source
}

func newLiveStore(t *testing.T, k storeKind) *liveStore {
	ctx := context.Background()
	l := &liveStore{st: k.open(t), keys: map[string]string{}, dir: t.TempDir()}
	for _, c := range []string{"used", "reused", "orphan"} {
		l.keys[c] = name(c)
		must(t, l.st.Put(ctx, l.keys[c], strings.NewReader(c), store.PutOptions{}))
	}
	l.save(t, "t-1.json", "used")
	src, err := sessions.Open(ctx, l.dir, sessions.Options{})
	must(t, err)
	t.Cleanup(func() { src.Close() })
	l.src = src
	return l
}

// save saves a session naming the blob c, as forge names it.
func (l *liveStore) save(t *testing.T, file, c string) {
	must(t, os.WriteFile(filepath.Join(l.dir, file), []byte(`{"messages":[`+liveTurn("/srv/agent/.forge/files/inbound/"+l.keys[c])+`]}`), 0o600))
}

func (l *liveStore) has(t *testing.T, c string) bool {
	_, err := l.st.Stat(context.Background(), l.keys[c])
	if err != nil && !errors.Is(err, store.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// The blobs were written just now: runs are planned three days ahead, so
// that all three are old enough.
func (l *liveStore) run(t *testing.T, o gc.RunOptions) *gc.StoreReport {
	t.Helper()
	o.Options.Sessions = []sessions.Source{l.src}
	o.Options.Now = time.Now().Add(72 * time.Hour)
	o.Stores = []store.Store{l.st}
	o.Delete = true
	rep, err := gc.Run(context.Background(), o)
	must(t, err)
	return rep.Stores[0]
}

// TestLiveWriterEveryStore: a session saved after gc read the sessions
// names a planned blob, on every kind of store (buckets with the copy
// trash): the blob is back at the end.
func TestLiveWriterEveryStore(t *testing.T) {
	for _, k := range storeKinds() {
		t.Run(k.name, func(t *testing.T) {
			l := newLiveStore(t, k)
			defer gc.SetPhaseHook(func(p string) {
				if p == "planned" {
					l.save(t, "t-2.json", "reused")
				}
			})()
			s := l.run(t, gc.RunOptions{CopyToTrash: true})
			if s.Outcome != outcome.OK {
				t.Fatalf("outcome %v: %v", s.Outcome, s.Err)
			}
			if got := restoredKeys(s, gc.NamedDuringRun); len(got) != 1 || got[0] != l.keys["reused"] {
				t.Fatalf("restored %v, want [%s]", got, l.keys["reused"])
			}
			if !l.has(t, "used") || !l.has(t, "reused") || l.has(t, "orphan") {
				t.Errorf("used %v, reused %v, orphan %v; want true, true, false", l.has(t, "used"), l.has(t, "reused"), l.has(t, "orphan"))
			}
		})
	}
}

// TestBucketMarks: on a bucket, gc --delete marks its candidates and deletes
// nothing; a later run deletes a marked blob only when it is still
// unreferenced and unchanged past the grace, and when no session saved
// during that run names it. gc restore of a mark run drops the marks.
func TestBucketMarks(t *testing.T) {
	for _, k := range storeKinds() {
		if !k.bucket {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			l := newLiveStore(t, k)
			extra := name("rewritten")
			must(t, l.st.Put(ctx, extra, strings.NewReader("rewritten"), store.PutOptions{}))
			named := name("named-late")
			must(t, l.st.Put(ctx, named, strings.NewReader("named-late"), store.PutOptions{}))
			l.keys["named-late"] = named

			s := l.run(t, gc.RunOptions{})
			m := s.Marks
			if s.Outcome != outcome.OK || m == nil || m.Marked != 4 || m.Deleted != nil || s.Result != nil {
				t.Fatalf("first run: %v %+v %+v", s.Outcome, m, s.Err)
			}
			for _, c := range []string{"used", "reused", "orphan", "named-late"} {
				if !l.has(t, c) {
					t.Fatalf("%s left the store on a run that only marks", c)
				}
			}
			// A second run within the grace marks nothing anew.
			s = l.run(t, gc.RunOptions{})
			if s.Marks == nil || s.Marks.Marked != 0 || s.Marks.Pending != 4 || s.Marks.Deleted != nil {
				t.Fatalf("run within the grace: %+v", s.Marks)
			}

			// Meanwhile the runtime names reused, and writes extra again.
			l.save(t, "t-2.json", "reused")
			time.Sleep(1100 * time.Millisecond) // another second: another time on every service
			must(t, l.st.Put(ctx, extra, strings.NewReader("rewritten"), store.PutOptions{}))
			defer gc.SetPhaseHook(func(p string) {
				if p == "planned" {
					l.save(t, "t-3.json", "named-late")
				}
			})()
			s = l.run(t, gc.RunOptions{Grace: time.Nanosecond})
			m = s.Marks
			if s.Outcome != outcome.OK || m == nil || m.Deleted == nil || m.Deleted.Deleted != 1 {
				t.Fatalf("run past the grace: %v %v %+v", s.Outcome, s.Err, m)
			}
			why := map[string]string{}
			for _, u := range m.Unmarked {
				why[u.Key] = u.Reason
			}
			if why[l.keys["reused"]] == "" || why[extra] != "changed since it was marked" || why[named] != gc.NamedDuringRun || len(why) != 3 {
				t.Errorf("unmarked %v", m.Unmarked)
			}
			if l.has(t, "orphan") || !l.has(t, "reused") || !l.has(t, "used") || !l.has(t, "named-late") {
				t.Errorf("orphan %v reused %v used %v named-late %v; want only the orphan gone", l.has(t, "orphan"), l.has(t, "reused"), l.has(t, "used"), l.has(t, "named-late"))
			}
			if _, err := l.st.Stat(ctx, extra); err != nil {
				t.Errorf("the blob written again: %v", err)
			}
			// extra is a candidate again (old by the plan's clock) and is
			// marked anew; restore drops that run's marks.
			runs, err := trash.Marks(ctx, l.st)
			must(t, err)
			if len(runs) != 1 || len(runs[0].Marks) != 1 || runs[0].Marks[0].Key != extra || runs[0].Run != m.Run {
				t.Fatalf("marks after the run: %+v (this run's %q)", runs, m.Run)
			}
			n, err := trash.Unmark(ctx, locktest.Of(t, l.st), m.Run)
			must(t, err)
			if runs, _ := trash.Marks(ctx, l.st); n != 1 || len(runs) != 0 {
				t.Fatalf("unmark: %d, left %+v", n, runs)
			}
		})
	}
}

// TestBucketMarksRereadIncomplete: a marked blob is not deleted when the
// sessions that changed cannot all be read again; its marks stay.
func TestBucketMarksRereadIncomplete(t *testing.T) {
	l := newLiveStore(t, storeKinds()[3]) // s3
	s := l.run(t, gc.RunOptions{})
	if s.Marks == nil || s.Marks.Marked != 2 {
		t.Fatalf("first run: %+v", s.Marks)
	}
	defer gc.SetPhaseHook(func(p string) {
		if p == "planned" {
			must(t, os.WriteFile(filepath.Join(l.dir, "cut.json"), []byte(`{"messages":[`), 0o600))
		}
	})()
	s = l.run(t, gc.RunOptions{Grace: time.Nanosecond})
	if s.Outcome != outcome.Incomplete || !errors.Is(s.Err, gc.ErrTrashCheckIncomplete) {
		t.Fatalf("outcome %v, %v", s.Outcome, s.Err)
	}
	if !l.has(t, "orphan") || !l.has(t, "reused") {
		t.Fatal("a marked blob was deleted on a read that was not complete")
	}
	if runs, _ := trash.Marks(context.Background(), l.st); len(runs) != 1 {
		t.Fatalf("marks %+v", runs)
	}
}

// TestTrashCheckRestoresCompanions: an upload that a session names again
// comes back from the trash with its sidecar (coffer's "<id>.json" beside
// "<id>.<ext>"), in a later process, whose companion rule, like coffer's
// layout, answers from the store's folder, where neither is any more.
func TestTrashCheckRestoresCompanions(t *testing.T) {
	f := newFixture(t)
	old := time.Now().Add(-72 * time.Hour)
	const id = "4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8"
	up, side := id+".png", id+".json"
	for k, content := range map[string]string{up: "png bytes", side: `{"name":"scan.png"}`} {
		must(t, os.WriteFile(filepath.Join(f.inbound, k), []byte(content), 0o600))
		must(t, os.Chtimes(filepath.Join(f.inbound, k), old, old))
	}
	used := f.blob(t, "used", 72*time.Hour)
	f.session(t, "s.json", used)
	companion := func(store.Store) func(string) (string, bool) {
		return func(key string) (string, bool) {
			stem, ok := strings.CutSuffix(key, ".json")
			if !ok {
				return "", false
			}
			matches, _ := filepath.Glob(filepath.Join(f.inbound, stem+".*"))
			for _, m := range matches {
				if filepath.Base(m) != key {
					return filepath.Base(m), true
				}
			}
			return "", false
		}
	}
	opts := gc.RunOptions{Options: gc.Options{Sessions: []sessions.Source{f.src}}, Stores: []store.Store{f.st}, Delete: true, CompanionOf: companion, Guards: gc.Guards{MaxDeletePercent: 100}}
	rep, err := gc.Run(context.Background(), opts)
	must(t, err)
	if rep.Outcome != outcome.OK || rep.Stores[0].Result.Trashed != 2 {
		t.Fatalf("first run: %v %+v", rep.Outcome, rep.Stores[0].Result)
	}
	f.session(t, "t.json", used, up)
	for _, via := range []string{"gc", "purge"} {
		var got []string
		switch via {
		case "gc":
			rep, err = gc.Run(context.Background(), opts)
			must(t, err)
			got = restoredKeys(rep.Stores[0], gc.NamedSince)
		case "purge":
			pr, err := gc.Purge(context.Background(), locktest.Of(t, f.st), gc.PurgeOptions{Cutoff: time.Now().Add(time.Hour), Sessions: []sessions.Source{f.src}, Companion: companion(f.st)})
			must(t, err)
			for _, r := range pr.Trash.Restored {
				got = append(got, r.Key)
			}
			if pr.Purged.Blobs != 0 {
				t.Errorf("purge deleted %d blobs", pr.Purged.Blobs)
			}
		}
		slices.Sort(got)
		if want := []string{side, up}; !slices.Equal(got, want) {
			t.Fatalf("%s restored %v, want %v", via, got, want)
		}
		for _, k := range []string{up, side} {
			if _, err := os.Stat(filepath.Join(f.inbound, k)); err != nil {
				t.Errorf("%s: %v", k, err)
			}
		}
		// Trashed again for the purge's turn.
		if via == "gc" {
			must(t, os.Remove(filepath.Join(f.sess, "t.json")))
			rep, err = gc.Run(context.Background(), opts)
			must(t, err)
			if rep.Stores[0].Result == nil || rep.Stores[0].Result.Trashed != 2 {
				t.Fatalf("trashed again: %+v", rep.Stores[0].Result)
			}
			f.session(t, "t.json", used, up)
		}
	}
}

// TestSessionsOlderThanTheMargin: with sessions older than the check's
// margin, the check after the moves reads only what changed: quiet sessions
// are not taken for changes (the run is complete), and a folder of old
// sessions renamed in during the run is read whole (its files keep their old
// times).
func TestSessionsOlderThanTheMargin(t *testing.T) {
	defer gc.SetRereadMargin(0)()
	for _, noTrash := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-trash=%v", noTrash), func(t *testing.T) {
			f := newFixture(t)
			used := f.blob(t, "used", 72*time.Hour)
			reused := f.blob(t, "reused", 72*time.Hour)
			orphan := f.blob(t, "orphan", 72*time.Hour)
			f.session(t, "s.json", used)
			f.session(t, "quiet.json", used)
			elsewhere := filepath.Join(t.TempDir(), "archive")
			must(t, os.MkdirAll(elsewhere, 0o700))
			must(t, os.WriteFile(filepath.Join(elsewhere, "t-9.json"), []byte(`{"messages":[`+liveTurn(filepath.Join(f.inbound, reused))+`]}`), 0o600))
			time.Sleep(1100 * time.Millisecond) // every session's times are before the run now
			defer gc.SetPhaseHook(func(p string) {
				if p == "planned" {
					must(t, os.Rename(elsewhere, filepath.Join(f.sess, "archive")))
				}
			})()
			rep, err := gc.Run(context.Background(), gc.RunOptions{Options: gc.Options{Sessions: []sessions.Source{f.src}}, Stores: []store.Store{f.st}, Delete: true, NoTrash: noTrash, Guards: gc.Guards{MaxDeletePercent: 100}})
			must(t, err)
			s := rep.Stores[0]
			if rep.Outcome != outcome.OK {
				t.Fatalf("outcome %v: %v", rep.Outcome, s.Err)
			}
			if got := restoredKeys(s, gc.NamedDuringRun); len(got) != 1 || got[0] != reused {
				t.Fatalf("restored %v, want [%s]", got, reused)
			}
			if _, err := os.Stat(filepath.Join(f.inbound, orphan)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("orphan: %v", err)
			}
		})
	}
}

// TestLiveWriterNoTrashEveryStore: without the trash, a session saved after
// gc read the sessions names a planned blob, on every kind of store: it is
// not deleted (on a local store it is moved aside and put back; on a bucket
// the sessions that changed are read again before the deletes).
func TestLiveWriterNoTrashEveryStore(t *testing.T) {
	for _, k := range storeKinds() {
		if k.name == "trash-dir" {
			continue // --no-trash and --trash-dir contradict each other
		}
		t.Run(k.name, func(t *testing.T) {
			l := newLiveStore(t, k)
			defer gc.SetPhaseHook(func(p string) {
				if p == "planned" {
					l.save(t, "t-2.json", "reused")
				}
			})()
			s := l.run(t, gc.RunOptions{NoTrash: true})
			if s.Outcome != outcome.OK {
				t.Fatalf("outcome %v: %v", s.Outcome, s.Err)
			}
			if !l.has(t, "used") || !l.has(t, "reused") || l.has(t, "orphan") {
				t.Errorf("used %v, reused %v, orphan %v; want true, true, false", l.has(t, "used"), l.has(t, "reused"), l.has(t, "orphan"))
			}
			if s.Result == nil || s.Result.Deleted != 1 {
				t.Errorf("result %+v, want the orphan alone deleted", s.Result)
			}
			if runs, err := trash.Runs(context.Background(), l.st); err != nil || len(runs) != 0 {
				t.Errorf("runs left: %v %v", runs, err)
			}
		})
	}
}
