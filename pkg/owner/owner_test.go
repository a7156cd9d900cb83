package owner

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions"
)

func TestTaskID(t *testing.T) {
	for in, want := range map[string]string{
		"/w/.forge/sessions/t-1.json":         "t-1",
		"/w/.forge/sessions/t-3.json.tmp":     "t-3",
		"sessions/slack_C1_2.json.gz":         "slack_C1_2",
		"t-9.JSONL":                           "t-9",
		"/w/.forge/sessions/archive/x.ndjson": "x",
	} {
		if got := TaskID(in); got != want {
			t.Errorf("TaskID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAgentRunsOwner(t *testing.T) {
	for _, c := range []struct {
		in, user, thread string
		ok               bool
	}{
		{"agent-inputs/u1/t1/uploads/f.png", "u1", "t1", true},
		{"s3://media/agent-inputs/u2/t9/uploads/a/b.pdf", "u2", "t9", true},
		{"media:agent-inputs/u3/t/uploads/x", "u3", "t", true},
		{"agent-inputs/u1/t1/other/f.png", "", "", false},
		{"my-agent-inputs/u1/t1/uploads/f.png", "", "", false},
		{"x/my-agent-inputs/u/t/uploads/f agent-inputs/u4/t4/uploads/g", "", "", false},
		{"agent-inputs/../t1/uploads/f.png", "", "", false},
		{"agent-inputs/u1/t1/uploads/", "", "", false},
		{"", "", "", false},
	} {
		u, th, ok := AgentRunsOwner(c.in)
		if u != c.user || th != c.thread || ok != c.ok {
			t.Errorf("AgentRunsOwner(%q) = %q, %q, %v; want %q, %q, %v", c.in, u, th, ok, c.user, c.thread, c.ok)
		}
	}
}

func TestParseBy(t *testing.T) {
	r, err := ParseBy(Rule{Layout: "forge"}, "/user/id")
	if err != nil || r.Pointer != "/user/id" || r.Layout != "forge" {
		t.Fatalf("pointer: %+v, %v", r, err)
	}
	if r, err = ParseBy(Rule{}, "messages.user_id"); err != nil || r.Column != "messages.user_id" {
		t.Fatalf("column: %+v, %v", r, err)
	}
	for _, bad := range []string{"/a~2", "user id", "x;drop", "/a~"} {
		if _, err := ParseBy(Rule{}, bad); err == nil {
			t.Errorf("ParseBy(%q) accepted", bad)
		}
	}
}

func TestLookup(t *testing.T) {
	doc := []byte(`{"messages": [{"user": {"id": "no"}}], "user": {"id": "u-7", "n": 3}, "a/b": {"~": 42}}` + "\n" + `{"user": {"id": "second"}}`)
	for p, want := range map[string]string{"/user/id": "u-7", "/user/n": "3", "/a~1b/~0": "42", "/missing": "", "/messages/0/user/id": "no"} {
		if got := Lookup(doc, p); got != want {
			t.Errorf("Lookup(%q) = %q, want %q", p, got, want)
		}
	}
	if got := Lookup([]byte(`{"x": [1, 2`), "/x/1"); got != "2" {
		t.Errorf("a truncated document: %q", got)
	}
}

// source is a session source of fixed items.
type source struct{ items []sessions.Item }

func (s *source) String() string { return "src" }
func (s *source) Close() error   { return nil }
func (s *source) Walk(ctx context.Context, fn func(sessions.Item) error) (sessions.Counts, error) {
	for _, it := range s.items {
		if err := fn(it); err != nil {
			return sessions.Counts{}, err
		}
	}
	return sessions.Counts{}, nil
}

// sqlRow is a row of one value; sqlRows one of several (column, value, …).
func sqlRow(table, key, col, val string) sessions.Item {
	return sqlRows(table, key, col, val)
}

func sqlRows(table, key string, colVals ...string) sessions.Item {
	it := sessions.Item{Place: ref.Place{Source: "src", Table: table, Key: key, Offset: -1}, Size: -1}
	for i := 0; i+1 < len(colVals); i += 2 {
		it.Values = append(it.Values, sessions.Value{Column: colVals[i], Text: []byte(colVals[i+1])})
	}
	return it
}

func document(name, body string) sessions.Item {
	return sessions.Item{Place: ref.Place{Source: "/s", Document: name, Offset: -1}, Size: int64(len(body)),
		Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }}
}

// walked is an attributor after a walk, with the tags the walk gave the
// rows, as a scan hands them back with each reference.
type walked struct {
	*Attributor
	tags map[Unit]int64
}

func (w walked) Owner(u Unit, hint string) Owner { return w.Attributor.Owner(u, w.tags[u], hint) }

func (w walked) Time(u Unit) (time.Time, bool) { return w.Attributor.Time(u, w.tags[u]) }

// walk reads the wrapped source as a scan does: every document opened,
// read to its end and closed.
func walk(t *testing.T, a *Attributor, items ...sessions.Item) walked {
	t.Helper()
	w := walked{Attributor: a, tags: map[Unit]int64{}}
	_, err := a.Wrap(&source{items}).Walk(context.Background(), func(it sessions.Item) error {
		if it.Values != nil {
			if it.Tag <= 0 {
				t.Errorf("row %s without a tag", it.Place)
			}
			if old, ok := w.tags[UnitOf(it.Place)]; ok && old != it.Tag && (it.Place.Table == "query" || it.Place.Key == "") {
				t.Errorf("rows of one name %s with tags %d and %d", it.Place, old, it.Tag)
			}
			w.tags[UnitOf(it.Place)] = it.Tag
		}
		if it.Open != nil {
			rc, err := it.Open()
			if err != nil {
				return err
			}
			io.Copy(io.Discard, rc)
			return rc.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestCoffer(t *testing.T) {
	a := NewAttributor(Rule{Layout: "coffer"})
	w := walk(t, a,
		sqlRows("chat_messages", "id=m1", "content", `[{"type":"attachment","path":"/h/.coffer/channel-media/x.png"}]`,
			"conversation_id", "c1", "created_at", "2026-11-30 03:10:19.151316"),
		sqlRows("conversations", "id=c1", "agent_key", "claude_code", "updated_at", "2026-12-01 10:00:00"),
		sqlRow("other", "id=9", "body", "x"),
	)
	if o := w.Owner(Unit{Source: "src", Table: "chat_messages", Key: "id=m1"}, ""); o != (Owner{ID: "c1", Agent: "claude_code"}) {
		t.Errorf("message: %+v", o)
	}
	if o := w.Owner(Unit{Source: "src", Table: "conversations", Key: "id=c1"}, ""); o.ID != "c1" {
		t.Errorf("conversation row: %+v", o)
	}
	if o := w.Owner(Unit{Source: "src", Table: "other", Key: "id=9"}, ""); o.Known() {
		t.Errorf("a table of no conversation is attributed: %+v", o)
	}
	if tm, ok := w.Time(Unit{Source: "src", Table: "chat_messages", Key: "id=m1"}); !ok || tm.Day() != 30 {
		t.Errorf("time: %v %v", tm, ok)
	}
}

func TestForgeAndPointer(t *testing.T) {
	a := NewAttributor(Rule{Layout: "forge"})
	w := walk(t, a, document("/s/slack_C1_2.json", `{"task_id": "slack:C1:2", "messages": []}`), document("/s/t-2.json", `{"messages": []}`))
	if o := w.Owner(Unit{Source: "/s", Document: "/s/slack_C1_2.json"}, ""); o.ID != "slack:C1:2" {
		t.Errorf("task id from the document: %+v", o)
	}
	if o := w.Owner(Unit{Source: "/s", Document: "/s/t-2.json"}, ""); o.ID != "t-2" {
		t.Errorf("task id from the name: %+v", o)
	}

	big := `{"pad": "` + strings.Repeat("x", prefixMax) + `", "user": "late"}`
	a = NewAttributor(Rule{Pointer: "/user"})
	w = walk(t, a, document("/s/a.json", big), document("/s/b.json", `{"x": 1}`), sqlRow("t", "id=1", "meta", `{"user": "row-user"}`))
	if o := w.Owner(Unit{Source: "/s", Document: "/s/a.json"}, ""); o.ID != "late" {
		t.Errorf("a pointer past the first bytes: %+v", o)
	}
	if o := w.Owner(Unit{Source: "/s", Document: "/s/b.json"}, ""); o.Known() {
		t.Errorf("no value at the pointer, yet attributed: %+v", o)
	}
	if o := w.Owner(Unit{Source: "src", Table: "t", Key: "id=1"}, ""); o.ID != "row-user" {
		t.Errorf("a pointer in a row's JSON: %+v", o)
	}
}

func TestPlainAndColumn(t *testing.T) {
	a := NewAttributor(Rule{})
	w := walk(t, a, sqlRow("messages", "id=1", "user_id", "u9"), sqlRow("messages", "id=2", "metadata", "{}"))
	if o := w.Owner(Unit{Source: "src", Table: "messages", Key: "id=1"}, "agent-inputs/u1/t1/uploads/f.png"); o.ID != "u9" {
		t.Errorf("user_id column first: %+v", o)
	}
	if o := w.Owner(Unit{Source: "src", Table: "messages", Key: "id=2"}, "agent-inputs/u1/t1/uploads/f.png"); o.ID != "u1" {
		t.Errorf("key prefix: %+v", o)
	}
	if o := w.Owner(Unit{Source: "src", Table: "messages", Key: "id=2"}, "x.png"); o.ID != "messages[id=2]" {
		t.Errorf("the row: %+v", o)
	}
	if o := w.Owner(Unit{Source: "/s", Document: "/s/sub/f.json"}, ""); o.ID != "sub/f.json" {
		t.Errorf("the file: %+v", o)
	}

	a = NewAttributor(Rule{Column: "messages.tenant"})
	w = walk(t, a, sqlRow("messages", "id=1", "tenant", "acme"), sqlRow("other", "id=1", "tenant", "nope"))
	if o := w.Owner(Unit{Source: "src", Table: "messages", Key: "id=1"}, ""); o.ID != "acme" {
		t.Errorf("column: %+v", o)
	}
	if o := w.Owner(Unit{Source: "src", Table: "other", Key: "id=1"}, ""); o.Known() {
		t.Errorf("another table's column: %+v", o)
	}
	if o := w.Owner(Unit{Source: "/s", Document: "/s/f.json"}, ""); o.Known() {
		t.Errorf("a document by a column: %+v", o)
	}
}

// Latest, Seen and Tracked answer for units with references or not: a
// coffer conversation is as recent as its own row, a forgotten owner's rows
// without references are found by tag, a row of its own and a document by
// name.
func TestLatestSeenTracked(t *testing.T) {
	a := NewAttributor(Rule{Layout: "coffer"})
	a.Track(func(id string) bool { return id == "c1" })
	w := walk(t, a,
		sqlRows("chat_messages", "id=m1", "conversation_id", "c1", "created_at", "2026-11-30 03:10:19"),
		sqlRows("chat_messages", "id=m2", "conversation_id", "c2", "created_at", "2026-12-03 00:00:00"),
		sqlRows("conversations", "id=c1", "agent_key", "claude_code", "updated_at", "2026-12-01 10:00:00"),
		sqlRows("chat_messages", "id=m3", "conversation_id", "c1", "content", "[]"),
	)
	if tm, ok := a.Latest("c1"); !ok || !tm.Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("Latest(c1) = %v %v", tm, ok)
	}
	if _, ok := a.Latest("c9"); ok || !a.Seen("c2") || a.Seen("c9") {
		t.Error("an owner no unit names is seen, or one that is is not")
	}
	var got []string
	a.Tracked(func(u Unit, tag int64) {
		if tag != w.tags[u] {
			t.Errorf("%s: tag %d, the walk gave %d", u, tag, w.tags[u])
		}
		got = append(got, u.String())
	})
	if want := []string{"chat_messages[id=m1]", "conversations[id=c1]", "chat_messages[id=m3]"}; !slices.Equal(got, want) {
		t.Errorf("tracked %v, want %v", got, want)
	}

	// The plain rule: a row is its own owner, a document its file.
	a = NewAttributor(Rule{})
	a.Track(func(id string) bool { return id == "messages[id=2]" || id == "sub/f.json" })
	walk(t, a, sqlRow("messages", "id=1", "user_id", "u9"), sqlRow("messages", "id=2", "metadata", "{}"), document("/s/sub/f.json", `{}`))
	got = nil
	a.Tracked(func(u Unit, _ int64) { got = append(got, u.String()) })
	if want := []string{"messages[id=2]", "/s/sub/f.json"}; !slices.Equal(got, want) {
		t.Errorf("tracked %v, want %v", got, want)
	}
	if !a.Seen("u9") || !a.Seen("messages[id=2]") || !a.Seen("sub/f.json") || a.Seen("messages[id=1]") {
		t.Error("Seen")
	}
}

// The rows of a query (keyed by its first column, which may repeat) and of a
// table without a key are weighed by name: the rows under one name are one
// unit with one tag, and two users among them make it no one's.
func TestRowsOfOneName(t *testing.T) {
	a := NewAttributor(Rule{Pointer: "/user"})
	a.Track(func(id string) bool { return id == "carol" })
	w := walk(t, a,
		sqlRows("query", "conv=c1", "meta", `{"user": "alice"}`, "created_at", "2026-12-01 00:00:00"),
		sqlRows("query", "conv=c1", "meta", `{"user": "bob"}`),
		sqlRows("query", "conv=c2", "meta", `{"user": "carol"}`, "created_at", "2026-12-02 00:00:00"),
		sqlRows("query", "conv=c2", "meta", `{"user": "carol"}`, "created_at", "2026-12-04 00:00:00"),
		sqlRows("notes", "", "meta", `{"user": "dave"}`),
		sqlRows("notes", "", "meta", `{"user": "erin"}`),
	)
	for key, want := range map[string]string{"conv=c1": "", "conv=c2": "carol"} {
		if o := w.Owner(Unit{Source: "src", Table: "query", Key: key}, ""); o.ID != want {
			t.Errorf("query rows %s: owner %+v, want %q", key, o, want)
		}
	}
	if o := w.Owner(Unit{Source: "src", Table: "notes"}, ""); o.Known() {
		t.Errorf("rows without a key, of two users: %+v", o)
	}
	if tm, ok := a.Latest("carol"); !ok || tm.Day() != 4 {
		t.Errorf("Latest(carol) = %v %v", tm, ok)
	}
	if a.Seen("alice") || a.Seen("bob") || !a.Seen("carol") {
		t.Error("Seen: a user of a name of two users is seen, or carol is not")
	}
	var got []string
	a.Tracked(func(u Unit, tag int64) {
		if tag != w.tags[u] || tag == 0 {
			t.Errorf("%s: tag %d, the walk's %d", u, tag, w.tags[u])
		}
		got = append(got, u.String())
	})
	if !slices.Equal(got, []string{"query[conv=c2]"}) {
		t.Errorf("tracked %v", got)
	}
}

// A column's time layout is tried first for its next value, and a value in
// another layout is read all the same.
func TestParseTimeLayouts(t *testing.T) {
	values := []string{"2026-11-30 03:10:19.151316", "2026-11-30 03:10:20", "2026-11-30T03:10:19Z", "2026-11-30T03:10:19.5+05:30",
		"2026-11-30 03:10:19+05:30", "2026-11-30 03:10:19+05", "2026-11-30T03:10:19", "2026-11-30", " 2026-11-30 01:02:03 ", "2026-11-30 03:10:19.151316",
		"not a time", "30/11/2026", "2026-11-30 25:00:00"}
	last := int8(-1)
	for _, v := range values {
		fresh := int8(-1)
		want, wantOK := parseTime(v, &fresh)
		got, ok := parseTime(v, &last)
		if ok != wantOK || !got.Equal(want) {
			t.Errorf("%q after the column's previous value: %v %v, on its own: %v %v", v, got, ok, want, wantOK)
		}
	}
	// A text two layouts read, they read as the same time (a "Z" zone):
	// which is tried first changes nothing.
	for _, zone := range []*time.Location{time.UTC, time.FixedZone("", 5*3600+1800), time.FixedZone("", -7*3600)} {
		for i, layout := range timeLayouts {
			v := time.Date(2026, 11, 30, 3, 10, 19, 5000, zone).Format(layout)
			first, _ := time.Parse(layout, v)
			for j := range timeLayouts {
				if other, err := time.Parse(timeLayouts[j], v); err == nil && !other.Equal(first) {
					t.Errorf("%q: layout %d reads %v, layout %d %v", v, i, first, j, other)
				}
			}
		}
	}
	if _, ok := parseTime("2026-11-30 03:10:19", &last); !ok || timeLayouts[last] != "2006-01-02 15:04:05.999999999" {
		t.Errorf("layout noted: %d", last)
	}
}
