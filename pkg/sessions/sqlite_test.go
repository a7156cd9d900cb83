package sessions

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
)

const cofferAttachment = `{"type":"attachment","path":"/home/u/.coffer/channel-media/4f1c9a0e2b7d4c3e9a8b6d5c4e3f2a1b.jpg","mime":"image/jpeg","filename":"photo.jpg"}`

// cofferSchema is coffer's session store (formats.md, B) plus two tables that
// exercise keys: one without a primary key, one WITHOUT ROWID with a composite key.
const cofferSchema = `
CREATE TABLE conversations(id TEXT PRIMARY KEY, agent_key TEXT, title TEXT, model_id TEXT, created_at DATETIME, updated_at DATETIME);
CREATE TABLE chat_messages(id TEXT PRIMARY KEY, conversation_id TEXT, seq INTEGER, role TEXT,
	content TEXT, status TEXT, model_id TEXT, prompt_tokens INT, completion_tokens INT, created_at DATETIME);
CREATE TABLE notes(body, n);
CREATE TABLE kv(ns TEXT, k TEXT, v BLOB, PRIMARY KEY(ns, k)) WITHOUT ROWID;
INSERT INTO conversations VALUES('c1', 'default', 'Cat photo', 'model-x', '2026-07-01 10:00:00', '2026-07-01 10:00:05');
INSERT INTO chat_messages VALUES('m1', 'c1', 1, 'user',
	'[{"type":"text","text":"What is this?"},` + cofferAttachment + `]', 'done', NULL, NULL, NULL, '2026-07-01 10:00:00');
INSERT INTO chat_messages VALUES('m2', 'c1', 2, 'assistant',
	'[{"type":"text","text":"A cat."}]', 'done', 'model-x', 10, 3, '2026-07-01 10:00:05');
INSERT INTO chat_messages(id, conversation_id, seq, role) VALUES('m3', 'c1', 3, 'user');
INSERT INTO notes VALUES('see /home/u/.coffer/channel-media/abc.jpg', 1);
INSERT INTO notes VALUES(42, 'text in a column declared nothing');
INSERT INTO notes VALUES(x'00ff', NULL);
INSERT INTO kv VALUES('media', 'photo', CAST('{"path":"/home/u/.coffer/channel-media/k.png"}' AS BLOB));
`

// createCofferDB creates a coffer-shaped database in WAL mode, with automatic
// checkpoints off so that its content stays in the -wal file, and returns the
// writer, which stays open (like the live daemon) until the test ends.
func createCofferDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	if _, err := db.Exec(cofferSchema); err != nil {
		t.Fatal(err)
	}
	return db
}

