package sessions

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/ref"
)

const (
	cofferMediaDir = "/home/u/.coffer/channel-media/"
	cofferBucket   = "s3://media/coffer/"
)

// sqliteDump renders every row of every table, values quoted by SQLite itself
// (so that TEXT 'x' and BLOB X'78' differ; a BLOB is followed by its bytes read
// as text), rows sorted: two databases with the same dump hold the same values
// with the same storage classes.
func sqliteDump(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	var out []string
	for _, tb := range tables {
		// Generated columns too, not the hidden columns of a virtual table.
		crow, err := db.Query(`SELECT name FROM pragma_table_xinfo(?) WHERE hidden <> 1 ORDER BY cid`, tb)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for crow.Next() {
			var c string
			crow.Scan(&c)
			c = sqliteIdent(c)
			parts = append(parts, "CASE typeof("+c+") WHEN 'blob' THEN quote("+c+") || ' (' || quote(CAST("+c+" AS TEXT)) || ')' ELSE quote("+c+") END")
		}
		crow.Close()
		r, err := db.Query("SELECT " + strings.Join(parts, " || '|' || ") + " FROM " + sqliteIdent(tb))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for r.Next() {
			var s string
			if err := r.Scan(&s); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, tb+": "+s)
		}
		r.Close()
		sort.Strings(lines)
		out = append(out, lines...)
	}
	return strings.Join(out, "\n")
}

func sqliteTypeof(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var typ string
	if err := db.QueryRow(q).Scan(&typ); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return typ
}

// TestRewriteSQLiteRoundTrip rewrites coffer's database beside its live writer
// connection and rolls it back from the journal: every value comes back with
// its bytes and its storage class, and Edit saw exactly Walk's places.
func TestRewriteSQLiteRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "coffer.db")
	writer := createCofferDB(t, path)
	before := sqliteDump(t, writer)
	spec := "sqlite:" + path

	w := openRewriter(t, spec)
	if w.String() != spec {
		t.Errorf("String() = %q", w.String())
	}
	var seen []ref.Place
	var j journal
	c, err := w.Rewrite(ctx, replaceEdit(cofferMediaDir, cofferBucket, &seen), j.options(0))
	if err != nil {
		t.Fatalf("Rewrite: %v", err)
	}
	// m1.content, notes[rowid=1].body, kv.v
	if c.Changed != 3 || c.Units != int64(len(seen)) || c.Failed+c.Conflicts+c.Retried+c.Gone != 0 {
		t.Errorf("counts = %+v", c)
	}
	// INTEGER values are read, not offered.
	items, _ := walkAll(t, openSQLiteSpec(t, spec, ""))
	checkSawWalk(t, seen, items, "chat_messages[id=m1].seq", "chat_messages[id=m2].seq", "chat_messages[id=m3].seq",
		"chat_messages[id=m2].prompt_tokens", "chat_messages[id=m2].completion_tokens", "notes[rowid=1].n", "notes[rowid=2].body")
	var got []string
	for _, ch := range j.committed {
		got = append(got, ch.Place.String())
	}
	want := []string{"chat_messages[id=m1].content", "kv[ns=media,k=photo].v", "notes[rowid=1].body"}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(j.prepared, j.committed) {
		t.Errorf("committed %q (prepared %d), want %q", got, len(j.prepared), want)
	}

	// The live writer sees the new values, with their storage classes.
	var content string
	if err := writer.QueryRow(`SELECT content FROM chat_messages WHERE id = 'm1'`).Scan(&content); err != nil || !strings.Contains(content, cofferBucket+"4f1c9a0e") {
		t.Errorf("m1.content = %q, %v", content, err)
	}
	if typ := sqliteTypeof(t, writer, `SELECT typeof(v) FROM kv`); typ != "blob" {
		t.Errorf("kv.v is now %s, want blob", typ)
	}
	if typ := sqliteTypeof(t, writer, `SELECT typeof(content) FROM chat_messages WHERE id = 'm1'`); typ != "text" {
		t.Errorf("m1.content is now %s, want text", typ)
	}

	// Roll back through a second rewriter, as a later run would.
	w2 := openRewriter(t, spec)
	c, err = w2.Rewrite(ctx, j.rollbackEdit(), RewriteOptions{})
	if err != nil || c.Changed != 3 {
		t.Fatalf("rollback: %+v, %v", c, err)
	}
	if after := sqliteDump(t, writer); after != before {
		t.Errorf("after rollback:\n%s\nwant:\n%s", after, before)
	}
}

