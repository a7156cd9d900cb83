package sessions

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest"
)

// pgFixture is a schema of its own, with agent-runs' messages table (formats.md,
// C), a table with a composite key and a table without a primary key. It is
// dropped when the test ends.
type pgFixture struct {
	url    string
	schema string
	admin  *pgx.Conn // read-write connection for setting up and changing data
}

const agentRunsAttachment = `{"attachments": [{"mime": "image/png", "path": "agent-inputs/u/t/uploads/f.png", "type": "binary", "bucket": "b"}]}`

func newPGFixture(t *testing.T) *pgFixture {
	t.Helper()
	return newPGFixtureAt(t, sessionstest.Postgres(t))
}

// newPGFixtureDB is the fixture in a database of its own, for a test that
// changes what the whole database holds (a foreign table, an extension's
// table, a table rewritten while read), so that no other test's walk of the
// shared database sees it.
func newPGFixtureDB(t *testing.T) *pgFixture {
	t.Helper()
	return newPGFixtureAt(t, sessionstest.PostgresDatabase(t, "mediactl_sessions"))
}

func newPGFixtureAt(t *testing.T, u string) *pgFixture {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	f := &pgFixture{url: u, schema: "mediactl_test_" + hex.EncodeToString(rnd[:]), admin: admin}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP SCHEMA "+f.schema+" CASCADE")
		admin.Close(context.Background())
	})
	s := f.schema
	f.exec(t, `CREATE SCHEMA `+s+`;
CREATE TABLE `+s+`.messages(id serial PRIMARY KEY, thread_id uuid NOT NULL, role text, content text, metadata jsonb, created_at timestamptz DEFAULT now());
INSERT INTO `+s+`.messages(thread_id, role, content, metadata) VALUES
	('00000000-0000-0000-0000-000000000001', 'user', 'What is in f.png?', '`+agentRunsAttachment+`'),
	('00000000-0000-0000-0000-000000000001', 'assistant', 'A chart.', NULL),
	('00000000-0000-0000-0000-000000000001', 'user', NULL, NULL);
CREATE TABLE `+s+`.files(owner int, name varchar(200), tags text[], note char(4), size bigint, PRIMARY KEY (owner, name));
INSERT INTO `+s+`.files VALUES (7, 'f.png', ARRAY['agent-inputs/u/t/uploads/f.png', 'x'], 'abcd', 10);
CREATE TABLE `+s+`.loose(body text, n int);
INSERT INTO `+s+`.loose VALUES ('see s3://b/agent-inputs/u/t/uploads/g.png', 1), ('second', 2);
CREATE TABLE `+s+`.numbers(id int PRIMARY KEY, n int);
INSERT INTO `+s+`.numbers VALUES (1, 1);`)
	return f
}

