package owner

import "testing"

// Owner ids are compared as the sessions spell them: an id with a space or
// a no-break space at an end is another owner.
func TestIDsAsSpelled(t *testing.T) {
	a := NewAttributor(Rule{Column: "tenant"})
	walk(t, a,
		sqlRows("messages", "id=1", "tenant", "alice"),
		sqlRows("messages", "id=2", "tenant", "alice\u00a0"),
		sqlRows("messages", "id=3", "tenant", " alice"),
	)
	for key, want := range map[string]string{"id=1": "alice", "id=2": "alice\u00a0", "id=3": " alice"} {
		if o := a.Owner(Unit{Source: "src", Table: "messages", Key: key}, ""); o.ID != want {
			t.Errorf("tenant of %s: %q, want %q", key, o.ID, want)
		}
	}

	a = NewAttributor(Rule{Pointer: "/user/id"})
	walk(t, a, sqlRow("messages", "id=1", "metadata", `{"user": {"id": "alice "}}`))
	if o := a.Owner(Unit{Source: "src", Table: "messages", Key: "id=1"}, ""); o.ID != "alice " {
		t.Errorf("pointer: %q", o.ID)
	}

	a = NewAttributor(Rule{})
	walk(t, a, sqlRow("messages", "id=1", "user_id", "alice\t"))
	if o := a.Owner(Unit{Source: "src", Table: "messages", Key: "id=1"}, ""); o.ID != "alice\t" {
		t.Errorf("user_id: %q", o.ID)
	}

	a = NewAttributor(Rule{Layout: "coffer"})
	walk(t, a, sqlRows("chat_messages", "id=m1", "conversation_id", "c1\u2003", "content", "[]"))
	if o := a.Owner(Unit{Source: "src", Table: "chat_messages", Key: "id=m1"}, ""); o.ID != "c1\u2003" {
		t.Errorf("conversation: %q", o.ID)
	}
}