// TestRewriteSQLiteConcurrentWriters: while the rewrite runs, coffer's writer
// keeps committing short transactions (and sometimes holds one open), one row is
// changed between our read and our write, and one row is changed every time.
// The first is retried with the writer's value, the second left as the writer
// made it and named as a conflict; everything else is rewritten, and the writer
// never failed.
func TestRewriteSQLiteConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "coffer.db")
	writer := createCofferDB(t, path)
	const extra = 1200 // more than two write batches
	tx, err := writer.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range extra {
		if _, err := tx.Exec(`INSERT INTO chat_messages(id, conversation_id, seq, role, content) VALUES(?, 'c1', ?, 'user', ?)`,
			fmt.Sprintf("x%04d", i), 10+i, `[{"type":"attachment","path":"`+cofferMediaDir+fmt.Sprintf("%032x", i)+`.jpg"}]`); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	// The daemon: its own connection, short transactions, one held 30 ms now
	// and then, touching rows the rewrite does not change.
	daemon, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=10000&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	daemon.SetMaxOpenConns(1)
	defer daemon.Close()
	var stop atomic.Bool
	var daemonWrites atomic.Int64
	var daemonErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			tx, err := daemon.Begin()
			if err != nil {
				daemonErr = err
				return
			}
			if _, err := tx.Exec(`UPDATE conversations SET title = ? WHERE id = 'c1'`, fmt.Sprintf("title %d", i)); err != nil {
				tx.Rollback()
				daemonErr = err
				return
			}
			if i%10 == 0 {
				time.Sleep(30 * time.Millisecond)
			}
			if err := tx.Commit(); err != nil {
				daemonErr = err
				return
			}
			daemonWrites.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()

	edits := map[string]int{}
	edit := func(p ref.Place, old []byte) ([]byte, error) {
		key := p.String()
		edits[key]++
		switch key {
		case "chat_messages[id=m1].content":
			if edits[key] == 1 {
				if _, err := writer.Exec(`UPDATE chat_messages SET content = json_insert(content, '$[#]', json('{"type":"text","text":"edited"}')) WHERE id = 'm1'`); err != nil {
					return nil, err
				}
			}
		case "notes[rowid=1].body":
			if _, err := writer.Exec(`UPDATE notes SET body = body || '+' WHERE rowid = 1`); err != nil {
				return nil, err
			}
		}
		return replaceEdit(cofferMediaDir, cofferBucket, nil)(p, old)
	}
	w := openRewriter(t, "sqlite:"+path)
	var j journal
	c, err := w.Rewrite(ctx, edit, j.options(3))
	stop.Store(true)
	wg.Wait()
	if daemonErr != nil {
		t.Errorf("the daemon's writes failed during the rewrite: %v", daemonErr)
	}
	if daemonWrites.Load() == 0 {
		t.Error("the daemon wrote nothing during the rewrite")
	}
	t.Logf("counts %+v; daemon committed %d transactions meanwhile", c, daemonWrites.Load())

	// m1 retried once; notes body: 1 read + 3 re-reads, all changed under us.
	if c.Changed != extra+2 || c.Retried != 1+3 || c.Conflicts != 1 || c.Failed != 0 {
		t.Errorf("counts = %+v; want %d changed, 4 re-reads, 1 conflict", c, extra+2)
	}
	units := unitErrors(t, err)
	if len(units) != 1 || units[0].Place.String() != "notes[rowid=1].body" || !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v; want a conflict on notes[rowid=1].body", err)
	}
	if edits["chat_messages[id=m1].content"] != 2 || edits["notes[rowid=1].body"] != 4 {
		t.Errorf("Edit calls: m1 %d, notes %d", edits["chat_messages[id=m1].content"], edits["notes[rowid=1].body"])
	}
	var m1, body string
	writer.QueryRow(`SELECT content FROM chat_messages WHERE id = 'm1'`).Scan(&m1)
	writer.QueryRow(`SELECT body FROM notes WHERE rowid = 1`).Scan(&body)
	if !strings.Contains(m1, `"edited"`) || !strings.Contains(m1, cofferBucket) || strings.Contains(m1, cofferMediaDir) {
		t.Errorf("m1.content = %q; want the writer's edit kept and the path rewritten", m1)
	}
	if body != "see "+cofferMediaDir+"abc.jpg++++" {
		t.Errorf("notes body = %q; want the writer's last value, not rewritten", body)
	}
	var left int
	writer.QueryRow(`SELECT count(*) FROM chat_messages WHERE content LIKE '%' || ? || '%'`, cofferMediaDir).Scan(&left)
	if left != 0 {
		t.Errorf("%d messages still hold a local path", left)
	}
	// Every committed change was prepared first.
	prepared := map[ref.Place]bool{}
	for _, ch := range j.prepared {
		prepared[ch.Place] = true
	}
	for _, ch := range j.committed {
		if !prepared[ch.Place] {
			t.Errorf("%s committed without being prepared", ch.Place)
		}
	}
}

