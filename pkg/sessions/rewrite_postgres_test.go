package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mediactl/mediactl/pkg/ref"
)

// The test database may hold other tests' tables, which a rewrite reads too (and
// which may be dropped while it runs): the tests edit only their own schema and
// judge only its places.

func (f *pgFixture) mineTable(p ref.Place) bool { return strings.HasPrefix(p.Table, f.schema+".") }

// only restricts an Edit to the fixture's schema.
func (f *pgFixture) only(edit Edit) Edit {
	return func(p ref.Place, old []byte) ([]byte, error) {
		if !f.mineTable(p) {
			return nil, nil
		}
		return edit(p, old)
	}
}

// unitErrors returns the unit errors of the fixture's schema; any other kind of
// error fails the test.
func (f *pgFixture) unitErrors(t *testing.T, err error) map[string]*UnitError {
	t.Helper()
	mine := map[string]*UnitError{}
	if err == nil {
		return mine
	}
	re, ok := err.(*RewriteError)
	if !ok {
		t.Fatalf("rewrite failed: %v", err)
	}
	for _, u := range re.Units {
		if f.mineTable(u.Place) {
			mine[strings.TrimPrefix(u.Place.String(), f.schema+".")] = u
		}
	}
	return mine
}

// values returns the fixture's values by place, as the rewriter reads them (an
// array in its literal syntax, where Walk reads its JSON), through a rewrite
// that changes nothing.
func (f *pgFixture) values(t *testing.T) map[string]string {
	t.Helper()
	vals := map[string]string{}
	_, err := f.openRewriter(t).Rewrite(context.Background(), f.only(func(p ref.Place, old []byte) ([]byte, error) {
		vals[strings.TrimPrefix(p.String(), f.schema+".")] = string(old)
		return nil, nil
	}), RewriteOptions{})
	if err != nil {
		t.Fatalf("read the values: %v", err)
	}
	return vals
}

func (f *pgFixture) openRewriter(t *testing.T) Rewriter {
	t.Helper()
	return openRewriter(t, f.url)
}

