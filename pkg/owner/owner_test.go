package owner

import (
	"context"
	"io"
	"strings"
	"testing"

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

// walk reads the wrapped source as a scan does: every document opened,
// read to its end and closed.
func walk(t *testing.T, a *Attributor, items ...sessions.Item) {
	t.Helper()
	_, err := a.Wrap(&source{items}).Walk(context.Background(), func(it sessions.Item) error {
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
}

func TestCoffer(t *testing.T) {
	a := NewAttributor(Rule{Layout: "coffer"})
	walk(t, a,
		sqlRows("chat_messages", "id=m1", "content", `[{"type":"attachment","path":"/h/.coffer/channel-media/x.png"}]`,
			"conversation_id", "c1", "created_at", "2026-11-30 03:10:19.151316"),
		sqlRows("conversations", "id=c1", "agent_key", "claude_code", "updated_at", "2026-12-01 10:00:00"),
		sqlRow("other", "id=9", "body", "x"),
	)
	if o := a.Owner(Unit{Source: "src", Table: "chat_messages", Key: "id=m1"}, ""); o != (Owner{ID: "c1", Agent: "claude_code"}) {
		t.Errorf("message: %+v", o)
	}
	if o := a.Owner(Unit{Source: "src", Table: "conversations", Key: "id=c1"}, ""); o.ID != "c1" {
		t.Errorf("conversation row: %+v", o)
	}
	if o := a.Owner(Unit{Source: "src", Table: "other", Key: "id=9"}, ""); o.Known() {
		t.Errorf("a table of no conversation is attributed: %+v", o)
	}
	if tm, ok := a.Time(Unit{Source: "src", Table: "chat_messages", Key: "id=m1"}); !ok || tm.Day() != 30 {
		t.Errorf("time: %v %v", tm, ok)
	}
}

func TestForgeAndPointer(t *testing.T) {
	a := NewAttributor(Rule{Layout: "forge"})
	walk(t, a, document("/s/slack_C1_2.json", `{"task_id": "slack:C1:2", "messages": []}`), document("/s/t-2.json", `{"messages": []}`))
	if o := a.Owner(Unit{Source: "/s", Document: "/s/slack_C1_2.json"}, ""); o.ID != "slack:C1:2" {
		t.Errorf("task id from the document: %+v", o)
	}
	if o := a.Owner(Unit{Source: "/s", Document: "/s/t-2.json"}, ""); o.ID != "t-2" {
		t.Errorf("task id from the name: %+v", o)
	}

	big := `{"pad": "` + strings.Repeat("x", prefixMax) + `", "user": "late"}`
	a = NewAttributor(Rule{Pointer: "/user"})
	walk(t, a, document("/s/a.json", big), document("/s/b.json", `{"x": 1}`), sqlRow("t", "id=1", "meta", `{"user": "row-user"}`))
	if o := a.Owner(Unit{Source: "/s", Document: "/s/a.json"}, ""); o.ID != "late" {
		t.Errorf("a pointer past the first bytes: %+v", o)
	}
	if o := a.Owner(Unit{Source: "/s", Document: "/s/b.json"}, ""); o.Known() {
		t.Errorf("no value at the pointer, yet attributed: %+v", o)
	}
	if o := a.Owner(Unit{Source: "src", Table: "t", Key: "id=1"}, ""); o.ID != "row-user" {
		t.Errorf("a pointer in a row's JSON: %+v", o)
	}
}

func TestPlainAndColumn(t *testing.T) {
	a := NewAttributor(Rule{})
	walk(t, a, sqlRow("messages", "id=1", "user_id", "u9"), sqlRow("messages", "id=2", "metadata", "{}"))
	if o := a.Owner(Unit{Source: "src", Table: "messages", Key: "id=1"}, "agent-inputs/u1/t1/uploads/f.png"); o.ID != "u9" {
		t.Errorf("user_id column first: %+v", o)
	}
	if o := a.Owner(Unit{Source: "src", Table: "messages", Key: "id=2"}, "agent-inputs/u1/t1/uploads/f.png"); o.ID != "u1" {
		t.Errorf("key prefix: %+v", o)
	}
	if o := a.Owner(Unit{Source: "src", Table: "messages", Key: "id=2"}, "x.png"); o.ID != "messages[id=2]" {
		t.Errorf("the row: %+v", o)
	}
	if o := a.Owner(Unit{Source: "/s", Document: "/s/sub/f.json"}, ""); o.ID != "sub/f.json" {
		t.Errorf("the file: %+v", o)
	}

	a = NewAttributor(Rule{Column: "messages.tenant"})
	walk(t, a, sqlRow("messages", "id=1", "tenant", "acme"), sqlRow("other", "id=1", "tenant", "nope"))
	if o := a.Owner(Unit{Source: "src", Table: "messages", Key: "id=1"}, ""); o.ID != "acme" {
		t.Errorf("column: %+v", o)
	}
	if o := a.Owner(Unit{Source: "src", Table: "other", Key: "id=1"}, ""); o.Known() {
		t.Errorf("another table's column: %+v", o)
	}
	if o := a.Owner(Unit{Source: "/s", Document: "/s/f.json"}, ""); o.Known() {
		t.Errorf("a document by a column: %+v", o)
	}
}