// TestRewriteSQLiteRefusals: values SQLite would not keep, or rows that cannot be
// found again, are reported and left; the other changes of the same batch are
// written.
func TestRewriteSQLiteRefusals(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "coffer.db")
	writer := createCofferDB(t, path)
	if _, err := writer.Exec(`
CREATE TABLE counters(id INTEGER PRIMARY KEY, n INTEGER);
INSERT INTO counters VALUES(1, 'abc'); -- TEXT: it does not look like a number
CREATE TABLE shadowed(rowid, _rowid_, oid);
INSERT INTO shadowed VALUES('abc', 'b', 'c');
CREATE TABLE nullkey(k TEXT PRIMARY KEY, v TEXT);
INSERT INTO nullkey VALUES(NULL, 'abc');
CREATE TABLE guarded(id TEXT PRIMARY KEY, v TEXT);
INSERT INTO guarded VALUES('g1', 'abc');
CREATE TRIGGER no_change BEFORE UPDATE ON guarded BEGIN SELECT RAISE(ABORT, 'guarded is read-only'); END;
CREATE TABLE paths(path TEXT PRIMARY KEY, n INT);
INSERT INTO paths VALUES('abc', 1);
CREATE VIRTUAL TABLE search USING fts5(body);
INSERT INTO search VALUES('abc');
`); err != nil {
		t.Fatal(err)
	}
	before := sqliteDump(t, writer)
	// "abc" becomes "123": a number to the INTEGER column. m1's path is
	// rewritten as usual.
	edit := func(p ref.Place, old []byte) ([]byte, error) {
		if string(old) == "abc" {
			return []byte("123"), nil
		}
		return replaceEdit(cofferMediaDir, cofferBucket, nil)(p, old)
	}
	c, err := openRewriter(t, "sqlite:"+path).Rewrite(ctx, edit, RewriteOptions{})
	got := map[string]string{}
	for _, u := range unitErrors(t, err) {
		got[u.Place.String()] = u.Err.Error()
	}
	for place, want := range map[string]string{
		"counters[id=1].n":             "would store the new value as integer",
		"shadowed.rowid":               "no primary key",
		"nullkey[k=NULL].v":            "primary key holds NULL",
		"guarded[id=g1].v":             "guarded is read-only",
		"chat_messages[id=m1].content": "",
		"kv[ns=media,k=photo].v":       "",
		"notes[rowid=1].body":          "",
		"conversations[id=c1].title":   "",
		"chat_messages[id=m2].content": "",
	} {
		if want == "" {
			if msg, ok := got[place]; ok {
				t.Errorf("%s refused: %s", place, msg)
			}
			continue
		}
		if !strings.Contains(got[place], want) {
			t.Errorf("%s: error %q, want %q", place, got[place], want)
		}
	}
	if c.Failed != 6 || c.Changed != 3 {
		t.Errorf("counts = %+v; want 6 failed, 3 changed", c)
	}
	if typ := sqliteTypeof(t, writer, `SELECT typeof(n) || ':' || n FROM counters`); typ != "text:abc" {
		t.Errorf("counters.n = %s, want the TEXT abc untouched", typ)
	}
	// Only the three paths changed.
	after := sqliteDump(t, writer)
	if n := strings.Count(after, cofferBucket); n != 3 {
		t.Errorf("%d values hold the bucket URL, want 3:\n%s", n, after)
	}
	beforeLines, afterLines := strings.Split(before, "\n"), strings.Split(after, "\n")
	diff := 0
	for i := range min(len(beforeLines), len(afterLines)) {
		if beforeLines[i] != afterLines[i] {
			diff++
		}
	}
	if diff != 3 || len(beforeLines) != len(afterLines) {
		t.Errorf("%d rows changed, want 3:\n%s\nbefore:\n%s", diff, after, before)
	}
}

