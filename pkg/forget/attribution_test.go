package forget

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/target"

	_ "modernc.org/sqlite"
)

// runsStore is an agent-runs bucket kept in a folder (file://), whose
// messages are rows of a SQLite database: the {bucket, path} pairs name the
// bucket "agent-runs".
type runsStore struct {
	t      *testing.T
	bucket string // the folder
	db     string
}

func newRunsStore(t *testing.T) *runsStore {
	s := &runsStore{t: t, bucket: t.TempDir(), db: filepath.Join(t.TempDir(), "runs.db")}
	s.exec(`CREATE TABLE messages (id TEXT PRIMARY KEY, thread_id TEXT, role TEXT, content TEXT, reply_to TEXT, metadata TEXT, created_at TEXT)`)
	return s
}

func (s *runsStore) exec(q string, args ...any) {
	s.t.Helper()
	db, err := sql.Open("sqlite", "file:"+s.db)
	if err != nil {
		s.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q, args...); err != nil {
		s.t.Fatal(err)
	}
}

// upload writes a user's upload, two days old, and returns its key.
func (s *runsStore) upload(user, thread, file string) string {
	s.t.Helper()
	key := "agent-inputs/" + user + "/" + thread + "/uploads/" + file
	p := filepath.Join(s.bucket, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("png of "+key), 0o644); err != nil {
		s.t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		s.t.Fatal(err)
	}
	return key
}

func (s *runsStore) exists(key string) bool {
	_, err := os.Lstat(filepath.Join(s.bucket, filepath.FromSlash(key)))
	return err == nil
}

// pair is an attachment as the backend stores it in metadata.
func pair(key string) string {
	return `{"type": "binary", "bucket": "agent-runs", "path": "` + key + `", "mime": "image/png", "filename": "` + filepath.Base(key) + `"}`
}

// message saves a user message; metadata's user is user ("" for none).
func (s *runsStore) message(id, thread, user, replyTo string, attachments ...string) {
	meta := `{"attachments": [` + strings.Join(attachments, ", ") + `]}`
	if user != "" {
		meta = `{"user": {"id": "` + user + `"}, "attachments": [` + strings.Join(attachments, ", ") + `]}`
	}
	var reply any
	if replyTo != "" {
		reply = replyTo
	}
	s.exec(`INSERT INTO messages (id, thread_id, role, content, reply_to, metadata, created_at) VALUES (?, ?, 'user', 'see attached', ?, ?, '2026-12-01 10:00:00')`, id, thread, reply, meta)
}

// forget forgets owners with --delete, the units attributed by rule
// (--owner-by's, or agent-runs' own).
func (s *runsStore) forget(by string, owners ...string) *Report {
	s.t.Helper()
	return forgetIn(s.t, target.Spec{Stores: []string{"file://" + s.bucket}, Sessions: []string{"sqlite:" + s.db},
		BucketNames: []string{"agent-runs=file://" + s.bucket}}, by, owners...)
}

