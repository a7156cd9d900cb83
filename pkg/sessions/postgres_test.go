package sessions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
	ctx := context.Background()
	u := sessionstest.Postgres(t)
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

func (f *pgFixture) exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := f.admin.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
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
	want := []string{
		"files[owner=7,name=f.png].name=f.png",
		`files[owner=7,name=f.png].tags={agent-inputs/u/t/uploads/f.png,x}`,
		"files[owner=7,name=f.png].note=abcd",
		"loose[ctid=(0,1)].body=see s3://b/agent-inputs/u/t/uploads/g.png",
		"loose[ctid=(0,2)].body=second",
		"messages[id=1].role=user",
		"messages[id=1].content=What is in f.png?",
		"messages[id=1].metadata=" + agentRunsAttachment,
		"messages[id=2].role=assistant",
		"messages[id=2].content=A chart.",
		"messages[id=3].role=user",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// files 1 + loose 2 + messages 3; numbers has no text column and is not read.
	if c.Rows < 6 {
		t.Errorf("counts = %+v, want at least 6 rows", c)
	}
}

// TestPostgresSnapshot changes the data while a walk is under way: the walk reads
// one snapshot and sees none of it.
func TestPostgresSnapshot(t *testing.T) {
	f := newPGFixture(t)
	src := f.open(t, f.url, "")
	changed := false
	var got []string
	_, err := src.Walk(context.Background(), func(it Item) error {
		if !strings.HasPrefix(it.Place.Table, f.schema+".") {
			return nil
		}
		if !changed {
			changed = true
			f.exec(t, "INSERT INTO "+f.schema+".messages(thread_id, role, content) VALUES ('00000000-0000-0000-0000-000000000002', 'user', 'late'); UPDATE "+f.schema+".loose SET body = 'changed'")
		}
		got = append(got, string(it.Text))
		return nil
	})
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
	// id, created_at and n are not text; raw is bytea, decoded.
	want := []string{
		"1.content=What is in f.png?",
		"1.metadata=" + agentRunsAttachment,
		"1.raw=What is in f.png?",
		"2.content=A chart.",
		"2.raw=A chart.",
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
	if !reflect.DeepEqual(failed, []string{"files", "loose"}) || !reflect.DeepEqual(read, []string{"messages"}) {
		t.Errorf("failed %q, read %q; want failed [files loose], read [messages]", failed, read)
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
	_, err := src.Walk(ctx, func(it Item) error { texts = append(texts, string(it.Text)); return nil })
	if err == nil || !strings.Contains(err.Error(), "row-level security") {
		t.Errorf("query as %s: err = %v after %q, want the row-level security error", reader, err, texts)
	}
}