func openSQLiteSpec(t *testing.T, spec string, query string) Source {
	t.Helper()
	src, err := Open(context.Background(), spec, Options{Query: query})
	if err != nil {
		t.Fatalf("Open(%q): %v", spec, err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func findText(items []walked, table, key, column string) (string, bool) {
	for _, it := range items {
		if it.Place.Table == table && it.Place.Key == key && it.Place.Column == column {
			return string(it.Text), true
		}
	}
	return "", false
}

// TestSQLiteBesideLiveWriter reads a WAL database while the writer holds an open
// write transaction: the read must not block, must not see the uncommitted row,
// and must leave the database and its WAL byte for byte as they were.
func TestSQLiteBesideLiveWriter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "coffer.db")
	writer := createCofferDB(t, path)

	wconn, err := writer.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer wconn.Close()
	if _, err := wconn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := wconn.ExecContext(ctx, `INSERT INTO chat_messages(id, conversation_id, seq, role, content)
		VALUES('m-uncommitted', 'c1', 4, 'user', 'not yet')`); err != nil {
		t.Fatal(err)
	}
	defer wconn.ExecContext(ctx, "ROLLBACK")

	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the test database keeps no content in its WAL: %v", err)
	}
	dbSum, walSum := fileSum(t, path), fileSum(t, path+"-wal")

	spec := "sqlite:" + path
	src := openSQLiteSpec(t, spec, "")
	items, c := walkAll(t, src)

	if fileSum(t, path) != dbSum || fileSum(t, path+"-wal") != walSum {
		t.Error("reading modified the database or its WAL")
	}
	if c != (Counts{Rows: 8}) {
		t.Errorf("counts = %+v, want 8 rows", c)
	}
	for _, it := range items {
		if it.Err != nil || it.Open != nil || it.Text == nil {
			t.Errorf("unexpected item %+v", it.Item)
		}
		if it.Place.Source != spec || it.Place.Offset != -1 || it.Place.Document != "" {
			t.Errorf("place = %+v", it.Place)
		}
		if strings.Contains(string(it.Text), "not yet") {
			t.Error("the walk saw an uncommitted row")
		}
	}
	if got, _ := findText(items, "chat_messages", "id=m1", "content"); !strings.Contains(got, cofferAttachment) {
		t.Errorf("chat_messages[id=m1].content = %q, want the attachment block", got)
	}
	want := map[[3]string]string{
		{"conversations", "id=c1", "title"}:      "Cat photo",
		{"conversations", "id=c1", "created_at"}: "2026-07-01 10:00:00", // TEXT in a DATETIME column stays text
		{"chat_messages", "id=m1", "id"}:         "m1",
		{"notes", "rowid=1", "body"}:             "see /home/u/.coffer/channel-media/abc.jpg",
		{"notes", "rowid=2", "n"}:                "text in a column declared nothing",
		{"notes", "rowid=3", "body"}:             "\x00\xff",
		{"kv", "ns=media,k=photo", "v"}:          `{"path":"/home/u/.coffer/channel-media/k.png"}`,
		// INTEGER values as their decimal text, whatever the column's declared type.
		{"chat_messages", "id=m2", "prompt_tokens"}: "10",
		{"chat_messages", "id=m1", "seq"}:           "1",
		{"notes", "rowid=1", "n"}:                   "1",
		{"notes", "rowid=2", "body"}:                "42",
	}
	for k, w := range want {
		if got, ok := findText(items, k[0], k[1], k[2]); !ok || got != w {
			t.Errorf("%s[%s].%s = %q (found %v), want %q", k[0], k[1], k[2], got, ok, w)
		}
	}
	// NULLs and the uncommitted row are not items.
	for _, k := range [][3]string{
		{"chat_messages", "id=m1", "prompt_tokens"},
		{"chat_messages", "id=m3", "content"},
		{"notes", "rowid=3", "n"},
		{"chat_messages", "id=m-uncommitted", "content"},
	} {
		if got, ok := findText(items, k[0], k[1], k[2]); ok {
			t.Errorf("%s[%s].%s = %q: not a value", k[0], k[1], k[2], got)
		}
	}
	// Tables in name order, rows in key order.
	var order []string
	for _, it := range items {
		if s := it.Place.Table + "[" + it.Place.Key + "]"; len(order) == 0 || order[len(order)-1] != s {
			order = append(order, s)
		}
	}
	wantOrder := []string{"chat_messages[id=m1]", "chat_messages[id=m2]", "chat_messages[id=m3]",
		"conversations[id=c1]", "kv[ns=media,k=photo]", "notes[rowid=1]", "notes[rowid=2]", "notes[rowid=3]"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("order = %q, want %q", order, wantOrder)
	}
	if p := (ref.Place{Table: "chat_messages", Key: "id=m1", Column: "content"}).String(); p != "chat_messages[id=m1].content" {
		t.Errorf("place renders as %q", p)
	}

	// The source can be walked again, and sees what was committed meanwhile.
	if _, err := wconn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	items, c = walkAll(t, src)
	if got, ok := findText(items, "chat_messages", "id=m-uncommitted", "content"); !ok || got != "not yet" || c.Rows != 9 {
		t.Errorf("second walk: committed row %q (found %v), counts %+v", got, ok, c)
	}
}

