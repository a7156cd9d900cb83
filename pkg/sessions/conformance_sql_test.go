package sessions_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest/conformance"
)

// The session conformance suite on databases: coffer's SQLite store (its
// content column as TEXT, and as SQLite's binary JSONB), and PostgreSQL
// (text and jsonb columns).

func TestConformanceSQLite(t *testing.T) {
	conformance.Run(t, sqliteFixture("TEXT"))
}

func TestConformanceSQLiteJSONB(t *testing.T) {
	conformance.Run(t, sqliteFixture("JSONB"))
}

func TestConformancePostgresText(t *testing.T) {
	conformance.Run(t, postgresFixture("text"))
}

func TestConformancePostgresJSONB(t *testing.T) {
	conformance.Run(t, postgresFixture("jsonb"))
}

// sqliteFixture keeps the units in coffer's chat_messages, content declared
// TEXT or, for "JSONB", a BLOB of SQLite's binary JSON as INSERT … jsonb(?)
// stores it. The database is in WAL mode with its writer open, as coffer's
// daemon keeps it. A row yields five items: id, conversation_id, seq, role,
// content.
func sqliteFixture(content string) conformance.Factory {
	return func(t *testing.T, units []conformance.Unit) *conformance.Fixture {
		path := filepath.Join(t.TempDir(), "coffer.db")
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		affinity, value := content, "?"
		if content == "JSONB" {
			affinity, value = "BLOB", "jsonb(?)"
		}
		if _, err := db.Exec(`CREATE TABLE conversations(id TEXT PRIMARY KEY, agent_key TEXT, title TEXT);
			CREATE TABLE chat_messages(id TEXT PRIMARY KEY, conversation_id TEXT, seq INTEGER, role TEXT, content ` + affinity + `)`); err != nil {
			t.Fatal(err)
		}
		spec := "sqlite:" + path
		fx := &conformance.Fixture{
			Spec:       spec,
			Items:      5 * len(units),
			Counts:     sessions.Counts{Rows: int64(len(units))},
			Snapshot:   true,
			Rewritable: true,
			Read: func(t testing.TB, p ref.Place) []byte {
				id, ok := strings.CutPrefix(p.Key, "id=")
				if !ok {
					t.Fatalf("key %q", p.Key)
				}
				var v any
				err := db.QueryRow(fmt.Sprintf(`SELECT %q FROM %q WHERE id = ?`, p.Column, p.Table), id).Scan(&v)
				if err == sql.ErrNoRows {
					return nil
				}
				if err != nil {
					t.Fatal(err)
				}
				switch v := v.(type) {
				case []byte:
					return v
				case string:
					return []byte(v)
				case int64:
					return []byte(strconv.FormatInt(v, 10))
				}
				t.Fatalf("%s holds a %T", p, v)
				return nil
			},
			Write: func(t testing.TB, units map[ref.Place][]byte) {
				tx, err := db.Begin()
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback()
				for p, b := range units {
					var v any = string(b)
					if content == "JSONB" {
						v = b // the bytes of the binary JSON, as they are
					}
					if _, err := tx.Exec(`UPDATE chat_messages SET content = ? WHERE id = ?`, v, strings.TrimPrefix(p.Key, "id=")); err != nil {
						t.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
			},
		}
		for i, u := range units {
			id := fmt.Sprintf("0b9f%04x-6c1e-4d2a-9a51-3f0c2e7d%04x", i, i)
			if _, err := db.Exec(`INSERT INTO chat_messages VALUES (?, 'c1', ?, 'user', `+value+`)`, id, i+1, u.JSON); err != nil {
				t.Fatal(err)
			}
			fx.Places = append(fx.Places, ref.Place{Source: spec, Table: "chat_messages", Key: "id=" + id, Column: "content"})
		}
		return fx
	}
}

// postgresFixture keeps the units in agent-runs' messages table, content
// of the given type, in a database of its own; the last units are in a
// second table, old_messages, which the exclusion names. A row yields three
// items: id, role, content.
func postgresFixture(typ string) conformance.Factory {
	return func(t *testing.T, units []conformance.Unit) *conformance.Fixture {
		ctx := context.Background()
		u := sessionstest.PostgresDatabase(t, "mediactl_conformance")
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		for _, table := range []string{"messages", "old_messages"} {
			if _, err := conn.Exec(ctx, "CREATE TABLE "+table+"(id serial PRIMARY KEY, role text, content "+typ+")"); err != nil {
				t.Fatal(err)
			}
		}
		const archivedRows = 3
		fx := &conformance.Fixture{
			Spec:          u,
			Items:         3 * len(units),
			Counts:        sessions.Counts{Rows: int64(len(units))},
			Snapshot:      true,
			Rewritable:    true,
			Exclude:       []string{"old_messages"},
			ExcludedCount: 1,
			Read: func(t testing.TB, p ref.Place) []byte {
				id, ok := strings.CutPrefix(p.Key, "id=")
				if !ok {
					t.Fatalf("key %q", p.Key)
				}
				var v *string
				err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT %s::text FROM %s WHERE id = $1`, pgx.Identifier{p.Column}.Sanitize(), pgx.Identifier{p.Table}.Sanitize()), id).Scan(&v)
				if err == pgx.ErrNoRows || err == nil && v == nil {
					return nil
				}
				if err != nil {
					t.Fatal(err)
				}
				return []byte(*v)
			},
			Write: func(t testing.TB, units map[ref.Place][]byte) {
				tx, err := conn.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(ctx)
				for p, b := range units {
					if _, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE %s SET content = $1::text::%s WHERE id = $2::text::int`, pgx.Identifier{p.Table}.Sanitize(), typ), string(b), strings.TrimPrefix(p.Key, "id=")); err != nil {
						t.Fatal(err)
					}
				}
				if err := tx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			},
		}
		for i, un := range units {
			table := "messages"
			if i >= len(units)-archivedRows {
				table = "old_messages"
				fx.Excluded = append(fx.Excluded, i)
			}
			var id int
			if err := conn.QueryRow(ctx, "INSERT INTO "+table+"(role, content) VALUES ('user', $1::text::"+typ+") RETURNING id", un.JSON).Scan(&id); err != nil {
				t.Fatal(err)
			}
			fx.Places = append(fx.Places, ref.Place{Source: u, Table: table, Key: "id=" + strconv.Itoa(id), Column: "content"})
		}
		return fx
	}
}