// TestRewriteSQLitePrepareError: Prepare failing stops the rewrite; the change it
// refused is not written, nor anything after it.
func TestRewriteSQLitePrepareError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coffer.db")
	writer := createCofferDB(t, path)
	j := journal{failAt: 2}
	c, err := openRewriter(t, "sqlite:"+path).Rewrite(context.Background(), replaceEdit(cofferMediaDir, cofferBucket, nil), j.options(0))
	if !errors.Is(err, errPrepare) || !strings.Contains(err.Error(), "kv[ns=media,k=photo].v") {
		t.Fatalf("err = %v; want the Prepare error naming the second change", err)
	}
	if c.Changed != 1 || len(j.committed) != 1 || j.committed[0].Place.String() != "chat_messages[id=m1].content" {
		t.Errorf("counts %+v, committed %+v", c, j.committed)
	}
	var n int
	writer.QueryRow(`SELECT (SELECT count(*) FROM kv WHERE CAST(v AS TEXT) LIKE '%' || ?1 || '%') + (SELECT count(*) FROM notes WHERE body LIKE '%' || ?1 || '%')`, cofferMediaDir).Scan(&n)
	if n != 2 {
		t.Errorf("%d of kv.v and notes.body still hold the local path, want both", n)
	}
}

// TestRewriteSQLiteRollbackJournal: a database in the rollback-journal mode (a
// reader blocks writers) is read first and written after.
func TestRewriteSQLiteRollbackJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plain.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(DELETE)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(cofferSchema); err != nil {
		t.Fatal(err)
	}
	before := sqliteDump(t, db)
	w := openRewriter(t, "sqlite:"+path)
	var j journal
	c, err := w.Rewrite(context.Background(), replaceEdit(cofferMediaDir, cofferBucket, nil), j.options(0))
	if err != nil || c.Changed != 3 {
		t.Fatalf("counts %+v, err %v", c, err)
	}
	if mid := sqliteDump(t, db); strings.Count(mid, cofferBucket) != 3 {
		t.Errorf("after the rewrite:\n%s", mid)
	}
	if c, err := w.Rewrite(context.Background(), j.rollbackEdit(), RewriteOptions{}); err != nil || c.Changed != 3 {
		t.Fatalf("rollback: %+v, %v", c, err)
	}
	if after := sqliteDump(t, db); after != before {
		t.Errorf("after rollback:\n%s\nwant:\n%s", after, before)
	}
	var mode string
	db.QueryRow("PRAGMA journal_mode").Scan(&mode)
	if mode != "delete" {
		t.Errorf("journal mode is now %q", mode)
	}
}