func forgetIn(t *testing.T, spec target.Spec, by string, owners ...string) *Report {
	t.Helper()
	ctx := context.Background()
	tg, err := target.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	rule, err := owner.ParseBy(owner.Rule{}, by)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, Options{Stores: tg.ScanTargets(), Sources: tg.Sources, Rule: rule, Owners: owners, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// --owner-by /user/id: bob's reply holds a snapshot of alice's message
// (user alice) before its own metadata (user bob, with his upload).
// Forgetting alice erases her upload, never bob's: his row names two users
// and keeps what it names.
func TestForgetPointerTwoOwners(t *testing.T) {
	s := newRunsStore(t)
	hers := s.upload("alice", "t1", "a81f3c2e.png")
	his := s.upload("bob", "t1", "9b07d4e1.png")
	s.message("m1", "t1", "alice", "", pair(hers))
	s.message("m2", "t1", "bob", `{"user": {"id": "alice"}, "role": "user", "content": "look at my cat"}`, pair(his))
	rep := s.forget("/user/id", "alice")
	if !s.exists(his) {
		t.Fatalf("bob's upload %s was erased (erased %v)", his, keysOf(rep.Erased))
	}
	if s.exists(hers) || rep.Units != 1 {
		t.Errorf("alice's upload: exists %v; %d units forgotten, erased %v, kept %+v", s.exists(hers), rep.Units, keysOf(rep.Erased), rep.Kept)
	}
}

// agent-runs rows read without a user_id: the user is the key's. A path
// through alice's folder to bob's upload is bob's (the key it resolves to).
func TestForgetHintResolved(t *testing.T) {
	s := newRunsStore(t)
	hers := s.upload("alice", "t1", "cat.png")
	his := s.upload("bob", "t2", "g.png")
	path := func(key string) string {
		return `{"type": "binary", "path": "` + filepath.ToSlash(s.bucket) + "/" + key + `", "mime": "image/png"}`
	}
	s.message("m1", "t1", "", "", path(hers))
	s.message("m2", "t2", "", "", path("agent-inputs/alice/t1/uploads/../../../bob/t2/uploads/g.png"))
	rep := s.forget("", "alice")
	if !s.exists(his) {
		t.Fatalf("bob's upload %s was erased (erased %v)", his, keysOf(rep.Erased))
	}
	if s.exists(hers) {
		t.Errorf("alice's upload stays (kept %+v)", rep.Kept)
	}
}

// Session documents of a plain --sessions folder are their files': bob's
// session naming alice's upload is not alice's, and keeps it.
func TestForgetHintInDocument(t *testing.T) {
	s := newRunsStore(t)
	hers := s.upload("alice", "t1", "cat.png")
	s.message("m1", "t1", "", "", pair(hers))
	docs := t.TempDir()
	body := `{"thread_id": "t9", "messages": [{"role": "user", "content": "forwarded", "metadata": {"attachments": [` + pair(hers) + `]}}]}`
	if err := os.WriteFile(filepath.Join(docs, "bob-t9.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := forgetIn(t, target.Spec{Stores: []string{"file://" + s.bucket}, Sessions: []string{"sqlite:" + s.db, docs},
		BucketNames: []string{"agent-runs=file://" + s.bucket}}, "", "alice")
	if !s.exists(hers) {
		t.Fatalf("bob-t9.json names %s; it was erased (%d units forgotten)", hers, rep.Units)
	}
	if rep.Units != 1 || keptReason(rep, hers) != KeptNamedPrecisely {
		t.Errorf("%d units forgotten, kept %+v", rep.Units, rep.Kept)
	}
}

// --owner-by a column: tenant "alice\u00a0" is not tenant "alice".
func TestForgetIDsAsSpelled(t *testing.T) {
	s := newRunsStore(t)
	s.exec(`ALTER TABLE messages ADD COLUMN tenant TEXT`)
	shared := s.upload("u1", "t1", "logo.png")
	s.message("m1", "t1", "", "", pair(shared))
	s.message("m2", "t1", "", "", pair(shared))
	s.exec(`UPDATE messages SET tenant = 'alice' WHERE id = 'm1'`)
	s.exec("UPDATE messages SET tenant = 'alice\u00a0' WHERE id = 'm2'")
	rep := s.forget("tenant", "alice")
	if !s.exists(shared) {
		t.Fatalf("tenant %q names %s; it was erased", "alice\u00a0", shared)
	}
	if rep.Units != 1 {
		t.Errorf("%d units forgotten, want alice's one", rep.Units)
	}
}

// A query's rows are keyed by its first column, which may repeat: keyed by
// the thread, alice's and bob's rows of one thread are one unit of two
// users, which is no one's. alice owns no unit then: she is unknown, and
// nothing is erased.
func TestForgetQueryRowsOfOneName(t *testing.T) {
	s := newRunsStore(t)
	hers := s.upload("alice", "t1", "cat.png")
	his := s.upload("bob", "t1", "dog.png")
	s.message("m1", "t1", "alice", "", pair(hers))
	s.message("m2", "t1", "bob", "", pair(his))
	rep := forgetIn(t, target.Spec{Stores: []string{"file://" + s.bucket}, Sessions: []string{"sqlite:" + s.db},
		Query: "SELECT thread_id, metadata FROM messages", BucketNames: []string{"agent-runs=file://" + s.bucket}}, "/user/id", "alice")
	if !s.exists(hers) || !s.exists(his) {
		t.Fatalf("an upload of a thread of two users was erased (erased %v)", keysOf(rep.Erased))
	}
	if len(rep.Unknown) != 1 || rep.Unknown[0] != "alice" {
		t.Errorf("unknown %v, want alice: the thread is no one's", rep.Unknown)
	}
}
