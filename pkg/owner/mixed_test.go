package owner

import (
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
)

// agent-runs' messages: metadata (JSONB) holds the user and the message's
// attachments as {bucket, path} pairs; a reply holds a snapshot of the
// message it answers.
const (
	aliceMeta = `{"user": {"id": "alice"}, "attachments": [{"type": "binary", "bucket": "agent-runs", "path": "agent-inputs/alice/t1/uploads/cat.png", "mime": "image/png", "filename": "cat.png"}]}`
	bobMeta   = `{"user": {"id": "bob"}, "attachments": [{"type": "binary", "bucket": "agent-runs", "path": "agent-inputs/bob/t2/uploads/cat.png", "mime": "image/png", "filename": "cat.png"}]}`
	aliceSnap = `{"user": {"id": "alice"}, "role": "user", "content": "look at my cat"}`
)

// A unit whose values at --owner-by's pointer name two owners has no single
// owner: it is unattributed, whichever value comes first.
func TestPointerTwoOwners(t *testing.T) {
	a := NewAttributor(Rule{Pointer: "/user/id"})
	w := walk(t, a,
		sqlRows("messages", "id=m1", "reply_to", "", "metadata", aliceMeta),
		sqlRows("messages", "id=m2", "reply_to", aliceSnap, "metadata", bobMeta),
		sqlRows("messages", "id=m3", "metadata", bobMeta, "reply_to", aliceSnap),
		sqlRows("messages", "id=m4", "reply_to", aliceSnap, "metadata", aliceMeta),
		sqlRows("messages", "id=m5", "metadata", `{"user": {"id": "alice"}, "user": {"id": "bob"}}`),
		sqlRows("messages", "id=m6", "metadata", aliceSnap+"\n"+strings.Replace(aliceSnap, "alice", "bob", 1)),
	)
	for key, want := range map[string]string{"id=m1": "alice", "id=m2": "", "id=m3": "", "id=m4": "alice", "id=m5": "", "id=m6": ""} {
		if o := w.Owner(Unit{Source: "src", Table: "messages", Key: key}, ""); o.ID != want {
			t.Errorf("row %s: owner %+v, want %q", key, o, want)
		}
	}
}

// A JSON Lines log is as many values as lines: lines naming two owners make
// the document unattributed, also when the second is past the first bytes.
func TestPointerJSONLines(t *testing.T) {
	line := func(user, text string) string {
		return `{"type": "message", "user": {"id": "` + user + `"}, "text": "` + text + `"}` + "\n"
	}
	pad := strings.Repeat("x", prefixMax)
	a := NewAttributor(Rule{Pointer: "/user/id"})
	w := walk(t, a,
		document("/s/one.jsonl", line("alice", "hi")+line("alice", "my cat")+`{"type": "tool_result", "output": "ok"}`+"\n"),
		document("/s/two.jsonl", line("alice", "hi")+line("bob", "my cat")),
		document("/s/late.jsonl", line("alice", "hi")+line("alice", pad)+line("bob", "my cat")),
		document("/s/big.json", `{"user": {"id": "alice"}, "messages": [{"text": "`+pad+`"}]}`),
	)
	for doc, want := range map[string]string{"/s/one.jsonl": "alice", "/s/two.jsonl": "", "/s/late.jsonl": "", "/s/big.json": "alice"} {
		if o := w.Owner(Unit{Source: "/s", Document: doc}, ""); o.ID != want {
			t.Errorf("%s: owner %+v, want %q", doc, o, want)
		}
	}

	// forge's task_id, in the first bytes: two tasks in one file are no
	// task, and not the file name's either.
	a = NewAttributor(Rule{Layout: "forge"})
	w = walk(t, a, document("/s/t-1.jsonl", `{"task_id": "t-1"}`+"\n"+`{"task_id": "t-2"}`+"\n"))
	if o := w.Owner(Unit{Source: "/s", Document: "/s/t-1.jsonl"}, ""); o.Known() {
		t.Errorf("a forge file of two tasks: %+v", o)
	}
}

// Owner ids are compared as the sessions spell them: an id with a space or
// a no-break space at an end is another owner.
func TestIDsAsSpelled(t *testing.T) {
	a := NewAttributor(Rule{Column: "tenant"})
	w := walk(t, a,
		sqlRows("messages", "id=1", "tenant", "alice"),
		sqlRows("messages", "id=2", "tenant", "alice\u00a0"),
		sqlRows("messages", "id=3", "tenant", " alice"),
	)
	for key, want := range map[string]string{"id=1": "alice", "id=2": "alice\u00a0", "id=3": " alice"} {
		if o := w.Owner(Unit{Source: "src", Table: "messages", Key: key}, ""); o.ID != want {
			t.Errorf("tenant of %s: %q, want %q", key, o.ID, want)
		}
	}

	a = NewAttributor(Rule{Pointer: "/user/id"})
	w = walk(t, a, sqlRow("messages", "id=1", "metadata", `{"user": {"id": "alice "}}`))
	if o := w.Owner(Unit{Source: "src", Table: "messages", Key: "id=1"}, ""); o.ID != "alice " {
		t.Errorf("pointer: %q", o.ID)
	}

	a = NewAttributor(Rule{})
	w = walk(t, a, sqlRow("messages", "id=1", "user_id", "alice\t"))
	if o := w.Owner(Unit{Source: "src", Table: "messages", Key: "id=1"}, ""); o.ID != "alice\t" {
		t.Errorf("user_id: %q", o.ID)
	}

	a = NewAttributor(Rule{Layout: "coffer"})
	w = walk(t, a, sqlRows("chat_messages", "id=m1", "conversation_id", "c1\u2003", "content", "[]"))
	if o := w.Owner(Unit{Source: "src", Table: "chat_messages", Key: "id=m1"}, ""); o.ID != "c1\u2003" {
		t.Errorf("conversation: %q", o.ID)
	}
}

