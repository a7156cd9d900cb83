package owner

import (
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
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

// FuzzHintResolves: a reference's hint names the user of the key the
// resolver reads it as, however it is spelled (".", "..", "//").
func FuzzHintResolves(f *testing.F) {
	for _, s := range []string{"agent-inputs/alice/t1/uploads/a.png", "agent-inputs/alice/t1/uploads/../../../bob/t2/uploads/g.png", "agent-inputs//alice/./t1/uploads/a.png", "x/../agent-inputs/u/t/uploads/f", "agent-inputs/a/b/uploads/../../../../agent-inputs/c/d/uploads/e"} {
		f.Add(s)
	}
	local := ref.NewLocalResolver("/srv/store", nil, nil)
	bucket := ref.NewBucketResolver("s3", "media", "")
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range []struct {
			x   ref.Reference
			r   *ref.Resolver
			dir string
		}{
			{ref.Reference{Raw: "/srv/store/" + s, Kind: ref.AbsPath, Path: "/srv/store/" + s}, local, "/srv/store/"},
			{ref.Reference{Raw: "media:" + s, Kind: ref.BucketPair, Bucket: "media", Path: s}, bucket, ""},
		} {
			hint := Hint(c.x)
			if hint == "" {
				continue
			}
			st, key := c.r.Resolve(c.x)
			if st != ref.Inside {
				continue
			}
			hu, _, _ := AgentRunsOwner(hint)
			ku, _, ok := AgentRunsOwner(c.dir + key)
			if !ok || hu != ku {
				t.Fatalf("%q: hint %q names %q, the key %q %q", c.x.Raw, hint, hu, key, ku)
			}
		}
	})
}