func TestSQLiteQuery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coffer.db")
	createCofferDB(t, path)
	spec := "sqlite:" + path
	src := openSQLiteSpec(t, spec, "SELECT seq, id, content, prompt_tokens, created_at FROM chat_messages WHERE content IS NOT NULL ORDER BY seq")
	items, c := walkAll(t, src)
	if c != (Counts{Rows: 2}) {
		t.Errorf("counts = %+v, want 2 rows", c)
	}
	var got []string
	for _, it := range items {
		if it.Place.Table != "query" || it.Place.Source != spec || it.Place.Offset != -1 {
			t.Errorf("place = %+v", it.Place)
		}
		got = append(got, it.Place.Key+"."+it.Place.Column)
	}
	// seq and prompt_tokens are integers, read as their decimal text (m1 has
	// no prompt_tokens); created_at, declared DATETIME, is converted by the
	// driver to a time, which is not read.
	want := []string{"1.seq", "1.id", "1.content", "2.seq", "2.id", "2.content", "2.prompt_tokens"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items = %q, want %q", got, want)
	}
	if text, _ := findText(items, "query", "1", "content"); !strings.Contains(text, cofferAttachment) {
		t.Errorf("content = %q", text)
	}
}

func TestSQLiteQueryCannotWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coffer.db")
	writer := createCofferDB(t, path)
	for _, q := range []string{
		"DELETE FROM chat_messages RETURNING id",
		"INSERT INTO notes VALUES('x', 1) RETURNING body",
		"SELECT 1; DROP TABLE notes",
	} {
		src := openSQLiteSpec(t, "sqlite:"+path, q)
		_, err := src.Walk(context.Background(), func(Item) error { return nil })
		if q != "SELECT 1; DROP TABLE notes" && err == nil {
			t.Errorf("query %q: no error", q)
		}
	}
	var n int
	if err := writer.QueryRow("SELECT (SELECT count(*) FROM chat_messages) + (SELECT count(*) FROM notes)").Scan(&n); err != nil || n != 6 {
		t.Fatalf("rows after write attempts = %d, %v; want 6", n, err)
	}
}

func TestSQLiteBadQuery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coffer.db")
	createCofferDB(t, path)
	src := openSQLiteSpec(t, "sqlite:"+path, "SELECT nope FROM nowhere")
	if _, err := src.Walk(context.Background(), func(Item) error { return nil }); err == nil || !strings.Contains(err.Error(), "session query") {
		t.Fatalf("err = %v", err)
	}
}

func TestSQLiteStopsOnCallbackError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coffer.db")
	createCofferDB(t, path)
	src := openSQLiteSpec(t, "sqlite:"+path, "")
	stop := errors.New("stop")
	n := 0
	_, err := src.Walk(context.Background(), func(Item) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("err = %v after %d items", err, n)
	}
	// The connection was released: another walk works.
	if _, c := walkAll(t, src); c.Rows != 8 {
		t.Fatalf("second walk counts = %+v", c)
	}
}