func (f *pgFixture) open(t *testing.T, spec, query string) Source {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := Open(ctx, spec, Options{Query: query})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// mine keeps the items of the fixture's schema: the database may hold other
// tests' tables.
func (f *pgFixture) mine(items []walked) []walked {
	var out []walked
	for _, it := range items {
		if strings.HasPrefix(it.Place.Table, f.schema+".") {
			out = append(out, it)
		}
	}
	return out
}

func TestPostgresTables(t *testing.T) {
	f := newPGFixture(t)
	src := f.open(t, f.url, "")
	if src.String() != f.url {
		t.Errorf("String() = %q, want %q", src.String(), f.url)
	}
	all, c := walkAll(t, src)
	items := f.mine(all)
	s := f.schema
	var got []string
	for _, it := range items {
		if it.Err != nil || it.Text == nil || it.Open != nil {
			t.Errorf("unexpected item %+v", it.Item)
		}
		if it.Place.Source != f.url || it.Place.Offset != -1 {
			t.Errorf("place = %+v", it.Place)
		}
		got = append(got, strings.TrimPrefix(it.Place.Table, s+".")+"["+it.Place.Key+"]."+it.Place.Column+"="+string(it.Text))
	}
	// Numbers as their decimal text, the text[] as JSON; uuid and timestamptz
	// (messages.thread_id, created_at) cannot hold a name and are not read.
	want := []string{
		"files[owner=7,name=f.png].owner=7",
		"files[owner=7,name=f.png].name=f.png",
		`files[owner=7,name=f.png].tags=["agent-inputs/u/t/uploads/f.png","x"]`,
		"files[owner=7,name=f.png].note=abcd",
		"files[owner=7,name=f.png].size=10",
		"loose[ctid=(0,1)].body=see s3://b/agent-inputs/u/t/uploads/g.png",
		"loose[ctid=(0,1)].n=1",
		"loose[ctid=(0,2)].body=second",
		"loose[ctid=(0,2)].n=2",
		"messages[id=1].id=1",
		"messages[id=1].role=user",
		"messages[id=1].content=What is in f.png?",
		"messages[id=1].metadata=" + agentRunsAttachment,
		"messages[id=2].id=2",
		"messages[id=2].role=assistant",
		"messages[id=2].content=A chart.",
		"messages[id=3].id=3",
		"messages[id=3].role=user",
		"numbers[id=1].id=1",
		"numbers[id=1].n=1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// files 1 + loose 2 + messages 3 + numbers 1.
	if c.Rows < 7 {
		t.Errorf("counts = %+v, want at least 7 rows", c)
	}
}

// TestPostgresSnapshot changes the data while a walk is under way: the walk reads
// one snapshot and sees none of it.
func TestPostgresSnapshot(t *testing.T) {
	f := newPGFixture(t)
	src := f.open(t, f.url, "")
	changed := false
	var got []string
	_, err := src.Walk(context.Background(), eachValue(func(it Item, text []byte) error {
		if !strings.HasPrefix(it.Place.Table, f.schema+".") {
			return nil
		}
		if !changed {
			changed = true
			f.exec(t, "INSERT INTO "+f.schema+".messages(thread_id, role, content) VALUES ('00000000-0000-0000-0000-000000000002', 'user', 'late'); UPDATE "+f.schema+".loose SET body = 'changed'")
		}
		got = append(got, string(text))
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s == "late" || s == "changed" {
			t.Errorf("the walk saw a change made after it started: %q", s)
		}
	}
}

func TestPostgresQuery(t *testing.T) {
	f := newPGFixture(t)
	q := "SELECT id, content, metadata, created_at, convert_to(content, 'UTF8') AS raw, 42 AS n FROM " + f.schema + ".messages ORDER BY id"
	src := f.open(t, f.url, q)
	items, c := walkAll(t, src)
	if c != (Counts{Rows: 3}) {
		t.Errorf("counts = %+v, want 3 rows", c)
	}
	var got []string
	for _, it := range items {
		if it.Place.Table != "query" {
			t.Errorf("place = %+v", it.Place)
		}
		got = append(got, it.Place.Key+"."+it.Place.Column+"="+string(it.Text))
	}
	// id and n are numbers, read as their text; created_at cannot hold a name
	// and is not read; raw is bytea, decoded.
	want := []string{
		"1.id=1",
		"1.content=What is in f.png?",
		"1.metadata=" + agentRunsAttachment,
		"1.raw=What is in f.png?",
		"1.n=42",
		"2.id=2",
		"2.content=A chart.",
		"2.raw=A chart.",
		"2.n=42",
		"3.id=3",
		"3.n=42",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPostgresReadOnly(t *testing.T) {
	f := newPGFixture(t)
	for _, q := range []string{
		"DELETE FROM " + f.schema + ".messages RETURNING content",
		"UPDATE " + f.schema + ".loose SET body = 'x' RETURNING body",
		"SELECT 1; DROP TABLE " + f.schema + ".loose",
	} {
		src := f.open(t, f.url, q)
		if _, err := src.Walk(context.Background(), func(Item) error { return nil }); err == nil {
			t.Errorf("query %q: no error", q)
		}
	}
	var n int
	if err := f.admin.QueryRow(context.Background(), "SELECT (SELECT count(*) FROM "+f.schema+".messages) + (SELECT count(*) FROM "+f.schema+".loose WHERE body <> 'x')").Scan(&n); err != nil || n != 5 {
		t.Fatalf("rows after write attempts = %d, %v; want 5", n, err)
	}
}

func TestPostgresPasswordHidden(t *testing.T) {
	f := newPGFixture(t)
	u, err := url.Parse(f.url)
	if err != nil {
		t.Fatal(err)
	}
	if _, has := u.User.Password(); has {
		t.Skip("the test URL carries its own password")
	}
	// The test server trusts local connections: the password is ignored.
	u.User = url.UserPassword(u.User.Username(), "hunter2")
	src := f.open(t, u.String(), "")
	if strings.Contains(src.String(), "hunter2") {
		t.Errorf("String() = %q shows the password", src.String())
	}
	items, _ := walkAll(t, src)
	for _, it := range items {
		if strings.Contains(it.Place.Source, "hunter2") {
			t.Fatalf("Place.Source = %q shows the password", it.Place.Source)
		}
	}
}

// TestPostgresNoPrivilege reads as a role that may read only one of the fixture's
// tables: the others are reported as items with Err, and the walk goes on.
func TestPostgresNoPrivilege(t *testing.T) {
	f := newPGFixture(t)
	role := f.schema + "_reader"
	if _, err := f.admin.Exec(context.Background(), "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Skipf("cannot create a role on the test server: %v", err)
	}
	t.Cleanup(func() {
		f.admin.Exec(context.Background(), "DROP OWNED BY "+role)
		f.admin.Exec(context.Background(), "DROP ROLE "+role)
	})
	f.exec(t, "GRANT USAGE ON SCHEMA "+f.schema+" TO "+role+"; GRANT SELECT ON "+f.schema+".messages TO "+role)
	u, err := url.Parse(f.url)
	if err != nil {
		t.Fatal(err)
	}
	if _, has := u.User.Password(); has {
		t.Skip("the test server needs passwords")
	}
	u.User = url.User(role)
	src := f.open(t, u.String(), "")
	all, _ := walkAll(t, src)
	var failed, read []string
	for _, it := range f.mine(all) {
		name := strings.TrimPrefix(it.Place.Table, f.schema+".")
		if it.Err != nil {
			failed = append(failed, name)
			if it.Place.Key != "" || it.Place.Column != "" {
				t.Errorf("error place = %+v, want the table", it.Place)
			}
		} else if len(read) == 0 || read[len(read)-1] != name {
			read = append(read, name)
		}
	}
	if !reflect.DeepEqual(failed, []string{"files", "loose", "numbers"}) || !reflect.DeepEqual(read, []string{"messages"}) {
		t.Errorf("failed %q, read %q; want failed [files loose numbers], read [messages]", failed, read)
	}
}

func TestPostgresPublicSchemaAndPartitions(t *testing.T) {
	f := newPGFixture(t)
	// A table in public is named without its schema; a partitioned table is read
	// once, as a whole.
	pub := f.schema + "_pub"
	f.exec(t, "CREATE TABLE public."+pub+"(k text PRIMARY KEY, v jsonb)")
	t.Cleanup(func() { f.admin.Exec(context.Background(), "DROP TABLE IF EXISTS public."+pub) })
	f.exec(t, `INSERT INTO public.`+pub+` VALUES ('a', '{"x": 1}');
CREATE TABLE `+f.schema+`.events(at date, body text) PARTITION BY RANGE (at);
CREATE TABLE `+f.schema+`.events_2026 PARTITION OF `+f.schema+`.events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
INSERT INTO `+f.schema+`.events VALUES ('2026-07-01', 'partitioned row');`)
	all, _ := walkAll(t, f.open(t, f.url, ""))
	var pubSeen, events []string
	for _, it := range all {
		switch {
		case it.Place.Table == pub:
			pubSeen = append(pubSeen, it.Place.Key+"."+it.Place.Column+"="+string(it.Text))
		case strings.HasPrefix(it.Place.Table, f.schema+".events"):
			events = append(events, it.Place.Table+"."+it.Place.Column+"="+string(it.Text))
			if !strings.HasPrefix(it.Place.Key, "tableoid="+f.schema+".events_2026,ctid=(") {
				t.Errorf("partitioned key = %q", it.Place.Key)
			}
		}
	}
	if !reflect.DeepEqual(pubSeen, []string{"k=a.k=a", `k=a.v={"x": 1}`}) {
		t.Errorf("public table items = %q", pubSeen)
	}
	if !reflect.DeepEqual(events, []string{f.schema + ".events.body=partitioned row"}) {
		t.Errorf("partitioned items = %q", events)
	}
}

func TestPostgresStopsOnCallbackError(t *testing.T) {
	f := newPGFixture(t)
	src := f.open(t, f.url, "")
	stop := errors.New("stop")
	if _, err := src.Walk(context.Background(), func(Item) error { return stop }); err != stop {
		t.Fatalf("err = %v, want the callback's error", err)
	}
	// The transaction was ended: the connection serves another walk.
	if items, _ := walkAll(t, src); len(f.mine(items)) == 0 {
		t.Fatal("second walk read nothing")
	}
}

// Blob names as the runtimes write them: forge's <sha256>.<ext> under a work
// directory with a space, quotes and a backslash (which an array literal would
// escape), coffer's uuid4().hex plus the user's own suffix, with a space or
// non-ASCII.
const (
	pgForgeName  = `/home/u/My "Agent" \ Co/.forge/files/inbound/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png`
	pgCofferName = "/home/u/.coffer/channel-media/b0f2c6d1e4a94d0fa3c1e2d3f4a5b6c7.第二版"
	pgSpaceName  = "/home/u/.coffer/channel-media/4f1c9a0e2b7d4c3e9a8b6d5c4e3f2a1b.final copy"
	pgEnumLabel  = "4f1c9a0e2b7d4c3e9a8b6d5c4e3f2a1b.jpg"
	pgByteaDoc   = `{"attachments": [{"path": "/home/u/.coffer/channel-media/0a1b2c3d4e5f60718293a4b5c6d7e8f9.jpg"}]}`
)

// jsonStrings decodes a JSON text and returns every string in it (member
// names too) and every number, as written.
func jsonStrings(t *testing.T, b []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %q: %v", b, err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case json.Number:
			out = append(out, v.String())
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// pgKindsFixture adds to the fixture's schema a table with a column of every
// kind of value Walk reads beyond text and json (arrays, composite types and a
// domain over one, bytea, numbers, an enum) and of kinds it does not read, a
// materialized view, and one that was never populated.
func pgKindsFixture(t *testing.T) *pgFixture {
	f := newPGFixture(t)
	s := f.schema
	f.exec(t, `CREATE TYPE `+s+`.attachment AS (path text, mime text, size int);
CREATE DOMAIN `+s+`.checked_attachment AS `+s+`.attachment CHECK ((VALUE).path IS NOT NULL);
CREATE TYPE `+s+`.media AS ENUM ('`+pgEnumLabel+`');
CREATE DOMAIN `+s+`.media_id AS int8;
CREATE DOMAIN `+s+`.document AS bytea;
CREATE TYPE `+s+`.textspan AS RANGE (subtype = text);
CREATE TABLE `+s+`.kinds(id int PRIMARY KEY, paths text[], ids int8[], att `+s+`.attachment, atts `+s+`.attachment[],
	datt `+s+`.checked_attachment, doc bytea, ddoc `+s+`.document, media_id int8, small int2, n4 int4, num numeric, fl float8, dom `+s+`.media_id,
	label `+s+`.media, span `+s+`.textspan, flag bool, at timestamptz, uid uuid, stamps timestamptz[], spot point);
CREATE MATERIALIZED VIEW `+s+`.recent AS SELECT id, content, metadata FROM `+s+`.messages WHERE metadata IS NOT NULL;
CREATE MATERIALIZED VIEW `+s+`.unpopulated AS SELECT content FROM `+s+`.messages WITH NO DATA;`)
	f.exec(t, `INSERT INTO `+s+`.kinds VALUES (1, $1::text[], '{1234567890,42}',
	ROW($2::text, 'text/plain', 7), ARRAY[ROW($3::text, 'image/png', 1)::`+s+`.attachment, ROW($2::text, NULL, 2)::`+s+`.attachment],
	ROW($3::text, 'image/png', 3), convert_to($4::text, 'UTF8'), '\x00ff'::bytea, 1234567890, 123, 2147483647, 9876543210.5, 1234567890, 555,
	'`+pgEnumLabel+`', `+s+`.textspan('`+pgEnumLabel+`', 'zzz'), true, now(), '00000000-0000-0000-0000-000000000001', ARRAY[now()], point(1, 2))`,
		[]string{pgForgeName, "x"}, pgSpaceName, pgCofferName, pgByteaDoc)
	return f
}

func (f *pgFixture) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := f.admin.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestPostgresEveryKindOfValue: every value in which a runtime may have written
// a blob name is an Item at its place, in a form that yields the name exactly:
// arrays and composite values as JSON, bytea raw, numbers and an enum as their
// text, materialized views like tables. Types that cannot hold a name are not
// read, nor a materialized view that holds no rows; nothing is an error.
func TestPostgresEveryKindOfValue(t *testing.T) {
	f := pgKindsFixture(t)
	s := f.schema
	all, _ := walkAll(t, f.open(t, f.url, ""))
	kinds := map[string][]byte{}
	var kindCols []string
	var recent []string
	for _, it := range f.mine(all) {
		if it.Err != nil {
			t.Errorf("%s: %v", it.Place, it.Err)
			continue
		}
		switch it.Place.Table {
		case s + ".kinds":
			if it.Place.Key != "id=1" {
				t.Errorf("key of %s = %q, want id=1", it.Place, it.Place.Key)
			}
			kinds[it.Place.Column] = it.Text
			kindCols = append(kindCols, it.Place.Column)
		case s + ".recent":
			recent = append(recent, it.Place.Key+"."+it.Place.Column+"="+string(it.Text))
		case s + ".unpopulated":
			t.Errorf("an unpopulated materialized view was read: %s", it.Place)
		}
	}
	if want := []string{"id", "paths", "ids", "att", "atts", "datt", "doc", "ddoc", "media_id", "small", "n4", "num", "fl", "dom", "label", "span"}; !reflect.DeepEqual(kindCols, want) {
		t.Errorf("kinds columns read %q, want %q (bool, timestamptz, uuid, timestamptz[] and point are not)", kindCols, want)
	}
	// JSON values decode to the very strings the runtime wrote.
	for col, names := range map[string][]string{
		"paths": {pgForgeName, "x"},
		"ids":   {"1234567890", "42"},
		"att":   {"path", pgSpaceName, "text/plain", "7"},
		"atts":  {pgCofferName, "image/png", pgSpaceName},
		"datt":  {pgCofferName},
	} {
		got := jsonStrings(t, kinds[col])
		for _, n := range names {
			if !slices.Contains(got, n) {
				t.Errorf("%s = %s: decodes to %q, without %q", col, kinds[col], got, n)
			}
		}
	}
	for col, want := range map[string]string{
		"doc":      pgByteaDoc, // bytea: the raw bytes
		"ddoc":     "\x00\xff", // a domain over bytea too
		"media_id": "1234567890",
		"small":    "123",
		"n4":       "2147483647",
		"num":      "9876543210.5",
		"fl":       "1234567890",
		"dom":      "555",
		"label":    pgEnumLabel,
	} {
		if string(kinds[col]) != want {
			t.Errorf("%s = %q, want %q", col, kinds[col], want)
		}
	}
	// A type of no kind above (a range of text) is read as its text form.
	if !bytes.Contains(kinds["span"], []byte(pgEnumLabel)) {
		t.Errorf("span = %q, without %q", kinds["span"], pgEnumLabel)
	}
	// A materialized view has no primary key: its rows are named by ctid.
	if want := []string{"ctid=(0,1).id=1", "ctid=(0,1).content=What is in f.png?", "ctid=(0,1).metadata=" + agentRunsAttachment}; !reflect.DeepEqual(recent, want) {
		t.Errorf("materialized view items %q, want %q", recent, want)
	}
}

// TestRewritePostgresOffersOnlyWhatItWrites: the rewriter offers the values of
// text-like columns of tables, with Walk's places, and none of the values Walk
// reads beyond them (numbers, bytea, composite values, arrays of numbers, an
// enum, a materialized view). An array of text is still rewritten, in its
// literal syntax, and Walk reads the new value as JSON.
func TestRewritePostgresOffersOnlyWhatItWrites(t *testing.T) {
	f := pgKindsFixture(t)
	s := f.schema
	var seen []ref.Place
	var j journal
	c, err := f.openRewriter(t).Rewrite(context.Background(), f.only(replaceEdit("/inbound/", "/migrated/", &seen)), j.options(0))
	if err != nil || c.Changed != 1 || len(j.committed) != 1 || j.committed[0].Place.String() != s+".kinds[id=1].paths" {
		t.Fatalf("rewrite: %+v, %v, committed %v; want kinds.paths", c, err, j.committed)
	}
	offered := map[string]bool{"files.name": true, "files.tags": true, "files.note": true, "loose.body": true,
		"messages.role": true, "messages.content": true, "messages.metadata": true, "kinds.paths": true}
	items, _ := walkAll(t, f.open(t, f.url, ""))
	mine := f.mine(items)
	var notOffered []string
	for _, it := range mine {
		if !offered[strings.TrimPrefix(it.Place.Table, s+".")+"."+it.Place.Column] {
			notOffered = append(notOffered, it.Place.String())
		}
	}
	if len(notOffered) < 20 {
		t.Errorf("only %d places not offered: %q", len(notOffered), notOffered)
	}
	checkSawWalk(t, seen, mine, notOffered...)
	paths, _ := findText(mine, s+".kinds", "id=1", "paths")
	if got := jsonStrings(t, []byte(paths)); !slices.Contains(got, strings.Replace(pgForgeName, "/inbound/", "/migrated/", 1)) {
		t.Errorf("paths after the rewrite = %s", paths)
	}
}

// TestPGReadAs judges types from a catalog made up for the test: a type the
// catalog does not explain, or an extension's type whatever category it
// declares, is read as text, never skipped; only built-in types of the nameless
// kinds, and arrays of them, are not read.
func TestPGReadAs(t *testing.T) {
	types := pgTypes{
		16:   {typtype: "b", category: "B", name: "bool", catalog: true},
		1000: {typtype: "b", category: "A", name: "_bool", catalog: true, elem: 16},
		17:   {typtype: "b", category: "U", name: "bytea", catalog: true},
		20:   {typtype: "b", category: "N", name: "int8", catalog: true},
		25:   {typtype: "b", category: "S", name: "text", catalog: true},
		1009: {typtype: "b", category: "A", name: "_text", catalog: true, elem: 25},
		2950: {typtype: "b", category: "U", name: "uuid", catalog: true},
		// An extension's type that calls itself a date/time type.
		90001: {typtype: "b", category: "D", name: "fakedate"},
		90002: {typtype: "d", name: "bytes_dom", base: 17},
		90003: {typtype: "c", category: "C", name: "att"},
		90004: {typtype: "d", name: "att_dom", base: 90003},
		90005: {typtype: "b", category: "A", name: "_att", elem: 90003},
		90006: {typtype: "b", category: "A", name: "_missing", elem: 99999},
		90007: {typtype: "d", name: "loop", base: 90007},
		700:   {typtype: "b", category: "N", name: "float4", catalog: true},
		701:   {typtype: "b", category: "N", name: "float8", catalog: true},
		1700:  {typtype: "b", category: "N", name: "numeric", catalog: true},
		1231:  {typtype: "b", category: "A", name: "_numeric", catalog: true, elem: 1700},
		90008: {typtype: "d", name: "amount", base: 1700},
		// An extension's type of the same name is not the built-in numeric.
		90009: {typtype: "b", category: "N", name: "numeric"},
	}
	for oid, want := range map[uint32]pgRead{
		16: pgReadNone, 1000: pgReadNone, 2950: pgReadNone,
		17: pgReadBytes, 90002: pgReadBytes,
		20: pgReadText, 25: pgReadText, 90001: pgReadText,
		99999: pgReadText, // not in the catalog
		90007: pgReadText, // a chain of domains that never ends
		90006: pgReadJSON, // an array of a type not in the catalog
		1009:  pgReadJSON, 90003: pgReadJSON, 90004: pgReadJSON, 90005: pgReadJSON,
		700: pgReadNumber, 701: pgReadNumber, 1700: pgReadNumber, 90008: pgReadNumber,
		1231: pgReadJSON, 90009: pgReadText,
	} {
		if got := types.readAs(oid); got != want {
			t.Errorf("readAs(%d %s) = %d, want %d", oid, types[oid].name, got, want)
		}
	}
}

// TestPostgresRowSecurity: a row-level security policy that would hide rows
// makes the read fail instead (row_security = off), for a role that is not
// the table's owner, for an owner under FORCE ROW LEVEL SECURITY, and through
// a query.
func TestPostgresRowSecurity(t *testing.T) {
	ctx := context.Background()
	f := newPGFixture(t)
	reader, owner := f.schema+"_reader", f.schema+"_owner"
	for _, role := range []string{reader, owner} {
		if _, err := f.admin.Exec(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
			t.Skipf("cannot create a role on the test server: %v", err)
		}
	}
	t.Cleanup(func() {
		for _, role := range []string{reader, owner} {
			f.admin.Exec(ctx, "DROP OWNED BY "+role)
			f.admin.Exec(ctx, "DROP ROLE "+role)
		}
	})
	s := f.schema
	f.exec(t, `CREATE TABLE `+s+`.secret(id int PRIMARY KEY, body text);
INSERT INTO `+s+`.secret VALUES (1, 'agent-inputs/u/t/uploads/shown.png'), (2, 'agent-inputs/u/t/uploads/hidden.png');
ALTER TABLE `+s+`.secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_one ON `+s+`.secret FOR SELECT USING (id = 1);
GRANT USAGE ON SCHEMA `+s+` TO `+reader+`, `+owner+`;
GRANT SELECT ON `+s+`.messages, `+s+`.secret TO `+reader+`;
CREATE TABLE `+s+`.forced(id int PRIMARY KEY, body text);
INSERT INTO `+s+`.forced VALUES (1, 'agent-inputs/u/t/uploads/owned.png');
ALTER TABLE `+s+`.forced OWNER TO `+owner+`;
ALTER TABLE `+s+`.forced ENABLE ROW LEVEL SECURITY;
ALTER TABLE `+s+`.forced FORCE ROW LEVEL SECURITY;
CREATE POLICY nothing ON `+s+`.forced FOR SELECT USING (false);`)
	as := func(role string) string {
		u, err := url.Parse(f.url)
		if err != nil {
			t.Fatal(err)
		}
		if _, has := u.User.Password(); has {
			t.Skip("the test server needs passwords")
		}
		u.User = url.User(role)
		return u.String()
	}

	// The premise: with row security on (the server's default), the policies
	// hide rows without any error.
	for _, tc := range []struct{ role, table string }{{reader, "secret"}, {owner, "forced"}} {
		conn, err := pgx.Connect(ctx, as(tc.role))
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = conn.QueryRow(ctx, "SELECT count(*) FROM "+s+"."+tc.table).Scan(&n)
		conn.Close(ctx)
		if err != nil || n != 0 && tc.table == "forced" || n != 1 && tc.table == "secret" {
			t.Fatalf("as %s, %s: %d rows, %v: the policy does not hide rows as the test expects", tc.role, tc.table, n, err)
		}
	}

	for _, tc := range []struct {
		role       string
		failed     []string
		read       []string
		wantAbsent string
	}{
		{reader, []string{"secret"}, []string{"messages"}, "shown.png"},
		{owner, []string{"forced"}, nil, "owned.png"},
	} {
		all, _ := walkAll(t, f.open(t, as(tc.role), ""))
		var failed, read []string
		for _, it := range f.mine(all) {
			name := strings.TrimPrefix(it.Place.Table, s+".")
			switch {
			case it.Err != nil && strings.Contains(it.Err.Error(), "row-level security"):
				failed = append(failed, name)
			case it.Err != nil:
				// no privilege on the fixture's other tables
				if !strings.Contains(it.Err.Error(), "permission denied") {
					t.Errorf("as %s, %s: %v", tc.role, name, it.Err)
				}
			case len(read) == 0 || read[len(read)-1] != name:
				read = append(read, name)
			}
			if strings.Contains(string(it.Text), tc.wantAbsent) {
				t.Errorf("as %s: a row of a table with a policy was read: %s", tc.role, it.Text)
			}
		}
		// (A table with a policy that the role may not read at all may fail
		// either way: the server checks row security first.)
		if !slices.Contains(failed, tc.failed[0]) || !reflect.DeepEqual(read, tc.read) {
			t.Errorf("as %s: failed with row-level security %q, read %q; want %q among the failed, read %q", tc.role, failed, read, tc.failed, tc.read)
		}
	}

	// Through a query, the policy fails the read as a whole.
	src := f.open(t, as(reader), "SELECT id, body FROM "+s+".secret ORDER BY id")
	var texts []string
	_, err := src.Walk(ctx, eachValue(func(it Item, text []byte) error { texts = append(texts, string(text)); return nil }))
	if err == nil || !strings.Contains(err.Error(), "row-level security") {
		t.Errorf("query as %s: err = %v after %q, want the row-level security error", reader, err, texts)
	}
}

// TestPostgresRewrittenWhileRead: a table rewritten by another session after
// the walk's snapshot was taken, and before the walk reaches it, holds its rows
// in new storage the snapshot cannot see, so that it would read as empty. Each
// way of rewriting one (ALTER TABLE … TYPE, VACUUM FULL, TRUNCATE, CLUSTER, a
// partition of a partitioned table rewritten or detached, a copy renamed into
// place, a materialized view refreshed) makes
// the table an Item with Err naming it; a table left alone is read as usual.
func TestPostgresRewrittenWhileRead(t *testing.T) {
	f := newPGFixtureDB(t)
	s := f.schema
	f.exec(t, `CREATE TABLE `+s+`.early(id int PRIMARY KEY, body text);
INSERT INTO `+s+`.early VALUES (1, 'first');
CREATE TABLE `+s+`.events(at date, body text) PARTITION BY RANGE (at);
CREATE TABLE `+s+`.events_2026 PARTITION OF `+s+`.events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
INSERT INTO `+s+`.events VALUES ('2026-07-01', 'agent-inputs/u/t/uploads/e.png');
CREATE TABLE `+s+`.kv(k text PRIMARY KEY, v text);
INSERT INTO `+s+`.kv VALUES ('a', 'agent-inputs/u/t/uploads/kv.png');
CREATE TABLE `+s+`.logs(kind text, body text) PARTITION BY LIST (kind);
CREATE TABLE `+s+`.logs_a PARTITION OF `+s+`.logs FOR VALUES IN ('a');
CREATE TABLE `+s+`.logs_b PARTITION OF `+s+`.logs FOR VALUES IN ('b');
INSERT INTO `+s+`.logs VALUES ('a', 'agent-inputs/u/t/uploads/la.png'), ('b', 'agent-inputs/u/t/uploads/lb.png');
CREATE MATERIALIZED VIEW `+s+`.recent AS SELECT k, v FROM `+s+`.kv;
CREATE TABLE `+s+`.steady(id int PRIMARY KEY, body text);
INSERT INTO `+s+`.steady VALUES (1, 'agent-inputs/u/t/uploads/steady.png');
CREATE TABLE `+s+`.runs(id int PRIMARY KEY, input jsonb);
INSERT INTO `+s+`.runs VALUES (1, '{"attachments": [{"path": "agent-inputs/u/t/uploads/run.png"}]}');`)
	src := f.open(t, f.url, "")
	rewritten := false
	failed := map[string]string{}
	read := map[string]bool{}
	_, err := src.Walk(context.Background(), func(it Item) error {
		table := strings.TrimPrefix(it.Place.Table, s+".")
		if !rewritten {
			// The walk is reading "early": its snapshot is taken, and no other
			// table is locked yet.
			rewritten = true
			for _, q := range []string{
				`ALTER TABLE ` + s + `.messages ALTER COLUMN metadata TYPE json USING metadata::json`,
				`VACUUM FULL ` + s + `.loose`,
				`TRUNCATE ` + s + `.numbers`,
				`CLUSTER ` + s + `.files USING files_pkey`,
				`VACUUM FULL ` + s + `.events_2026`,
				`CREATE TABLE ` + s + `.kv_new AS SELECT * FROM ` + s + `.kv`,
				`ALTER TABLE ` + s + `.kv RENAME TO kv_old`,
				`ALTER TABLE ` + s + `.kv_new RENAME TO kv`,
				// Not read through logs, and not a table of its own in the snapshot.
				`ALTER TABLE ` + s + `.logs DETACH PARTITION ` + s + `.logs_b`,
				`REFRESH MATERIALIZED VIEW ` + s + `.recent`,
				// A change of type by hand: the old column renamed, a new one
				// added under its name; the table is not rewritten, and its
				// name now reads the new, empty column.
				`ALTER TABLE ` + s + `.runs RENAME COLUMN input TO input_old`,
				`ALTER TABLE ` + s + `.runs ADD COLUMN input jsonb`,
			} {
				f.exec(t, q)
			}
		}
		if it.Err != nil {
			failed[table] = it.Err.Error()
			t.Logf("%s", it.Err)
			if it.Place.Key != "" || it.Place.Column != "" {
				t.Errorf("error place = %+v, want the table", it.Place)
			}
			return nil
		}
		read[table] = true
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	for _, table := range []string{"events", "files", "kv", "logs", "loose", "messages", "numbers", "recent", "runs"} {
		msg, ok := failed[table]
		if !ok {
			t.Errorf("%s, rewritten while the walk was under way: no problem reported (read: %v)", table, read[table])
			continue
		}
		if !strings.Contains(msg, s+"."+table) || !strings.Contains(msg, "rewritten") {
			t.Errorf("%s: error %q does not name the table and say it was rewritten", table, msg)
		}
		delete(failed, table)
	}
	if len(failed) > 0 {
		t.Errorf("other problems: %v", failed)
	}
	if !read["early"] || !read["steady"] {
		t.Errorf("tables left alone not read: read %v", read)
	}
}

// TestPostgresExtensionTables: a table that belongs to an extension is read
// like any other. pgmq (Supabase Queues) keeps each queue's messages in such a
// table, pgmq.q_<queue> with a jsonb message, and a runtime may queue work that
// names an upload there. (plpgsql stands in for pgmq, which the test server
// does not have: a table added to any extension is a member of it alike.)
func TestPostgresExtensionTables(t *testing.T) {
	f := newPGFixtureDB(t)
	s := f.schema
	f.exec(t, `CREATE TABLE `+s+`.q_jobs(msg_id bigint PRIMARY KEY, message jsonb);
INSERT INTO `+s+`.q_jobs VALUES (1, '`+agentRunsAttachment+`');
ALTER EXTENSION plpgsql ADD TABLE `+s+`.q_jobs;`)
	all, _ := walkAll(t, f.open(t, f.url, ""))
	var got []string
	for _, it := range f.mine(all) {
		if it.Err != nil {
			t.Errorf("%s: %v", it.Place, it.Err)
		}
		if it.Place.Table == s+".q_jobs" {
			got = append(got, it.Place.Key+"."+it.Place.Column+"="+string(it.Text))
		}
	}
	if want := []string{"msg_id=1.msg_id=1", "msg_id=1.message=" + agentRunsAttachment}; !reflect.DeepEqual(got, want) {
		t.Errorf("extension's table items %q, want %q", got, want)
	}
}

// TestPostgresForeignTables: a foreign table keeps its rows on another server,
// which a walk does not read: it is an Item with an [*UnreadError] naming it,
// counted in Counts.Unread, so that the read is incomplete, and the remote
// server is never reached (this one does not exist). Options.Exclude names
// tables the operator knows hold no sessions, a foreign one or any other: they
// are not read and are counted in Counts.Excluded.
func TestPostgresForeignTables(t *testing.T) {
	f := newPGFixtureDB(t)
	s := f.schema
	f.exec(t, `CREATE EXTENSION postgres_fdw;
CREATE SERVER elsewhere FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '1', dbname 'app');
CREATE USER MAPPING FOR CURRENT_USER SERVER elsewhere OPTIONS (user 'app');
CREATE FOREIGN TABLE `+s+`.remote_msgs(id int, metadata text) SERVER elsewhere OPTIONS (table_name 'messages');`)

	var unread *UnreadError
	var errs []string
	tables := map[string]bool{}
	all, c := walkAll(t, f.open(t, f.url, ""))
	for _, it := range f.mine(all) {
		tables[strings.TrimPrefix(it.Place.Table, s+".")] = true
		if it.Err == nil {
			continue
		}
		errs = append(errs, it.Err.Error())
		if !errors.As(it.Err, &unread) || unread.Path != s+".remote_msgs" || it.Place.Table != s+".remote_msgs" || it.Place.Key != "" {
			t.Errorf("%s: %v, want an *UnreadError for the foreign table", it.Place, it.Err)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "foreign table") || !strings.Contains(errs[0], "elsewhere") {
		t.Errorf("problems %q, want one naming the foreign table and its server", errs)
	}
	if c.Unread != 1 || c.Excluded != 0 {
		t.Errorf("counts = %+v, want 1 unread", c)
	}
	if !tables["messages"] || !tables["loose"] {
		t.Errorf("tables walked %v, want the others read", tables)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := Open(ctx, f.url, Options{Exclude: []string{s + ".remote_*", "loose"}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	all, c = walkAll(t, src)
	for _, it := range f.mine(all) {
		if it.Err != nil || it.Place.Table == s+".loose" || it.Place.Table == s+".remote_msgs" {
			t.Errorf("with both excluded: %s %v", it.Place, it.Err)
		}
	}
	if c.Unread != 0 || c.Excluded != 2 {
		t.Errorf("counts = %+v, want 2 excluded and none unread", c)
	}
	if _, err := Open(ctx, f.url, Options{Exclude: []string{"["}}); !errors.Is(err, ErrUsage) {
		t.Errorf("Open with a bad pattern: %v, want a usage error", err)
	}
}

// TestPostgresNestedBytea: a bytea inside an array or a composite value comes
// out of to_json in hex, in which no name can be found. Such a column is read
// for the rest of what it holds, and is an Item with an [*UnreadError] naming
// it, so that the read is incomplete; the operator may exclude the column
// ("table.column", or "schema.table.column"), which is then not read.
func TestPostgresNestedBytea(t *testing.T) {
	f := newPGFixtureDB(t)
	s := f.schema
	f.exec(t, `CREATE TYPE `+s+`.upload AS (path text, thumb bytea);
CREATE DOMAIN `+s+`.chunks AS bytea[];
CREATE TABLE `+s+`.blobs(id int PRIMARY KEY, parts bytea[], att `+s+`.upload, dparts `+s+`.chunks, raw bytea);`)
	f.exec(t, `INSERT INTO `+s+`.blobs VALUES (1, ARRAY[convert_to($1::text, 'UTF8')], ROW('agent-inputs/u/t/uploads/a.png', '\x00'),
	ARRAY[convert_to($1::text, 'UTF8')], convert_to($1::text, 'UTF8'));`, agentRunsAttachment)

	all, c := walkAll(t, f.open(t, f.url, ""))
	var unread, read []string
	for _, it := range f.mine(all) {
		var ue *UnreadError
		switch {
		case errors.As(it.Err, &ue):
			unread = append(unread, it.Place.Table+"."+it.Place.Column)
			if ue.Path != it.Place.Table+"."+it.Place.Column || !strings.Contains(ue.Reason, "bytea") || it.Place.Key != "" {
				t.Errorf("%s: %v, want the column named and bytea said", it.Place, it.Err)
			}
		case it.Err != nil:
			t.Errorf("%s: %v", it.Place, it.Err)
		case it.Place.Table == s+".blobs":
			read = append(read, it.Place.Column)
		}
	}
	if want := []string{s + ".blobs.parts", s + ".blobs.att", s + ".blobs.dparts"}; !reflect.DeepEqual(unread, want) {
		t.Errorf("unread %q, want %q", unread, want)
	}
	// The columns are still read for what they hold besides the bytea: the
	// composite's path is there.
	if want := []string{"id", "parts", "att", "dparts", "raw"}; !reflect.DeepEqual(read, want) {
		t.Errorf("read %q, want %q", read, want)
	}
	if c.Unread != 3 {
		t.Errorf("counts = %+v, want 3 unread", c)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := Open(ctx, f.url, Options{Exclude: []string{s + ".blobs.parts", "blobs.att", "blobs.d*"}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	all, c = walkAll(t, src)
	read = nil
	for _, it := range f.mine(all) {
		if it.Err != nil {
			t.Errorf("with the columns excluded: %s: %v", it.Place, it.Err)
		}
		if it.Place.Table == s+".blobs" {
			read = append(read, it.Place.Column)
		}
	}
	if want := []string{"id", "raw"}; !reflect.DeepEqual(read, want) || c.Unread != 0 || c.Excluded != 3 {
		t.Errorf("with the columns excluded: read %q, counts %+v; want %q, 3 excluded", read, c, want)
	}
}

// TestPostgresIntegerForms: a numeric, float4 or float8 whose value is an
// integer the server spells with a scale or an exponent is read followed by
// its digits, in a table and in a query, so that 1234567890.jpg is kept by a
// numeric 1234567890.000; other values are read as they are.
func TestPostgresIntegerForms(t *testing.T) {
	f := newPGFixture(t)
	s := f.schema
	f.exec(t, `CREATE DOMAIN `+s+`.amount AS numeric(20, 3);
CREATE TABLE `+s+`.media(id int PRIMARY KEY, num numeric, fl float8, r real, amt `+s+`.amount, nums numeric[]);
INSERT INTO `+s+`.media VALUES
	(1, 1234567890.000, 1.23456789e+09, 1e7, 1234567890, '{1234567890.000}'),
	(2, 1234567890.0, 1733300000000000, 1e21, 9876543210.5, NULL),
	(3, 9876543210.5, 0.5, 'NaN', -1234567890, NULL),
	(4, 12345678901234567890.0, 12345678901234567890, '-0', NULL, NULL);`)
	want := map[string]string{
		"id=1.num":  "1234567890.000 1234567890",
		"id=1.fl":   "1234567890", // the server writes a float below 1e15 in digits
		"id=1.r":    "1e+07 10000000",
		"id=1.amt":  "1234567890.000 1234567890",
		"id=1.nums": "[1234567890.000]", // JSON: the extractor reads its numbers
		"id=2.num":  "1234567890.0 1234567890",
		"id=2.fl":   "1.7333e+15 1733300000000000",
		"id=2.r":    "1e+21 1000000000000000000000",
		"id=2.amt":  "9876543210.500",
		"id=3.num":  "9876543210.5",
		"id=3.fl":   "0.5",
		"id=3.r":    "NaN",
		"id=3.amt":  "-1234567890.000 -1234567890",
		// Beyond 2^53 the exact value, and the float64 a runtime reads.
		"id=4.num": "12345678901234567890.0 12345678901234567890 12345678901234567000",
		"id=4.fl":  "1.2345678901234567e+19 12345678901234567000",
		"id=4.r":   "-0 0",
	}
	all, _ := walkAll(t, f.open(t, f.url, ""))
	got := map[string]string{}
	for _, it := range f.mine(all) {
		if it.Err != nil {
			t.Errorf("%s: %v", it.Place, it.Err)
		}
		if it.Place.Table == s+".media" && it.Place.Column != "id" {
			got[it.Place.Key+"."+it.Place.Column] = string(it.Text)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items:\n%v\nwant:\n%v", got, want)
	}
	// A query's columns alike.
	items, _ := walkAll(t, f.open(t, f.url, `SELECT id, num, fl FROM `+s+`.media WHERE id = 2`))
	got = map[string]string{}
	for _, it := range items {
		got[it.Place.Column] = string(it.Text)
	}
	if want := map[string]string{"id": "2", "num": "1234567890.0 1234567890", "fl": "1.7333e+15 1733300000000000"}; !reflect.DeepEqual(got, want) {
		t.Errorf("query items %v, want %v", got, want)
	}
}

// TestPostgresLargeFloats: a float the server writes in exponent form
// (1.7333e+15) is read with its digits too, as a runtime names a file by the
// number (1733300000000000.jpg, JavaScript's form of it); NaN and infinities
// are read as they are. Before, only the exponent form was read, and gc
// planned the file a session named this way.
func TestPostgresLargeFloats(t *testing.T) {
	f := newPGFixtureDB(t)
	s := f.schema
	f.exec(t, `CREATE TABLE `+s+`.media(id int PRIMARY KEY, media_id double precision, r real);
INSERT INTO `+s+`.media VALUES (1, 1733300000000000, 10000000), (2, 'NaN', 'Infinity'), (3, '-Infinity', 1.5);`)
	all, _ := walkAll(t, f.open(t, f.url, ""))
	got := map[string]string{}
	for _, it := range f.mine(all) {
		if it.Err != nil {
			t.Errorf("%s: %v", it.Place, it.Err)
			continue
		}
		if it.Place.Table == s+".media" {
			got[it.Place.Key+"."+it.Place.Column] = string(it.Text)
		}
	}
	for k, want := range map[string]string{
		"id=1.media_id": "1733300000000000",
		"id=1.r":        "10000000",
		"id=2.media_id": "NaN",
		"id=2.r":        "Infinity",
		"id=3.media_id": "-Infinity",
		"id=3.r":        "1.5",
	} {
		if !strings.Contains(got[k], want) {
			t.Errorf("%s = %q, without %q", k, got[k], want)
		}
	}
}
