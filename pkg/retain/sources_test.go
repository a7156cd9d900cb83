package retain_test

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/retain/retaintest"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest"
	"github.com/mediactl/mediactl/pkg/store"
)

// The retention conformance table (package retaintest) runs unchanged
// against every kind of session source: a folder of files, a JSON Lines
// file, SQLite TEXT and BLOB columns (and a BLOB column of SQLite JSONB),
// Postgres text, json, jsonb, xml, text[] and bytea columns, and a bucket of
// JSON objects. Whatever the source, Mark keeps every planted blob and not
// the control blob.
func TestRetentionConformanceEverySource(t *testing.T) {
	cases := retaintest.Cases()
	sources := []struct {
		name string
		make func(t *testing.T, docs []string) string // returns a session spec
	}{
		{"files", filesSource},
		{"jsonl", jsonlSource},
		{"sqlite-text", func(t *testing.T, docs []string) string { return sqliteSource(t, docs, "TEXT") }},
		{"sqlite-blob", func(t *testing.T, docs []string) string { return sqliteSource(t, docs, "BLOB") }},
		{"sqlite-jsonb", func(t *testing.T, docs []string) string { return sqliteSource(t, docs, "JSONB") }},
		{"postgres-text", func(t *testing.T, docs []string) string { return postgresSource(t, docs, "text") }},
		{"postgres-json", func(t *testing.T, docs []string) string { return postgresSource(t, docs, "json") }},
		{"postgres-jsonb", func(t *testing.T, docs []string) string { return postgresSource(t, docs, "jsonb") }},
		{"postgres-xml", func(t *testing.T, docs []string) string { return postgresSource(t, docs, "xml") }},
		{"postgres-text-array", func(t *testing.T, docs []string) string { return postgresSource(t, docs, "text[]") }},
		{"postgres-bytea", func(t *testing.T, docs []string) string { return postgresSource(t, docs, "bytea") }},
		{"bucket", bucketSource},
	}
	docs := make([]string, len(cases))
	for i, c := range cases {
		docs[i] = c.Doc
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			for _, name := range append([]string{retaintest.Control()}, blobsOf(cases)...) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			st, err := store.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			s, err := sessions.Open(ctx, src.make(t, docs), sessions.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r, err := retain.Mark(ctx, st, []sessions.Source{s}, retain.MarkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Complete {
				t.Fatalf("retention incomplete: %v", r.Problems)
			}
			byBlob := map[string]string{}
			for _, c := range cases {
				byBlob[c.Blob] = c.Name + ": " + c.Doc
			}
			control := false
			for id := range r.Len() {
				key := r.Key(id)
				if key == retaintest.Control() {
					control = !r.KeptID(id)
					continue
				}
				if !r.KeptID(id) {
					t.Errorf("referenced blob %q is not kept; it is named by %s", key, byBlob[key])
				}
			}
			if !control {
				t.Errorf("the control blob is kept (or missing): the source proves nothing")
			}
		})
	}
}

func blobsOf(cases []retaintest.Case) []string {
	var out []string
	for _, c := range cases {
		out = append(out, c.Blob)
	}
	return out
}

func filesSource(t *testing.T, docs []string) string {
	dir := t.TempDir()
	for i, d := range docs {
		if err := os.WriteFile(filepath.Join(dir, "s-"+strconv.Itoa(i)+".json"), []byte(d), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// jsonlSource writes the documents as the lines of one JSON Lines file, as a
// runtime appends its transcript.
func jsonlSource(t *testing.T, docs []string) string {
	dir := t.TempDir()
	var b strings.Builder
	for _, d := range docs {
		b.WriteString(d + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "transcript.jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func bucketSource(t *testing.T, docs []string) string {
	return "file://" + filesSource(t, docs) + "?metadata=skip"
}

// sqliteSource writes the documents into coffer's chat_messages table, the
// content column declared with the given affinity (a BLOB column keeps the
// bytes as a blob); "JSONB" is a BLOB column of SQLite's binary JSON, as
// INSERT … jsonb(?) stores it (SQLite 3.45 and later), where every string's
// header byte stands right before it.
func sqliteSource(t *testing.T, docs []string, affinity string) string {
	value := "?"
	if affinity == "JSONB" {
		affinity, value = "BLOB", "jsonb(?)"
	}
	path := filepath.Join(t.TempDir(), "runs.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE chat_messages(id TEXT PRIMARY KEY, conversation_id TEXT, seq INTEGER, role TEXT, content ` + affinity + `)`); err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		var v any = d
		if affinity == "BLOB" {
			v = []byte(d)
		}
		if _, err := db.Exec(`INSERT INTO chat_messages VALUES (?, 'c1', ?, 'user', `+value+`)`, hex.EncodeToString([]byte(strconv.Itoa(i))), i, v); err != nil {
			t.Fatal(err)
		}
	}
	return "sqlite:" + path
}

// postgresSource writes the documents into agent-runs' messages table, the
// content column of the given type, in a database of its own (a source reads
// every schema of its database; other tests' schemas come and go meanwhile),
// and returns its URL.
func postgresSource(t *testing.T, docs []string, typ string) string {
	ctx := context.Background()
	u := sessionstest.PostgresDatabase(t, "mediactl_retention")
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE messages(id serial PRIMARY KEY, role text, content "+typ+")"); err != nil {
		t.Fatal(err)
	}
	rows := make([][]any, len(docs))
	for i, d := range docs {
		switch typ {
		case "text[]":
			rows[i] = []any{"user", []string{"first", d}}
		case "bytea":
			rows[i] = []any{"user", []byte(d)}
		case "xml":
			// The document as the text of an element: PostgreSQL keeps
			// xml as written, its entities (&amp; &#34; …) undecoded.
			var b strings.Builder
			b.WriteString("<message>")
			if err := xml.EscapeText(&b, []byte(d)); err != nil {
				t.Fatal(err)
			}
			b.WriteString("</message>")
			rows[i] = []any{"user", b.String()}
		default:
			rows[i] = []any{"user", d}
		}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"messages"}, []string{"role", "content"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	return u
}