// TestRewriteSQLitePlacesOddNames: quoted table and column names, a key that
// shadows rowid, keys of every storage class.
func TestRewriteSQLitePlacesOddNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE "my ""table"""("the key" TEXT PRIMARY KEY, "rowid" TEXT, "bo""dy" TEXT);
INSERT INTO "my ""table""" VALUES('k1', 'r', 'x-abc'), ('k,2=', 'r', 'abc');
CREATE TABLE keys(a, b, v TEXT, PRIMARY KEY(a, b)) WITHOUT ROWID;
INSERT INTO keys VALUES(1, 'x', 'abc'), (2.5, x'00ff', 'abc'), ('1', 'x', 'abc');`); err != nil {
		t.Fatal(err)
	}
	var seen []ref.Place
	c, err := openRewriter(t, "sqlite:"+path).Rewrite(context.Background(), replaceEdit("abc", "ABC", &seen), RewriteOptions{})
	if err != nil || c.Changed != 5 {
		t.Fatalf("counts %+v, err %v", c, err)
	}
	items, _ := walkAll(t, openSQLiteSpec(t, "sqlite:"+path, ""))
	checkSawWalk(t, seen, items, "keys[a=1,b=x].a", "keys[a=2.5,b=x'00ff'].a")
	for _, it := range items {
		if bytes.Contains(it.Text, []byte("abc")) {
			t.Errorf("%s still %q", it.Place, it.Text)
		}
	}
	// The integer key 1 and the text key '1' are different rows: both rewritten once.
	var n int
	db.QueryRow(`SELECT count(*) FROM keys WHERE v = 'ABC'`).Scan(&n)
	if n != 3 {
		t.Errorf("%d rows of keys rewritten, want 3", n)
	}
}

// TestRewriteSQLiteCanceled: a canceled context stops the rewrite; changes not
// yet written stay unwritten, and nothing is prepared for them.
func TestRewriteSQLiteCanceled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coffer.db")
	writer := createCofferDB(t, path)
	before := sqliteDump(t, writer)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	edit := func(p ref.Place, old []byte) ([]byte, error) {
		cancel()
		return append(old, '!'), nil
	}
	var j journal
	c, err := openRewriter(t, "sqlite:"+path).Rewrite(ctx, edit, j.options(0))
	if !errors.Is(err, context.Canceled) || c.Units != 1 || c.Changed != 0 || len(j.prepared) != 0 {
		t.Fatalf("counts %+v, prepared %d, err %v", c, len(j.prepared), err)
	}
	if after := sqliteDump(t, writer); after != before {
		t.Errorf("the database changed:\n%s", after)
	}
}

// TestRewriteSQLiteNoRetryAfterPrepareError: once Prepare failed, a unit of the
// same batch that changed under us is not edited or prepared again.
func TestRewriteSQLiteNoRetryAfterPrepareError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coffer.db")
	writer := createCofferDB(t, path)
	calls := 0
	edit := func(p ref.Place, old []byte) ([]byte, error) {
		if p.String() == "chat_messages[id=m1].content" {
			calls++
			if _, err := writer.Exec(`UPDATE chat_messages SET status = 'seen', content = content || ' ' WHERE id = 'm1'`); err != nil {
				return nil, err
			}
		}
		return replaceEdit(cofferMediaDir, cofferBucket, nil)(p, old)
	}
	j := journal{failAt: 2}
	c, err := openRewriter(t, "sqlite:"+path).Rewrite(context.Background(), edit, j.options(0))
	if !errors.Is(err, errPrepare) {
		t.Fatalf("err = %v", err)
	}
	if calls != 1 || len(j.prepared) != 1 || c.Changed != 0 || c.Retried != 0 {
		t.Errorf("Edit called %d times for m1, %d prepared, counts %+v; want no retry", calls, len(j.prepared), c)
	}
	var content string
	writer.QueryRow(`SELECT content FROM chat_messages WHERE id = 'm1'`).Scan(&content)
	if !strings.HasSuffix(content, "] ") || !strings.Contains(content, cofferMediaDir) {
		t.Errorf("m1.content = %q; want the writer's value", content)
	}
}

// TestRewriteSQLiteGeneratedColumns: a generated column is never written
// (SQLite refuses it). One computed from a column the rewrite changes follows
// it, and the rewrite is complete; one computed from what is not rewritten (a
// number) still names the old place and fails alone. In both journal modes:
// without WAL the writes wait until the read is over.
func TestRewriteSQLiteGeneratedColumns(t *testing.T) {
	for _, mode := range []string{"wal", "delete"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "coffer.db")
			db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode("+mode+")")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`CREATE TABLE msgs(id TEXT PRIMARY KEY, content TEXT, media_id INTEGER,
	path TEXT GENERATED ALWAYS AS (json_extract(content, '$.path')) STORED,
	vpath TEXT GENERATED ALWAYS AS (json_extract(content, '$.path')) VIRTUAL,
	file TEXT GENERATED ALWAYS AS ('` + cofferMediaDir + `' || media_id || '.jpg') VIRTUAL);