// A reference's key prefix names the user of the key the resolver reads,
// not of its spelling: a path through ".." is read cleaned, and a bucket key
// the resolver refuses (a traversal) names no one.
func TestHintAsResolved(t *testing.T) {
	abs := func(p string) ref.Reference { return ref.Reference{Raw: p, Kind: ref.AbsPath, Path: p} }
	pair := func(k string) ref.Reference {
		return ref.Reference{Raw: "agent-runs:" + k, Kind: ref.BucketPair, Bucket: "agent-runs", Path: k}
	}
	for _, c := range []struct {
		x    ref.Reference
		user string
	}{
		{abs("/srv/buckets/agent-runs/agent-inputs/alice/t1/uploads/cat.png"), "alice"},
		{abs("/srv/buckets/agent-runs/agent-inputs/alice/t1/uploads/../../../bob/t2/uploads/g.png"), "bob"},
		{abs("/srv/buckets/agent-runs/agent-inputs/alice/t1/uploads/../../../../etc/passwd"), ""},
		{abs("/srv/buckets/agent-runs/agent-inputs/alice/./t1/uploads/cat.png"), "alice"},
		{ref.Reference{Raw: "file:///srv/agent-inputs/%62ob/t2/uploads/g.png", Kind: ref.FileURI, Path: "/srv/agent-inputs/bob/t2/uploads/g.png"}, "bob"},
		{ref.Reference{Raw: "file:///srv/agent-inputs/alice/t1/uploads/%2E%2E/%2E%2E/%2E%2E/bob/t2/uploads/g.png", Kind: ref.FileURI, Path: "/srv/agent-inputs/alice/t1/uploads/../../../bob/t2/uploads/g.png"}, "bob"},
		{pair("agent-inputs/alice/t1/uploads/cat.png"), "alice"},
		{pair("agent-inputs/alice/t1/uploads/../../../bob/t2/uploads/g.png"), ""},
		{pair("agent-inputs//alice/t1/uploads/cat.png"), "alice"},
		{ref.Reference{Raw: "s3://agent-inputs/u7/t1/uploads/f.pdf", Kind: ref.BucketURL, Scheme: "s3", Bucket: "agent-inputs", Path: "u7/t1/uploads/f.pdf"}, "u7"},
		{ref.Reference{Raw: "agent-inputs/alice/t1/uploads/cat.png", Kind: ref.RelPath, Path: "agent-inputs/alice/t1/uploads/cat.png"}, ""},
	} {
		user, _, _ := AgentRunsOwner(Hint(c.x))
		if user != c.user {
			t.Errorf("Hint(%q) = %q: user %q, want %q", c.x.Raw, Hint(c.x), user, c.user)
		}
	}

	// agent-runs' messages row without its user_id column: the user is the
	// key's.
	a := NewAttributor(Rule{})
	w := walk(t, a, sqlRow("messages", "id=m2", "metadata", `{}`))
	x := abs("/srv/buckets/agent-runs/agent-inputs/alice/t1/uploads/../../../bob/t2/uploads/g.png")
	if o := w.Owner(Unit{Source: "src", Table: "messages", Key: "id=m2"}, Hint(x)); o.ID != "bob" {
		t.Errorf("a row naming bob's upload through alice's folder: %+v", o)
	}
}

// The unit's own owner and a reference's key prefix: a row's user_id
// column names its owner, a row without one is the key's user's, and a
// document — its own owner is the file — naming a user's upload is
// unattributed: the file and the key disagree.
func TestHintAndUnitOwner(t *testing.T) {
	a := NewAttributor(Rule{})
	w := walk(t, a,
		sqlRows("messages", "id=m1", "user_id", "bob", "metadata", `{}`),
		sqlRows("messages", "id=m2", "metadata", `{}`),
		document("/s/bob-t9.json", `{"messages": []}`),
	)
	hint := Hint(ref.Reference{Raw: "agent-runs:agent-inputs/alice/t1/uploads/cat.png", Kind: ref.BucketPair, Bucket: "agent-runs", Path: "agent-inputs/alice/t1/uploads/cat.png"})
	if o := w.Owner(Unit{Source: "src", Table: "messages", Key: "id=m1"}, hint); o.ID != "bob" {
		t.Errorf("row with user_id: %+v", o)
	}
	if o := w.Owner(Unit{Source: "src", Table: "messages", Key: "id=m2"}, hint); o.ID != "alice" {
		t.Errorf("row without user_id: %+v", o)
	}
	doc := Unit{Source: "/s", Document: "/s/bob-t9.json"}
	if o := w.Owner(doc, hint); o.Known() {
		t.Errorf("bob's document naming alice's upload is %+v", o)
	}
	if o := w.Owner(doc, ""); o.ID != "bob-t9.json" {
		t.Errorf("the document's own references: %+v", o)
	}
}
