package forget

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest"
	"github.com/mediactl/mediactl/pkg/target"
)

// sourcesRun forgets owners with --delete over the store folder dir and the
// sessions specs, one by one (no layout).
func sourcesRun(t *testing.T, dir string, specs []string, rule owner.Rule, owners ...string) *Report {
	t.Helper()
	ctx := context.Background()
	tg, err := target.Open(ctx, target.Spec{Stores: []string{dir}, Sessions: specs})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var stores []scan.Target
	for _, s := range tg.Stores {
		stores = append(stores, scan.Target{Store: s, Resolver: tg.Resolver(s)})
	}
	rep, err := Run(ctx, Options{Stores: stores, Sources: tg.Sources, Rule: rule, Owners: owners, Delete: true, Bases: tg.Bases})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// attachment is a message's content naming path, as coffer writes it.
func attachment(path string) string {
	return `[{"type":"text","text":"look"},{"type":"attachment","path":"` + path + `","mime":"image/png","filename":"photo.png"}]`
}

// rowDB is a runtime's database: exec runs a statement, key returns the
// key of the row of user whose content is like a pattern.
type rowDB struct {
	exec func(q string) error
	key  func(user, like string) (string, error)
}

// rowKeyReuse runs forget for alice over a messages table of db, where
// alice's message names a picture and bob's does not; at phase at, the
// runtime deletes alice's message and saves bob's naming the same picture
// (reuse), in a row the database gives alice's row's key (checked). The
// picture must stay.
func rowKeyReuse(t *testing.T, at string, db rowDB, specs []string, reuse func(ref string)) {
	w := newWork(t) // its inbox is the store
	pic := w.blob("the picture", "")
	ref := attachment(filepath.Join(w.inbox, pic))
	mine := w.blob("alice's own", "")
	mineRef := attachment(filepath.Join(w.inbox, mine))
	for _, q := range []string{
		`INSERT INTO messages(user_id, content) VALUES ('bob', 'hello')`,
		fmt.Sprintf(`INSERT INTO messages(user_id, content) VALUES ('alice', '%s')`, mineRef),
		// the last row: SQLite reuses the largest rowid
		fmt.Sprintf(`INSERT INTO messages(user_id, content) VALUES ('alice', '%s')`, ref),
	} {
		if err := db.exec(q); err != nil {
			t.Fatal(err)
		}
	}
	key := func(user, like string) string {
		k, err := db.key(user, like)
		if err != nil {
			t.Error(err)
		}
		return k
	}
	before := key("alice", "%"+pic+"%")
	phaseHook = func(p string) {
		if p != at {
			return
		}
		reuse(ref)
		if after := key("bob", "%"+pic+"%"); after != before {
			t.Errorf("the fixture did not reuse the key: alice's row was %s, bob's is %s", before, after)
		}
	}
	t.Cleanup(func() { phaseHook = nil })
	rep := sourcesRun(t, w.inbox, specs, owner.Rule{Column: "user_id"}, "alice")
	if !w.exists(pic) {
		t.Fatalf("bob's message, saved during the run under alice's row's key %s, names %s, and it was erased (erased %v)", before, pic, keysOf(rep.Erased))
	}
	if b, err := os.ReadFile(filepath.Join(w.inbox, pic)); err != nil || string(b) != "the picture" {
		t.Fatalf("the picture is %q (%v)", b, err)
	}
	want := KeptNamedPrecisely
	if at == "moved" {
		want = KeptNamedDuringRun
	}
	if got := keptReason(rep, pic); got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	if w.exists(mine) || len(rep.Erased) != 1 || rep.Erased[0].Key != mine {
		t.Errorf("alice's own picture: erased %v, still there %v", keysOf(rep.Erased), w.exists(mine))
	}
	if rep.Outcome != outcome.OK {
		t.Errorf("outcome %v, problems %v", rep.Outcome, rep.Problems)
	}
}

// A SQLite table's row is named by its rowid or its INTEGER PRIMARY KEY,
// which SQLite gives the next row inserted once the row with the largest
// one is deleted: a message of bob's saved during the run can carry the
// key of a message of alice's that the first read saw.
func TestForgetRowKeyReusedSQLite(t *testing.T) {
	for _, schema := range []struct{ name, create, key string }{
		{"rowid", `CREATE TABLE messages(user_id TEXT, content TEXT)`, "rowid"},
		{"integer primary key", `CREATE TABLE messages(id INTEGER PRIMARY KEY, user_id TEXT, content TEXT)`, "id"},
	} {
		for _, at := range []string{"read", "moved"} {
			t.Run(schema.name+"/"+at, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "runtime.db")
				db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				if _, err := db.Exec(schema.create); err != nil {
					t.Fatal(err)
				}
				rdb := rowDB{
					exec: func(q string) error { _, err := db.Exec(q); return err },
					key: func(user, like string) (k string, err error) {
						err = db.QueryRow(`SELECT CAST(`+schema.key+` AS TEXT) FROM messages WHERE user_id = ? AND content LIKE ?`, user, like).Scan(&k)
						return k, err
					},
				}
				rowKeyReuse(t, at, rdb, []string{"sqlite:" + path}, func(ref string) {
					for _, q := range []string{
						`DELETE FROM messages WHERE content = '` + ref + `'`,
						`INSERT INTO messages(user_id, content) VALUES ('bob', '` + ref + `')`,
					} {
						if err := rdb.exec(q); err != nil {
							t.Error(err)
						}
					}
				})
			})
		}
	}
}