INSERT INTO msgs(id, content, media_id) VALUES
	('m1', '{"path":"` + cofferMediaDir + `a.jpg"}', NULL),
	('m2', '{"path":"` + cofferMediaDir + `b.jpg"}', 7),
	('m3', '{"text":"nothing to change"}', NULL);`); err != nil {
				t.Fatal(err)
			}
			var seen []ref.Place
			var j journal
			c, err := openRewriter(t, "sqlite:"+path).Rewrite(ctx, replaceEdit(cofferMediaDir, cofferBucket, &seen), j.options(0))
			// Only m2.file is left: it is computed from a number.
			units := unitErrors(t, err)
			if len(units) != 1 || units[0].Place.String() != "msgs[id=m2].file" || units[0].Err.Error() != generatedRefusal {
				t.Fatalf("Rewrite: %v", err)
			}
			if c.Changed != 2 || c.Failed != 1 || c.Conflicts+c.Retried+c.Gone != 0 {
				t.Errorf("counts = %+v", c)
			}
			var committed []string
			for _, ch := range j.committed {
				committed = append(committed, ch.Place.String())
			}
			if want := []string{"msgs[id=m1].content", "msgs[id=m2].content"}; !reflect.DeepEqual(committed, want) {
				t.Errorf("committed %q, want %q", committed, want)
			}
			// Edit saw every text value, and the generated ones it wanted
			// changed again once the contents were written.
			var saw []string
			for _, p := range seen {
				saw = append(saw, p.String())
			}
			want := []string{
				"msgs[id=m1].id", "msgs[id=m1].content", "msgs[id=m1].path", "msgs[id=m1].vpath",
				"msgs[id=m2].id", "msgs[id=m2].content", "msgs[id=m2].path", "msgs[id=m2].vpath", "msgs[id=m2].file",
				"msgs[id=m3].id", "msgs[id=m3].content",
				"msgs[id=m1].path", "msgs[id=m1].vpath", "msgs[id=m2].path", "msgs[id=m2].vpath", "msgs[id=m2].file",
			}
			if !reflect.DeepEqual(saw, want) {
				t.Errorf("Edit saw\n%s\nwant\n%s", strings.Join(saw, "\n"), strings.Join(want, "\n"))
			}
			var p1, v2, f2 string
			if err := db.QueryRow(`SELECT (SELECT path FROM msgs WHERE id = 'm1'), (SELECT vpath FROM msgs WHERE id = 'm2'), (SELECT file FROM msgs WHERE id = 'm2')`).Scan(&p1, &v2, &f2); err != nil {
				t.Fatal(err)
			}
			if p1 != cofferBucket+"a.jpg" || v2 != cofferBucket+"b.jpg" || f2 != cofferMediaDir+"7.jpg" {
				t.Errorf("after the rewrite: m1.path %q, m2.vpath %q, m2.file %q", p1, v2, f2)
			}
		})
	}
}