// TestRewritePostgresExclude: tables and columns excluded from the read
// (Options.Exclude, by schema.table, table, or table.column) are not offered
// to Edit either, nor written.
func TestRewritePostgresExclude(t *testing.T) {
	ctx := context.Background()
	f := newPGFixture(t)
	before := f.values(t)
	w, err := OpenRewriter(ctx, f.url, Options{Exclude: []string{f.schema + ".loose", "files.tags"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var seen []string
	_, err = w.Rewrite(ctx, f.only(func(p ref.Place, old []byte) ([]byte, error) {
		seen = append(seen, strings.TrimPrefix(p.String(), f.schema+"."))
		return bytes.ReplaceAll(old, []byte("agent-inputs/"), []byte("migrated/agent-inputs/")), nil
	}), RewriteOptions{})
	if len(f.unitErrors(t, err)) != 0 {
		t.Errorf("units not rewritten: %v", err)
	}
	for _, p := range seen {
		if strings.HasPrefix(p, "loose") || strings.Contains(p, "tags") {
			t.Errorf("Edit was offered %s, which is excluded", p)
		}
	}
	after := f.values(t)
	for _, p := range []string{"loose[ctid=(0,1)].body", "files[owner=7,name=f.png].tags"} {
		if before[p] == "" || after[p] != before[p] {
			t.Errorf("%s = %q, want it as it was, %q", p, after[p], before[p])
		}
	}
	if p := "messages[id=1].metadata"; !strings.Contains(after[p], "migrated/agent-inputs/") {
		t.Errorf("%s = %q: not rewritten", p, after[p])
	}
}

// TestRewritePostgresRoundTrip rewrites agent-runs' bucket paths in text, jsonb
// and text[] columns (with a composite key), and rolls back from the journal:
// every value comes back with the same text form, and the jsonb the same value.
// A table without a primary key is refused, and so is a key column.
func TestRewritePostgresRoundTrip(t *testing.T) {
	ctx := context.Background()
	f := newPGFixture(t)
	before := f.values(t)

	// The edit writes its JSON with its own spacing and key order, as a JSON
	// library might; jsonb keeps its own.
	edit := func(p ref.Place, old []byte) ([]byte, error) {
		if p.Column == "name" {
			return []byte("renamed.png"), nil // a primary key column: refused
		}
		if !bytes.Contains(old, []byte("agent-inputs/")) {
			return nil, nil
		}
		if p.Column == "metadata" {
			var v map[string]any
			if err := json.Unmarshal(old, &v); err != nil {
				return nil, err
			}
			att := v["attachments"].([]any)[0].(map[string]any)
			att["path"] = "migrated/" + att["path"].(string)
			b, err := json.MarshalIndent(v, "", "    ")
			return b, err
		}
		return bytes.ReplaceAll(old, []byte("agent-inputs/"), []byte("migrated/agent-inputs/")), nil
	}
	var seen []ref.Place
	record := func(p ref.Place, old []byte) ([]byte, error) {
		seen = append(seen, p)
		return edit(p, old)
	}
	w := f.openRewriter(t)
	if w.String() != f.url {
		t.Errorf("String() = %q", w.String())
	}
	var j journal
	c, err := w.Rewrite(ctx, f.only(record), j.options(0))
	refused := f.unitErrors(t, err)

	// Edit saw Walk's places, but for the numbers, which Walk reads and the
	// rewriter does not write.
	items, _ := walkAll(t, f.open(t, f.url, ""))
	numbers := []string{"files[owner=7,name=f.png].owner", "files[owner=7,name=f.png].size", "loose[ctid=(0,1)].n", "loose[ctid=(0,2)].n",
		"messages[id=1].id", "messages[id=2].id", "messages[id=3].id", "numbers[id=1].id", "numbers[id=1].n"}
	for i, p := range numbers {
		numbers[i] = f.schema + "." + p
	}
	checkSawWalk(t, seen, f.mine(items), numbers...)

	// loose has no primary key; files.name is part of one.
	if len(refused) != 2 || !strings.Contains(refused["loose[ctid=(0,1)].body"].Error(), "no primary key") ||
		!strings.Contains(refused["files[owner=7,name=f.png].name"].Error(), "primary key") {
		t.Errorf("refused %v", refused)
	}
	var committed []string
	for _, ch := range j.committed {
		committed = append(committed, strings.TrimPrefix(ch.Place.String(), f.schema+"."))
	}
	if want := []string{"files[owner=7,name=f.png].tags", "messages[id=1].metadata"}; !reflect.DeepEqual(committed, want) || c.Changed != 2 {
		t.Errorf("committed %q (counts %+v), want %q", committed, c, want)
	}

	// What was prepared is what the rewriter now reads: jsonb's own text, not
	// the edit's.
	after := f.values(t)
	for _, ch := range j.prepared {
		place := strings.TrimPrefix(ch.Place.String(), f.schema+".")
		if after[place] != string(ch.New) {
			t.Errorf("%s holds %q, prepared %q", place, after[place], ch.New)
		}
		if place == "messages[id=1].metadata" && strings.Contains(string(ch.New), "\n") {
			t.Errorf("prepared New %q is not jsonb's text form", ch.New)
		}
	}
	if !reflect.DeepEqual(j.prepared, j.committed) {
		t.Errorf("prepared %+v\ncommitted %+v", j.prepared, j.committed)
	}
	if got := after["messages[id=1].metadata"]; got != strings.Replace(agentRunsAttachment, `"agent-inputs/`, `"migrated/agent-inputs/`, 1) {
		t.Errorf("metadata = %s", got)
	}
	if got := after["files[owner=7,name=f.png].tags"]; got != "{migrated/agent-inputs/u/t/uploads/f.png,x}" {
		t.Errorf("tags = %s", got)
	}
	if after["loose[ctid=(0,1)].body"] != before["loose[ctid=(0,1)].body"] {
		t.Errorf("loose was written: %q", after["loose[ctid=(0,1)].body"])
	}

	// Roll back with a second rewriter, as a later run would.
	c, err = f.openRewriter(t).Rewrite(ctx, f.only(j.rollbackEdit()), RewriteOptions{})
	if len(f.unitErrors(t, err)) != 0 || c.Changed != 2 {
		t.Fatalf("rollback: %+v, %v", c, err)
	}
	if got := f.values(t); !reflect.DeepEqual(got, before) {
		t.Errorf("after rollback:\n%v\nwant:\n%v", got, before)
	}
	var same bool
	if err := f.admin.QueryRow(ctx, "SELECT metadata = $1::jsonb FROM "+f.schema+".messages WHERE id = 1", agentRunsAttachment).Scan(&same); err != nil || !same {
		t.Errorf("metadata after rollback is not the original jsonb value (%v)", err)
	}
}

// TestRewritePostgresConcurrentWriters: a row changed once between our read and
// our write is retried with the writer's value; a row changed every time ends as
// a conflict; a row locked by another transaction past the lock timeout too. The
// rest of the batch is written.
func TestRewritePostgresConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	f := newPGFixture(t)
	defer func(old string) { pgLockTimeout = old }(pgLockTimeout)
	pgLockTimeout = "200ms"
	s := f.schema
	f.exec(t, "INSERT INTO "+s+".messages(thread_id, role, content) VALUES ('00000000-0000-0000-0000-000000000001', 'user', 'locked agent-inputs/a.png')")

	f.exec(t, "UPDATE "+s+".messages SET content = 'A chart of agent-inputs/u/t/uploads/f.png.' WHERE id = 2")

	// Another session holds a lock on message 4 for the whole rewrite.
	locker, err := pgx.Connect(ctx, f.url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	ltx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ltx.Rollback(ctx)
	if _, err := ltx.Exec(ctx, "SELECT 1 FROM "+s+".messages WHERE id = 4 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}

	calls := map[string]int{}
	edit := func(p ref.Place, old []byte) ([]byte, error) {
		place := strings.TrimPrefix(p.String(), s+".")
		calls[place]++
		switch place {
		case "messages[id=1].content":
			// Changed every time, before we write.
			f.exec(t, "UPDATE "+s+".messages SET content = content || '!' WHERE id = 1")
			return append(old, " (rewritten)"...), nil
		case "messages[id=2].content":
			if calls[place] == 1 {
				f.exec(t, "UPDATE "+s+".messages SET content = 'A chart of agent-inputs/u/t/uploads/f.png, updated.' WHERE id = 2")
			}
		}
		if !bytes.Contains(old, []byte("agent-inputs/")) || p.Column == "name" || strings.HasPrefix(place, "loose") {
			return nil, nil
		}
		return bytes.ReplaceAll(old, []byte("agent-inputs/"), []byte("migrated/agent-inputs/")), nil
	}
	var j journal
	c, err := f.openRewriter(t).Rewrite(ctx, f.only(edit), j.options(2))
	refused := f.unitErrors(t, err)
	ltx.Rollback(ctx)

	if len(refused) != 2 || !errors.Is(refused["messages[id=1].content"], ErrConflict) || !errors.Is(refused["messages[id=4].content"], ErrConflict) {
		t.Fatalf("refused %v; want conflicts on messages 1 and 4", refused)
	}
	if calls["messages[id=1].content"] != 3 || calls["messages[id=2].content"] != 2 {
		t.Errorf("Edit calls %v", calls)
	}
	vals := f.values(t)
	want := map[string]string{
		"messages[id=1].content":         "What is in f.png?!!!",
		"messages[id=2].content":         "A chart of migrated/agent-inputs/u/t/uploads/f.png, updated.",
		"messages[id=4].content":         "locked agent-inputs/a.png",
		"messages[id=1].metadata":        strings.Replace(agentRunsAttachment, `"agent-inputs/`, `"migrated/agent-inputs/`, 1),
		"files[owner=7,name=f.png].tags": "{migrated/agent-inputs/u/t/uploads/f.png,x}",
	}
	for place, w := range want {
		if vals[place] != w {
			t.Errorf("%s = %q, want %q", place, vals[place], w)
		}
	}
	if c.Conflicts < 2 || c.Changed != 3 {
		t.Errorf("counts = %+v", c)
	}
}

// TestRewritePostgresRefusals: values a column's type or constraints would not
// keep as they are are reported and left; the other changes of the batch are
// written.
func TestRewritePostgresRefusals(t *testing.T) {
	ctx := context.Background()
	f := newPGFixture(t)
	s := f.schema
	f.exec(t, `CREATE DOMAIN `+s+`.short_path AS varchar(30) CHECK (VALUE NOT LIKE '%..%');
CREATE TABLE `+s+`.limits(id int PRIMARY KEY, short varchar(5), fixed char(4), doc jsonb, chk text CHECK (chk <> 'forbidden'), dom `+s+`.short_path, shorts varchar(5)[], ok text, oks varchar(9)[]);
INSERT INTO `+s+`.limits VALUES (1, 'abc', 'abc', '{"a": 1}', 'abc', 'abc', '{abc}', 'abc', '{abc}');`)
	edit := map[string]string{
		"short":  "abcdefgh",         // longer than varchar(5)
		"fixed":  "abcde",            // longer than char(4)
		"doc":    "not json",         // jsonb rejects it
		"chk":    "forbidden",        // the CHECK constraint rejects it
		"dom":    "../../etc/passwd", // the domain's CHECK rejects it
		"shorts": "{abcdefgh}",       // an element longer than varchar(5)
		"ok":     "fine",
		"oks":    `{"a b",c}`, // written as {"a b",c}
	}
	c, err := f.openRewriter(t).Rewrite(ctx, f.only(func(p ref.Place, old []byte) ([]byte, error) {
		if !strings.HasSuffix(p.Table, ".limits") {
			return nil, nil
		}
		if nw, ok := edit[p.Column]; ok {
			return []byte(nw), nil
		}
		return nil, nil
	}), RewriteOptions{})
	refused := f.unitErrors(t, err)
	for col, want := range map[string]string{
		"short":  "would not keep the new value as it is",
		"fixed":  "would not keep the new value as it is",
		"doc":    "invalid input syntax for type json",
		"chk":    "violates check constraint",
		"dom":    "violates check constraint",
		"shorts": "would not keep the new value as it is",
	} {
		u := refused["limits[id=1]."+col]
		if u == nil || !strings.Contains(u.Error(), want) {
			t.Errorf("%s: %v; want %q", col, u, want)
		}
	}
	if len(refused) != 6 || c.Changed != 2 {
		t.Errorf("refused %d, counts %+v", len(refused), c)
	}
	vals := f.values(t)
	for col, want := range map[string]string{"short": "abc", "fixed": "abc", "doc": `{"a": 1}`, "chk": "abc", "dom": "abc",
		"shorts": "{abc}", "ok": "fine", "oks": `{"a b",c}`} {
		if got := vals["limits[id=1]."+col]; got != want {
			t.Errorf("%s = %q, want %q", col, got, want)
		}
	}
}

// TestRewritePostgresPrepareError: Prepare failing stops the rewrite; the change
// it refused is not written.
func TestRewritePostgresPrepareError(t *testing.T) {
	f := newPGFixture(t)
	edit := f.only(func(p ref.Place, old []byte) ([]byte, error) {
		if strings.HasSuffix(p.Table, ".messages") && p.Column == "role" {
			return []byte(strings.ToUpper(string(old))), nil
		}
		return nil, nil
	})
	j := journal{failAt: 2}
	c, err := f.openRewriter(t).Rewrite(context.Background(), edit, j.options(0))
	if !errors.Is(err, errPrepare) || !strings.Contains(err.Error(), "messages[id=2].role") {
		t.Fatalf("err = %v; want the Prepare error naming messages[id=2].role", err)
	}
	vals := f.values(t)
	if vals["messages[id=1].role"] != "USER" || vals["messages[id=2].role"] != "assistant" || vals["messages[id=3].role"] != "user" || c.Changed != 1 {
		t.Errorf("roles %q %q %q, counts %+v", vals["messages[id=1].role"], vals["messages[id=2].role"], vals["messages[id=3].role"], c)
	}
}

// TestRewritePostgresGeneratedColumns: a generated column is read, and
// offered, but never written (PostgreSQL refuses it). One computed from a
// column the rewrite changes follows it, and the rewrite is complete; one
// computed from what is not rewritten (a number) still names the old place
// and fails alone.
func TestRewritePostgresGeneratedColumns(t *testing.T) {
	ctx := context.Background()
	f := newPGFixture(t)
	s := f.schema
	f.exec(t, `CREATE TABLE `+s+`.msgs(id text PRIMARY KEY, content text, media_id int,
	path text GENERATED ALWAYS AS (content::jsonb ->> 'path') STORED,
	file text GENERATED ALWAYS AS ('`+cofferMediaDir+`' || media_id::text || '.jpg') STORED);
INSERT INTO `+s+`.msgs(id, content, media_id) VALUES
	('m1', '{"path":"`+cofferMediaDir+`a.jpg"}', NULL),
	('m2', '{"path":"`+cofferMediaDir+`b.jpg"}', 7);`)
	items, _ := walkAll(t, f.open(t, f.url, ""))
	if got, ok := findText(items, s+".msgs", "id=m2", "file"); !ok || got != cofferMediaDir+"7.jpg" {
		t.Errorf("Walk: m2.file = %q (%v)", got, ok)
	}
	var seen []string
	edit := replaceEdit(cofferMediaDir, cofferBucket, nil)
	var j journal
	c, err := f.openRewriter(t).Rewrite(ctx, f.only(func(p ref.Place, old []byte) ([]byte, error) {
		if p.Table == s+".msgs" {
			seen = append(seen, strings.TrimPrefix(p.String(), s+"."))
		}
		return edit(p, old)
	}), j.options(0))
	units := f.unitErrors(t, err)
	if len(units) != 1 || units["msgs[id=m2].file"] == nil || units["msgs[id=m2].file"].Err.Error() != generatedRefusal {
		t.Fatalf("Rewrite: %v", err)
	}
	if c.Changed != 2 || c.Conflicts+c.Retried+c.Gone != 0 {
		t.Errorf("counts = %+v", c)
	}
	want := []string{
		"msgs[id=m1].id", "msgs[id=m1].content", "msgs[id=m1].path",
		"msgs[id=m2].id", "msgs[id=m2].content", "msgs[id=m2].path", "msgs[id=m2].file",
		// Edited again once the contents were written.
		"msgs[id=m1].path", "msgs[id=m2].path", "msgs[id=m2].file",
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("Edit saw %q, want %q", seen, want)
	}
	vals := f.values(t)
	if vals["msgs[id=m1].path"] != cofferBucket+"a.jpg" || vals["msgs[id=m2].path"] != cofferBucket+"b.jpg" || vals["msgs[id=m2].file"] != cofferMediaDir+"7.jpg" {
		t.Errorf("after the rewrite: %v", vals)
	}
}