// A PostgreSQL table without a primary key: a row is named by its ctid,
// which the next row inserted takes once the deleted row's space is freed
// (here by VACUUM; on a busy table by pruning).
func TestForgetRowKeyReusedPostgres(t *testing.T) {
	url := sessionstest.PostgresDatabase(t, "forget_reuse")
	for _, at := range []string{"read", "moved"} {
		t.Run(at, func(t *testing.T) {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			rdb := rowDB{
				exec: func(q string) error { _, err := conn.Exec(ctx, q); return err },
				key: func(user, like string) (k string, err error) {
					err = conn.QueryRow(ctx, `SELECT ctid::text FROM messages WHERE user_id = $1 AND content LIKE $2`, user, like).Scan(&k)
					return k, err
				},
			}
			for _, q := range []string{
				`DROP TABLE IF EXISTS messages`,
				`CREATE TABLE messages(user_id text, content text, metadata jsonb)`,
			} {
				if err := rdb.exec(q); err != nil {
					t.Fatal(err)
				}
			}
			rowKeyReuse(t, at, rdb, []string{url}, func(ref string) {
				for _, q := range []string{
					`DELETE FROM messages WHERE content = '` + ref + `'`,
					`VACUUM messages`,
					`INSERT INTO messages(user_id, content) VALUES ('bob', '` + ref + `')`,
				} {
					if err := rdb.exec(q); err != nil {
						t.Error(err)
					}
				}
			})
		})
	}
}

// A document whose owner its content says (--owner-by a pointer), written
// again during the run by another owner's session under the same name.
func TestForgetDocumentRewrittenByAnotherOwner(t *testing.T) {
	for _, at := range []string{"read", "moved"} {
		t.Run(at, func(t *testing.T) {
			w := newWork(t)
			pic := w.blob("the picture", "")
			dir := t.TempDir()
			save := func(user string) {
				doc := fmt.Sprintf(`{"user":{"id":%q},"messages":[{"role":"user","content":%s}]}`, user, attachment(filepath.Join(w.inbox, pic)))
				if err := os.WriteFile(filepath.Join(dir, "thread-1.json"), []byte(doc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			save("alice")
			if err := os.WriteFile(filepath.Join(dir, "thread-2.json"), []byte(`{"user":{"id":"bob"},"messages":[]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			phaseHook = func(p string) {
				if p == at {
					save("bob")
				}
			}
			t.Cleanup(func() { phaseHook = nil })
			rep := sourcesRun(t, w.inbox, []string{dir}, owner.Rule{Pointer: "/user/id"}, "alice")
			if !w.exists(pic) {
				t.Fatalf("thread-1.json, now bob's, names %s, and it was erased (erased %v)", pic, keysOf(rep.Erased))
			}
			if rep.Outcome != outcome.OK {
				t.Errorf("outcome %v, problems %v", rep.Outcome, rep.Problems)
			}
		})
	}
}

// A unit of the forgotten owner that the read after the moves finds as the
// first read saw it is still left out: the fingerprints keep nothing the
// owner alone names.
func TestForgetUnchangedUnitsStayLeftOut(t *testing.T) {
	w := newWork(t)
	path := filepath.Join(t.TempDir(), "runtime.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pic := w.blob("the picture", "")
	doc := w.blob("a pdf", "")
	for _, q := range []string{
		`CREATE TABLE messages(user_id TEXT, content TEXT, attachments BLOB)`,
		fmt.Sprintf(`INSERT INTO messages VALUES ('alice', '%s', NULL)`, attachment(filepath.Join(w.inbox, pic))),
		fmt.Sprintf(`INSERT INTO messages VALUES ('alice', 'see', CAST('%s' AS BLOB))`, attachment(filepath.Join(w.inbox, doc))),
		`INSERT INTO messages VALUES ('bob', 'hello', NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	rep := sourcesRun(t, w.inbox, []string{"sqlite:" + path}, owner.Rule{Column: "user_id"}, "alice")
	if w.exists(pic) || w.exists(doc) || len(rep.Erased) != 2 || rep.Outcome != outcome.OK {
		t.Fatalf("erased %v, kept %+v, outcome %v", keysOf(rep.Erased), rep.Kept, rep.Outcome)
	}
}
