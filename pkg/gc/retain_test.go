package gc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
	"github.com/mediactl/mediactl/pkg/verify"
)

// forgeSession is a session as forge's MemoryStore.Save writes it.
type forgeSession struct {
	TaskID   string         `json:"task_id"`
	Messages []forgeMessage `json:"messages"`
	Summary  string         `json:"summary,omitempty"`
}

type forgeMessage struct {
	Role      string      `json:"role"`
	Content   string      `json:"content"`
	Parts     []forgePart `json:"parts,omitempty"`
	ToolCalls []forgeCall `json:"tool_calls,omitempty"`
}

// forgeCall is a tool call; its arguments are the JSON text the model wrote.
type forgeCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// toolSession is a session whose assistant turn calls tool with arguments.
func toolSession(id, tool, arguments string) forgeSession {
	c := forgeCall{ID: "call_1", Type: "function"}
	c.Function.Name, c.Function.Arguments = tool, arguments
	return forgeSession{TaskID: id, Messages: []forgeMessage{{Role: "assistant", ToolCalls: []forgeCall{c}}}}
}

type forgePart struct {
	Type  string      `json:"type"`
	Text  string      `json:"text,omitempty"`
	Media *forgeMedia `json:"media,omitempty"`
}

type forgeMedia struct {
	MIMEType string `json:"mimeType"`
	URI      string `json:"uri"`
}

// saveForge writes s as forge does: json.MarshalIndent, <id>.json.tmp, rename.
func saveForge(t testing.TB, dir string, s forgeSession) {
	t.Helper()
	b, err := json.MarshalIndent(s, "", "  ")
	must(t, err)
	p := filepath.Join(dir, s.TaskID+".json")
	must(t, os.WriteFile(p+".tmp", b, 0o600))
	must(t, os.Rename(p+".tmp", p))
}

// forgeWork is a forge work directory with blobs aged 48 hours.
type forgeWork struct {
	root, inbound, sessions string
}

func newForgeWork(t testing.TB) *forgeWork {
	root := filepath.Join(t.TempDir(), "work")
	w := &forgeWork{root: root, inbound: filepath.Join(root, ".forge", "files", "inbound"), sessions: filepath.Join(root, ".forge", "sessions")}
	must(t, os.MkdirAll(w.inbound, 0o700))
	must(t, os.MkdirAll(w.sessions, 0o700))
	return w
}

func (w *forgeWork) blob(t testing.TB, content string) string {
	k := name(content)
	p := filepath.Join(w.inbound, k)
	must(t, os.WriteFile(p, []byte(content), 0o600))
	old := time.Now().Add(-48 * time.Hour)
	must(t, os.Chtimes(p, old, old))
	return k
}

func textSession(id, text string) forgeSession {
	return forgeSession{TaskID: id, Messages: []forgeMessage{{Role: "assistant", Content: text}}}
}

