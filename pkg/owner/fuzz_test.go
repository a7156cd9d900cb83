package owner

import (
	"strings"
	"testing"
)

// FuzzAgentRunsOwner: whatever the key, an owner found is a non-empty path
// segment that the key spells under agent-inputs/.
func FuzzAgentRunsOwner(f *testing.F) {
	for _, s := range []string{"agent-inputs/u1/t1/uploads/f.png", "s3://b/agent-inputs/u/t/uploads/x", "agent-inputs//t/uploads/x", "agent-inputs/a/b/uploads/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, th, ok := AgentRunsOwner(s)
		if !ok {
			return
		}
		if u == "" || th == "" || strings.Contains(u, "/") || strings.Contains(th, "/") || u == ".." || th == ".." {
			t.Fatalf("AgentRunsOwner(%q) = %q, %q", s, u, th)
		}
		if !strings.Contains(s, "agent-inputs/"+u+"/"+th+"/uploads/") {
			t.Fatalf("AgentRunsOwner(%q) = %q, %q: not spelled in the key", s, u, th)
		}
	})
}

// FuzzLookup: an untrusted document never makes the lookup fail, and a
// pointer that ParseBy accepts is looked up without a panic.
func FuzzLookup(f *testing.F) {
	f.Add([]byte(`{"user": {"id": "u"}}`), "/user/id")
	f.Add([]byte(`[1, {"a~b": "x"}]`), "/1/a~0b")
	f.Add([]byte(`{"a": "`), "/a")
	f.Fuzz(func(t *testing.T, doc []byte, p string) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		if _, err := ParseBy(Rule{}, p); err != nil {
			return
		}
		_ = Lookup(doc, p)
	})
}
