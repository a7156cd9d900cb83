package migrate_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// postgresDatabase creates a database of its own on the test server (so that
// other tests' tables are not part of the source) and returns its URL.
func postgresDatabase(t *testing.T) string {
	t.Helper()
	return sessionstest.PostgresDatabase(t, "mediactl_migrate")
}

// TestPostgresMigration: references in a text column and inside a jsonb column
// are rewritten in transactions and rolled back to the same values (jsonb
// normalizes its text, so rollback finds the references by search).
func TestPostgresMigration(t *testing.T) {
	ctx := context.Background()
	dbURL := postgresDatabase(t)
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	a := writeBlob(t, dir, []byte("%PDF-1.4 report"), ".pdf")
	b := writeBlob(t, dir, append(append([]byte{}, pngHead...), "chart"...), ".png")

	conn, err := pgx.Connect(ctx, dbURL)
	must(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE TABLE messages(id serial PRIMARY KEY, role text, content text, metadata jsonb);
INSERT INTO messages(role, content, metadata) VALUES
 ('user', 'see `+filepath.Join(dir, a)+` please', NULL),
 ('user', 'look', '{"attachments": [{"path": "`+filepath.Join(dir, b)+`", "mime": "image/png"}], "z": 1, "a": 2}'),
 ('assistant', 'a chart', NULL)`)
	must(t, err)
	dump := func() string {
		rows, err := conn.Query(ctx, `SELECT id, coalesce(content, ''), coalesce(metadata::text, '') FROM messages ORDER BY id`)
		must(t, err)
		defer rows.Close()
		var sb strings.Builder
		for rows.Next() {
			var id int
			var c, m string
			must(t, rows.Scan(&id, &c, &m))
			sb.WriteString(c + " | " + m + "\n")
		}
		return sb.String()
	}
	before := dump()

	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "runs"))
	j := journal(t, filepath.Join(t.TempDir(), "j.jsonl"))
	if rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: j}); rep.Copied != 2 {
		t.Fatalf("copy: %+v", rep)
	}
	rw, err := sessions.OpenRewriter(ctx, dbURL, sessions.Options{})
	must(t, err)
	defer rw.Close()
	rr, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: replacerFor(j, src, dst, dir), Journal: j})
	must(t, err)
	if rr.Changed != 2 || rr.References != 2 || rr.Problems != 0 {
		t.Fatalf("rewrite: %+v", rr)
	}
	after := dump()
	for _, key := range []string{a, b} {
		if !strings.Contains(after, migrate.ObjectURL(dst.(store.Bucket), key)) {
			t.Fatalf("after rewrite:\n%s", after)
		}
	}
	rb, err := migrate.RollbackSessions(ctx, []sessions.Rewriter{rw}, j, 0)
	must(t, err)
	if rb.Changed != 2 || rb.Problems != 0 {
		t.Fatalf("rollback: %+v", rb)
	}
	if got := dump(); got != before {
		t.Fatalf("after rollback:\n%s\nwant\n%s", got, before)
	}
}