// TestOneRetentionModel: gc's plan, migrate's --delete-source selection and
// verify's orphans decide alike on one store, for session spellings that the
// precise extractor does not resolve into the store but that still name a
// blob. migrate reads them as it does after a --rewrite into a bucket mounted
// in forge's files dir: text naming a copy there does not keep its source,
// and the path after it in the same string still keeps its blob.
func TestOneRetentionModel(t *testing.T) {
	ctx := context.Background()
	w := newForgeWork(t)
	precise := w.blob(t, "precisely referenced")
	remote := filepath.Join(w.root, ".forge", "files", "remote")
	must(t, os.MkdirAll(remote, 0o700))
	orphanA := w.blob(t, "orphan a")
	orphanB := w.blob(t, "orphan b")
	saveForge(t, w.sessions, forgeSession{TaskID: "t-precise", Messages: []forgeMessage{{Role: "user", Content: "What's in this image?",
		Parts: []forgePart{{Type: "image", Media: &forgeMedia{MIMEType: "image/png", URI: filepath.Join(w.inbound, precise)}}}}}})

	cases := []struct {
		name    string
		session func(key string) forgeSession
	}{
		{"relocated work directory", func(k string) forgeSession {
			return forgeSession{TaskID: "t-relocated", Messages: []forgeMessage{{Role: "user", Content: "look",
				Parts: []forgePart{{Type: "image", Media: &forgeMedia{MIMEType: "image/png", URI: "/srv/old-host/agent/.forge/files/inbound/" + k}}}}}}
		}},
		{"localhost link", func(k string) forgeSession {
			return textSession("t-localhost", "preview: http://localhost:8080/files/inbound/"+k+" (open it)")
		}},
		{"compaction summary with an escaped newline", func(k string) forgeSession {
			s := textSession("t-summary", "ok")
			s.Summary = "- [user] the contract\n- [tool_call] cli_execute\n- [tool] {\"exit_code\":0,\"stdout\":\"converted " +
				w.inbound + "/" + k + "\\n\"}\n- [assistant] It is a 2-page contract.\n"
			return s
		}},
		{"digest in prose", func(k string) forgeSession {
			return textSession("t-digest", "the upload with sha256 "+strings.TrimSuffix(k, ".png")+" is the signed one")
		}},
		{"a query parameter after a copy's path", func(k string) forgeSession {
			return toolSession("t-compare", "open_url", `{"url":"http://127.0.0.1:8080/compare?left=`+remote+"/"+precise+"&right="+w.inbound+"/"+k+`"}`)
		}},
		{"a path list after a copy's path", func(k string) forgeSession {
			return toolSession("t-diff", "shell", `{"command":"IMAGES=`+remote+"/"+precise+":"+w.inbound+"/"+k+` python3 diff.py"}`)
		}},
	}
	var named []string
	for i, c := range cases {
		k := w.blob(t, fmt.Sprint("case ", i))
		named = append(named, k)
		saveForge(t, w.sessions, c.session(k))
	}

	st, err := store.Open(ctx, w.inbound)
	must(t, err)
	defer st.Close()
	src, err := sessions.Open(ctx, w.sessions, sessions.Options{})
	must(t, err)
	defer src.Close()
	srcs := []sessions.Source{src}

	// gc.
	plan, err := gc.MakePlan(ctx, gc.Options{Store: st, Sessions: srcs, Bases: []string{w.root}})
	must(t, err)
	if !plan.Complete {
		t.Fatalf("plan incomplete: %v", plan.Problems)
	}
	gcKeys := keys(plan)
	if want := sorted(orphanA, orphanB); !slices.Equal(gcKeys, want) {
		t.Fatalf("gc would delete %v, want only the orphans %v", gcKeys, want)
	}

	// verify's orphans: every blob is old, so the orphans are gc's candidates.
	// (Read before migrate --delete-source below moves them out.)
	vr, err := verify.Run(ctx, verify.Options{Store: st, Sessions: srcs, Bases: []string{w.root}, Jobs: 1})
	must(t, err)
	if vr.Sessions == nil || vr.Sessions.Orphans != int64(len(gcKeys)) || vr.Sessions.OrphanBytes != plan.CandidateBytes {
		t.Fatalf("verify: %+v, gc: %d candidates of %d bytes", vr.Sessions, len(gcKeys), plan.CandidateBytes)
	}

	// migrate --delete-source, after a proven copy of every blob.
	dst, err := store.Open(ctx, "file://"+filepath.ToSlash(remote))
	must(t, err)
	defer dst.Close()
	tmpl, err := migrate.ParseTemplate("{files_dir}/remote/{key}", map[string]string{"files_dir": filepath.Dir(w.inbound)})
	must(t, err)
	res := scan.NewResolver(st, []string{w.root})
	// The retention model as migrate's check reads the sessions: text naming
	// a copy keeps the copy, not the source.
	ret, err := retain.Mark(ctx, st, srcs, retain.MarkOptions{Stores: []scan.Target{{Store: st, Resolver: res}}, CopiedTo: tmpl.CopyPrefixes(dst.(store.Bucket), w.inbound)})
	must(t, err)
	rep, err := migrate.Run(ctx, migrate.RunOptions{
		Options:      migrate.Options{From: st, To: dst, Jobs: 2},
		JournalPath:  filepath.Join(t.TempDir(), "journal.jsonl"),
		Template:     tmpl,
		Resolver:     res,
		DeleteSource: true,
		MinAge:       retain.DefaultMinAge,
		Sessions:     srcs,
		Bases:        []string{w.root},
	})
	must(t, err)
	if rep.Copy == nil || rep.Copy.Copied != int64(3+len(cases)) {
		t.Fatalf("copy %+v", rep.Copy)
	}
	sel := rep.Delete
	if sel == nil || sel.Refused != "" || sel.Result == nil {
		t.Fatalf("delete-source %+v", sel)
	}
	var migrateKeys []string
	must(t, trash.EachTrashed(ctx, st, func(_ trash.RunRecord, b trash.Trashed) error {
		if b.Run == sel.Result.Run {
			migrateKeys = append(migrateKeys, b.Key)
		}
		return nil
	}))
	slices.Sort(migrateKeys)
	if int64(len(migrateKeys)) != sel.Candidates || !slices.Equal(migrateKeys, gcKeys) {
		t.Fatalf("migrate --delete-source moved %v of %d candidates, gc would delete %v", migrateKeys, sel.Candidates, gcKeys)
	}
	if sel.Kept+sel.KeptRetained != int64(1+len(cases)) || sel.KeptYoung != 0 {
		t.Fatalf("kept: %d by a precise reference, %d by the retention rule, %d young", sel.Kept, sel.KeptRetained, sel.KeptYoung)
	}
	for i, c := range cases {
		id, ok := ret.Lookup(named[i])
		if !ok || !ret.KeptID(id) {
			t.Errorf("%s: %s is not kept by the retention model", c.name, named[i])
		}
		if !rep.Check.Referenced[named[i]] {
			t.Logf("%s: the precise check alone would have let %s go", c.name, named[i])
		}
	}
}