// TestSQLiteOddNames covers quoting and a relative path with characters that are
// special in a URI.
func TestSQLiteOddNames(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	name := "odd #1?.db"
	// A plain file name would lose everything after "?": create it through a URI.
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, name))}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE "my ""table"""("the key" TEXT PRIMARY KEY, "rowid" TEXT, body TEXT);
		INSERT INTO "my ""table""" VALUES('k1', 'r', 'hello');
		CREATE TABLE shadowed(rowid, _rowid_, oid);
		INSERT INTO shadowed VALUES('a', 'b', 'c');`); err != nil {
		t.Fatal(err)
	}
	items, c := walkAll(t, openSQLiteSpec(t, "sqlite:"+name, ""))
	if c.Rows != 2 {
		t.Errorf("counts = %+v", c)
	}
	if got, ok := findText(items, `my "table"`, "the key=k1", "body"); !ok || got != "hello" {
		t.Errorf("body = %q (%v); items %+v", got, ok, items)
	}
	// Every rowid alias is a column: no key, but the values are still read.
	if got, ok := findText(items, "shadowed", "", "oid"); !ok || got != "c" {
		t.Errorf("shadowed.oid = %q (%v)", got, ok)
	}
}

// TestSQLiteNumbers: values stored as INTEGER or REAL are Items with their
// decimal text, whatever the column's declared type, as coffer's media ids
// are (a media_id 1234567890 names 1234567890.jpg): a REAL with an integer
// value in its digits, as JavaScript prints it, and followed by them when
// JavaScript prints an exponent. The rewriter, which does not write numbers,
// does not offer them.
func TestSQLiteNumbers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "media.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE media(id TEXT PRIMARY KEY, media_id INTEGER, ratio REAL, size NUMERIC, note);
INSERT INTO media VALUES('a', 1234567890, 1234567890.0, 0.5, 9007199254740993);
INSERT INTO media VALUES('b', -7, 1e22, 2.0, '1234567890.jpg');
INSERT INTO media VALUES('c', NULL, -1.23456789e9, 12345678.9e2, 1.23456789e9);`); err != nil {
		t.Fatal(err)
	}
	items, _ := walkAll(t, openSQLiteSpec(t, "sqlite:"+path, ""))
	want := []string{
		"media[id=a].id=a", "media[id=a].media_id=1234567890", "media[id=a].ratio=1234567890",
		"media[id=a].size=0.5", "media[id=a].note=9007199254740993",
		"media[id=b].id=b", "media[id=b].media_id=-7", "media[id=b].ratio=1e+22 10000000000000000000000",
		"media[id=b].size=2", "media[id=b].note=1234567890.jpg",
		// A column declared nothing keeps a REAL as it is: still its digits.
		"media[id=c].id=c", "media[id=c].ratio=-1234567890", "media[id=c].size=1234567890", "media[id=c].note=1234567890",
	}
	var got []string
	for _, it := range items {
		got = append(got, it.Place.String()+"="+string(it.Text))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var seen []ref.Place
	if _, err := openRewriter(t, "sqlite:"+path).Rewrite(context.Background(), replaceEdit("nothing", "x", &seen), RewriteOptions{}); err != nil {
		t.Fatal(err)
	}
	checkSawWalk(t, seen, items, "media[id=a].media_id", "media[id=a].ratio", "media[id=a].size", "media[id=a].note",
		"media[id=b].media_id", "media[id=b].ratio", "media[id=b].size", "media[id=c].ratio", "media[id=c].size", "media[id=c].note")
}

// TestSQLiteItemValue: a value of a type the reader does not know is an error,
// never skipped.
func TestSQLiteItemValue(t *testing.T) {
	var arena valueArena
	for _, v := range []any{true, struct{}{}, int32(1)} {
		if _, _, err := arena.itemValue(v); err == nil {
			t.Errorf("itemValue(%T): no error", v)
		}
	}
	if text, ok, err := arena.itemValue(nil); ok || text != nil || err != nil {
		t.Errorf("itemValue(nil) = %q, %v, %v", text, ok, err)
	}
}

// TestSQLiteGeneratedColumns: a generated column, STORED or VIRTUAL, is read
// like any other: it may be the only place a row spells a name, computed
// from a number or from parts of a document.
func TestSQLiteGeneratedColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "media.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE media(id TEXT PRIMARY KEY, seq INTEGER, content TEXT,
	thumb TEXT GENERATED ALWAYS AS ('photo-' || (seq * 1000 + 7) || '.png') STORED,
	file TEXT GENERATED ALWAYS AS (json_extract(content, '$.dir') || '/' || json_extract(content, '$.name') || '.jpg') VIRTUAL,
	note TEXT);
CREATE TABLE plain(n INTEGER, twice INTEGER AS (n * 2));
INSERT INTO media(id, seq, content, note) VALUES('a', 42, '{"dir":"/home/u/.coffer/channel-media","name":"holiday_photo"}', NULL);
INSERT INTO plain(n) VALUES(617283945);`); err != nil {
		t.Fatal(err)
	}
	items, c := walkAll(t, openSQLiteSpec(t, "sqlite:"+path, ""))
	if c.Rows != 2 {
		t.Errorf("counts = %+v", c)
	}
	var got []string
	for _, it := range items {
		if it.Err != nil {
			t.Errorf("%s: %v", it.Place, it.Err)
		}
		got = append(got, it.Place.String()+"="+string(it.Text))
	}
	want := []string{
		"media[id=a].id=a",
		"media[id=a].seq=42",
		`media[id=a].content={"dir":"/home/u/.coffer/channel-media","name":"holiday_photo"}`,
		"media[id=a].thumb=photo-42007.png",                                // STORED
		"media[id=a].file=/home/u/.coffer/channel-media/holiday_photo.jpg", // VIRTUAL
		"plain[rowid=1].n=617283945",
		"plain[rowid=1].twice=1234567890", // VIRTUAL is the default
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