// A companion rule that cannot tell a sidecar's upload (its folder could not
// be listed) makes the plan incomplete, which no sweep may act on: the
// sidecar may belong to an upload in use.
func TestCompanionUnknownRemovesNothing(t *testing.T) {
	f := newFixture(t)
	old := time.Now().Add(-72 * time.Hour)
	for _, key := range []string{"0a1b2c3d4e5f60718293a4b5c6d7e8f9.png", "0a1b2c3d4e5f60718293a4b5c6d7e8f9.json", "1b2c3d4e5f60718293a4b5c6d7e8f90a.json"} {
		p := filepath.Join(f.inbound, key)
		must(t, os.WriteFile(p, []byte(key), 0o600))
		must(t, os.Chtimes(p, old, old))
	}
	f.session(t, "a.json", "0a1b2c3d4e5f60718293a4b5c6d7e8f9.png")
	cannotTell := func(key string) (string, bool) {
		if strings.HasSuffix(key, ".json") {
			return "", true
		}
		return "", false
	}
	p := f.plan(t, gc.Options{Companion: cannotTell})
	if p.Complete || len(p.Problems) == 0 || !strings.Contains(strings.Join(p.Problems, "\n"), "cannot tell whether it is the sidecar") {
		t.Fatalf("plan complete %v, problems %q; want it incomplete, naming the sidecar", p.Complete, p.Problems)
	}
	if err := p.Check(gc.Guards{AllowNoReferences: true}); !errors.Is(err, gc.ErrIncomplete) {
		t.Fatalf("Check = %v, want ErrIncomplete", err)
	}
}

// TestCompanion: a companion lives and dies with its owner when the owner is
// in the store, and follows the rule on its own when it is not.
func TestCompanion(t *testing.T) {
	f := newFixture(t)
	write := func(key, content string, age time.Duration) string {
		p := filepath.Join(f.inbound, key)
		must(t, os.WriteFile(p, []byte(content), 0o600))
		mt := time.Now().Add(-age)
		must(t, os.Chtimes(p, mt, mt))
		return key
	}
	old := 72 * time.Hour
	// Uploads named <id><ext>, sidecars <id>.json beside them.
	usedUp, usedSide := write("0a1b2c3d4e5f60718293a4b5c6d7e8f9.png", "used upload", old), write("0a1b2c3d4e5f60718293a4b5c6d7e8f9.json", `{"id": "0a1b…"}`, old)
	goneUp, goneSide := write("1b2c3d4e5f60718293a4b5c6d7e8f90a.jpg", "unused upload", old), write("1b2c3d4e5f60718293a4b5c6d7e8f90a.json", `{"id": "1b2c…"}`, old)
	sideOnlyUp, sideOnlySide := write("2c3d4e5f60718293a4b5c6d7e8f90a1b.pdf", "upload named by its sidecar", old), write("2c3d4e5f60718293a4b5c6d7e8f90a1b.json", `{}`, old)
	youngUp, youngSide := write("3d4e5f60718293a4b5c6d7e8f90a1b2c.png", "upload with a fresh sidecar", old), write("3d4e5f60718293a4b5c6d7e8f90a1b2c.json", `{}`, time.Minute)
	lonelyRef := write("4e5f60718293a4b5c6d7e8f90a1b2c3d.json", `{}`, old)   // owner absent, named
	lonelyUnref := write("5f60718293a4b5c6d7e8f90a1b2c3d4e.json", `{}`, old) // owner absent, not named
	owners := map[string]string{
		usedSide: usedUp, goneSide: goneUp, sideOnlySide: sideOnlyUp, youngSide: youngUp,
		lonelyRef: "4e5f60718293a4b5c6d7e8f90a1b2c3d.png", lonelyUnref: "5f60718293a4b5c6d7e8f90a1b2c3d4e.png",
	}
	companion := func(key string) (string, bool) { o, ok := owners[key]; return o, ok }
	f.session(t, "a.json", usedUp, sideOnlySide, lonelyRef)

	p := f.plan(t, gc.Options{Companion: companion})
	if got, want := keys(p), sorted(goneUp, goneSide, lonelyUnref); !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
	// Without companions the rule alone decides: a name is kept by its hex
	// part, so a named upload keeps its sidecar and a named sidecar its
	// upload; the rest is a candidate.
	p = f.plan(t, gc.Options{})
	if got, want := keys(p), sorted(goneUp, goneSide, youngUp, lonelyUnref); !slices.Equal(got, want) {
		t.Fatalf("without Companion: candidates %v, want %v", got, want)
	}
	// The size cap takes an owner with its companion, never one alone.
	total := p.Bytes
	p = f.plan(t, gc.Options{Companion: companion, MaxSize: total - 1})
	if got, want := keys(p), sorted(goneUp, goneSide); !slices.Equal(got, want) {
		t.Fatalf("size cap: candidates %v, want %v", got, want)
	}
}
