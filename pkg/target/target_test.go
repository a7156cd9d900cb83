package target_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/layout"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/target"
	"github.com/mediactl/mediactl/pkg/usage"
)

// forgeDir is a forge work directory as forge leaves it: one inbound blob
// named by its sha256, one session that points at it by a path relative to
// the work directory, written as forge writes it (json.MarshalIndent to
// <id>.json.tmp, then rename).
type forgeDir struct {
	root, inbound, sessions string
	blob                    string // the blob's key
}

func newForge(t *testing.T) forgeDir {
	t.Helper()
	root := filepath.Join(t.TempDir(), "work")
	f := forgeDir{
		root:     root,
		inbound:  filepath.Join(root, ".forge", "files", "inbound"),
		sessions: filepath.Join(root, ".forge", "sessions"),
	}
	for _, d := range []string{f.inbound, f.sessions} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	sum := sha256.Sum256(png)
	f.blob = hex.EncodeToString(sum[:]) + ".png"
	if err := os.WriteFile(filepath.Join(f.inbound, f.blob), png, 0o644); err != nil {
		t.Fatal(err)
	}
	writeForgeSession(t, f.sessions, "t-1", ".forge/files/inbound/"+f.blob)
	return f
}

type forgeMedia struct {
	MimeType string `json:"mimeType"`
	URI      string `json:"uri"`
}

type forgePart struct {
	Type  string      `json:"type"`
	Text  string      `json:"text,omitempty"`
	Media *forgeMedia `json:"media,omitempty"`
}

type forgeMessage struct {
	Role    string      `json:"role"`
	Content string      `json:"content"`
	Parts   []forgePart `json:"parts,omitempty"`
}

type forgeSession struct {
	TaskID    string         `json:"task_id"`
	Messages  []forgeMessage `json:"messages"`
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
}

func writeForgeSession(t *testing.T, dir, id, uri string) {
	t.Helper()
	s := forgeSession{
		TaskID: id,
		Messages: []forgeMessage{
			{Role: "user", Content: "Compare <this> & that", Parts: []forgePart{
				{Type: "text", Text: "Compare <this> & that"},
				{Type: "image", Media: &forgeMedia{MimeType: "image/png", URI: uri}},
			}},
			{Role: "assistant", Content: "They match."},
		},
		CreatedAt: "2026-07-01T10:00:00.123456Z",
		UpdatedAt: "2026-07-01T10:00:05.654321Z",
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, id+".json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, id+".json")); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, spec target.Spec) *target.Targets {
	t.Helper()
	tg, err := target.Open(context.Background(), spec)
	if err != nil {
		t.Fatalf("Open(%+v): %v", spec, err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// scanned runs a scan over the targets and returns the status and key of
// every reference found.
func scanned(t *testing.T, tg *target.Targets) []string {
	t.Helper()
	var got []string
	rep, err := scan.Run(context.Background(), scan.Options{
		Sources: tg.Sources,
		Stores:  tg.ScanTargets(),
		OnReference: func(f scan.Found) {
			got = append(got, fmt.Sprintf("%s %s", f.Status, f.Key))
		},
		Jobs: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete {
		t.Fatalf("scan incomplete: %+v", rep.Problems)
	}
	slices.Sort(got)
	return got
}

func TestOpenDetectsForgeInCurrentDir(t *testing.T) {
	f := newForge(t)
	t.Chdir(f.root)
	tg := open(t, target.Spec{})
	if !tg.Detected || tg.Layout == nil || tg.Layout.Name != layout.Forge {
		t.Fatalf("Detected %v, layout %+v: want forge detected", tg.Detected, tg.Layout)
	}
	if want := []string{f.inbound}; !slices.Equal(tg.StoreSpecs, want) {
		t.Errorf("stores %q, want %q", tg.StoreSpecs, want)
	}
	if want := []string{f.sessions}; !slices.Equal(tg.SessionSpecs, want) {
		t.Errorf("sessions %q, want %q", tg.SessionSpecs, want)
	}
	if len(tg.Stores) != 1 || len(tg.Sources) != 1 {
		t.Fatalf("%d stores, %d sources opened, want 1 and 1", len(tg.Stores), len(tg.Sources))
	}
	if got, want := scanned(t, tg), []string{"inside " + f.blob}; !slices.Equal(got, want) {
		t.Errorf("scan found %q, want %q", got, want)
	}
}

func TestOpenDetectsForgeInRoot(t *testing.T) {
	f := newForge(t)
	tg := open(t, target.Spec{Root: f.root})
	if !tg.Detected || tg.Layout == nil || tg.Layout.Root != f.root {
		t.Fatalf("Detected %v, layout %+v: want forge in %s", tg.Detected, tg.Layout, f.root)
	}
	asked := open(t, target.Spec{Layout: layout.Forge, Root: f.root})
	if asked.Detected {
		t.Error("a layout asked for is reported as detected")
	}
}

func TestOpenNothingToDetect(t *testing.T) {
	empty := t.TempDir()
	dotFile := t.TempDir()
	// .forge as a file is not a forge work directory.
	if err := os.WriteFile(filepath.Join(dotFile, ".forge"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{empty, dotFile} {
		_, err := target.Open(context.Background(), target.Spec{Root: dir})
		var nd *target.NothingToDetectError
		if !errors.As(err, &nd) {
			t.Fatalf("Open in %s: %v, want NothingToDetectError", dir, err)
		}
		if nd.Dir != dir {
			t.Errorf("Dir %q, want %q", nd.Dir, dir)
		}
		if strings.Contains(err.Error(), "--") {
			t.Errorf("library error names a flag: %v", err)
		}
	}
	t.Chdir(empty)
	_, err := target.Open(context.Background(), target.Spec{})
	var nd *target.NothingToDetectError
	if !errors.As(err, &nd) || nd.Dir != empty {
		t.Fatalf("Open in the current dir: %v, want NothingToDetectError for %s", err, empty)
	}
}

func TestOpenExplicitReplacesLayout(t *testing.T) {
	f := newForge(t)
	other := filepath.Join(t.TempDir(), "archive")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	writeForgeSession(t, other, "t-9", f.inbound+"/"+f.blob)
	otherStore := t.TempDir()

	tg := open(t, target.Spec{Layout: layout.Forge, Root: f.root, Sessions: []string{other}})
	if !slices.Equal(tg.SessionSpecs, []string{other}) || !slices.Equal(tg.StoreSpecs, []string{f.inbound}) {
		t.Errorf("sessions %q stores %q: want the given sessions and the layout's store", tg.SessionSpecs, tg.StoreSpecs)
	}
	if got, want := scanned(t, tg), []string{"inside " + f.blob}; !slices.Equal(got, want) {
		t.Errorf("scan of the given sessions found %q, want %q", got, want)
	}

	tg = open(t, target.Spec{Layout: layout.Forge, Root: f.root, Stores: []string{otherStore}})
	if !slices.Equal(tg.StoreSpecs, []string{otherStore}) || !slices.Equal(tg.SessionSpecs, []string{f.sessions}) {
		t.Errorf("stores %q sessions %q: want the given store and the layout's sessions", tg.StoreSpecs, tg.SessionSpecs)
	}
	if len(tg.Stores) != 1 || len(tg.Sources) != 1 {
		t.Fatalf("%d stores, %d sources opened", len(tg.Stores), len(tg.Sources))
	}
}

func TestResolverIsTheLayoutsForItsLocalStore(t *testing.T) {
	f := newForge(t)
	report := ref.Reference{Kind: ref.AbsPath, Path: filepath.Join(f.root, ".forge", "files", "report.md")}
	viaParent := ref.Reference{Kind: ref.RelPath, Path: "work/.forge/files/inbound/" + f.blob}

	tg := open(t, target.Spec{Layout: layout.Forge, Root: f.root})
	r := tg.Resolver(tg.Stores[0])
	if st, _ := r.Resolve(report); st != ref.Runtime {
		t.Errorf("layout run: a file of forge's own folder is %s, want runtime", st)
	}
	if st, key := r.Resolve(viaParent); st != ref.Inside || key != f.blob {
		t.Errorf("layout run: a path relative to the work directory's parent is %s %q, want inside %q", st, key, f.blob)
	}
	if tg.Companion(tg.Stores[0]) != nil {
		t.Error("forge's inbound store has a companion rule")
	}

	plain := open(t, target.Spec{Stores: []string{f.inbound}, Sessions: []string{f.sessions}})
	if plain.Layout != nil {
		t.Fatalf("explicit run has layout %+v", plain.Layout)
	}
	if st, _ := plain.Resolver(plain.Stores[0]).Resolve(report); st == ref.Runtime {
		t.Error("explicit run: the plain resolver knows forge's runtime folder")
	}
}

func TestOpenRootWithoutLayout(t *testing.T) {
	f := newForge(t)
	_, err := target.Open(context.Background(), target.Spec{Root: f.root, Stores: []string{f.inbound}})
	var re *target.RootWithoutLayoutError
	if !errors.As(err, &re) || re.Root != f.root {
		t.Fatalf("err %v, want RootWithoutLayoutError for %s", err, f.root)
	}
}

func TestOpenTooManySources(t *testing.T) {
	specs := make([]string, scan.MaxSources+1)
	for i := range specs {
		specs[i] = filepath.Join(t.TempDir(), "nowhere")
	}
	_, err := target.Open(context.Background(), target.Spec{Sessions: specs})
	var tm *target.TooManySourcesError
	if !errors.As(err, &tm) || tm.Count != len(specs) || tm.Max != scan.MaxSources {
		t.Fatalf("err %v, want TooManySourcesError{%d, %d}", err, len(specs), scan.MaxSources)
	}
}

func TestOpenLayoutErrorsAreLayouts(t *testing.T) {
	_, err := target.Open(context.Background(), target.Spec{Layout: "forj"})
	var unknown *layout.UnknownError
	if !errors.As(err, &unknown) || unknown.Name != "forj" {
		t.Fatalf("err %v, want layout.UnknownError", err)
	}
	_, err = target.Open(context.Background(), target.Spec{Layout: layout.Forge, Root: t.TempDir()})
	var nf *layout.NotFoundError
	if !errors.As(err, &nf) || nf.Layout != layout.Forge {
		t.Fatalf("err %v, want layout.NotFoundError", err)
	}
}

func TestOpenErrorsSayWhich(t *testing.T) {
	f := newForge(t)
	missing := filepath.Join(t.TempDir(), "nowhere")
	_, err := target.Open(context.Background(), target.Spec{Stores: []string{f.inbound, missing}, Sessions: []string{f.sessions}})
	var se *target.StoreError
	if !errors.As(err, &se) || se.Spec != missing || !errors.Is(err, usage.Err) {
		t.Fatalf("err %v, want a StoreError for %s that is still a usage error", err, missing)
	}

	_, err = target.Open(context.Background(), target.Spec{Stores: []string{"ftp://user:hunter2@host/x"}, Sessions: []string{f.sessions}})
	if !errors.As(err, &se) || strings.Contains(se.Spec, "hunter2") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err %v (spec %q): want a StoreError without the password", err, se.Spec)
	}

	// A query only SQL sources take: the folder refuses it when opened.
	_, err = target.Open(context.Background(), target.Spec{Stores: []string{f.inbound}, Sessions: []string{f.sessions}, Query: "select body from messages"})
	var src *target.SourceError
	if !errors.As(err, &src) || src.Spec != f.sessions || !errors.Is(err, usage.Err) {
		t.Fatalf("err %v, want a SourceError for %s that is still a usage error", err, f.sessions)
	}
}

func TestOpenRefusesOverlap(t *testing.T) {
	base := t.TempDir()
	agent := filepath.Join(base, "agent")
	sessionsDir := filepath.Join(agent, "sessions")
	blobsInSessions := filepath.Join(sessionsDir, "blobs")
	media := filepath.Join(agent, "media")
	for _, d := range []string{blobsInSessions, media} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeForgeSession(t, sessionsDir, "t-1", "media/x.png")
	if err := os.Symlink(agent, filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(base, "alias")

	for _, c := range []struct {
		name, store, source, relation string
	}{
		{"same folder", sessionsDir, sessionsDir, target.Inside},
		{"sessions inside the store", agent, sessionsDir, target.Inside},
		{"store inside the sessions", blobsInSessions, sessionsDir, target.Contains},
		{"store through a symlink", alias, sessionsDir, target.Inside},
		{"sessions through a symlink", agent, filepath.Join(alias, "sessions"), target.Inside},
		{"store through a symlink inside the sessions", filepath.Join(alias, "sessions", "blobs"), sessionsDir, target.Contains},
		{"a sqlite file inside the store", agent, "sqlite:" + filepath.Join(agent, "runs.db"), target.Inside},
		{"a sqlite file not there yet, through a symlink", agent, "sqlite:" + filepath.Join(alias, "new", "runs.db"), target.Inside},
		{"a relative session folder", base, "sessions-rel", target.Inside},
		{"a file:// session bucket inside the store", agent, "file://" + sessionsDir, target.Inside},
		{"a file:// session bucket through a symlink", agent, "file://" + filepath.Join(alias, "sessions"), target.Inside},
		{"a file:// session bucket prefix inside the store", agent, "file://" + agent + "?prefix=sessions/", target.Inside},
		{"a file:// session bucket around the store", blobsInSessions, "file://" + agent, target.Contains},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.source == "sessions-rel" {
				t.Chdir(base)
				c.source = "agent/sessions"
			}
			_, err := target.Open(context.Background(), target.Spec{Stores: []string{c.store}, Sessions: []string{c.source}})
			var oe *target.OverlapError
			if !errors.As(err, &oe) {
				t.Fatalf("err %v, want OverlapError", err)
			}
			if oe.Relation != c.relation || oe.Source != c.source || oe.Store != c.store {
				t.Errorf("got %+v, want store %s source %s relation %s", oe, c.store, c.source, c.relation)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("library error names a flag: %v", err)
			}
		})
	}

	// A file:// store is the folder it names, below its prefix.
	for _, c := range []struct {
		name, store, source, relation string
	}{
		{"a file:// store around the sessions", "file://" + agent, sessionsDir, target.Inside},
		{"a file:// store prefix around the sessions", "file://" + agent + "?prefix=sessions/", sessionsDir, target.Inside},
		{"a file:// store inside the sessions", "file://" + blobsInSessions, sessionsDir, target.Contains},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := target.Open(context.Background(), target.Spec{Stores: []string{c.store}, Sessions: []string{c.source}})
			var oe *target.OverlapError
			if !errors.As(err, &oe) {
				t.Fatalf("err %v, want OverlapError", err)
			}
			if oe.Relation != c.relation || oe.Source != c.source || !strings.HasPrefix(oe.Store, "file://") {
				t.Errorf("got %+v, want a file:// store, source %s, relation %s", oe, c.source, c.relation)
			}
		})
	}

	// Side by side is fine, and both are opened: as paths, as file:// URLs,
	// and as prefixes of one folder.
	for _, c := range []struct{ store, source string }{
		{media, sessionsDir},
		{"file://" + media, "file://" + sessionsDir},
		{"file://" + agent + "?prefix=media/", "file://" + agent + "?prefix=sessions/"},
	} {
		tg := open(t, target.Spec{Stores: []string{c.store}, Sessions: []string{c.source}})
		if len(tg.Stores) != 1 || len(tg.Sources) != 1 {
			t.Fatalf("%s and %s: %d stores, %d sources", c.store, c.source, len(tg.Stores), len(tg.Sources))
		}
	}
}

func TestOpenURLSourceNeverOverlaps(t *testing.T) {
	store := t.TempDir()
	tg := open(t, target.Spec{Stores: []string{store}, Sessions: []string{"mem://sessions"}})
	if len(tg.Sources) != 1 {
		t.Fatalf("%d sources", len(tg.Sources))
	}
}

// TestOpenRewritersExcludeAsRead: the rewriters are opened with the
// exclusions the sources were read with, so that a rewrite of a layout's
// sessions offers exactly the documents the scan read.
func TestOpenRewritersExcludeAsRead(t *testing.T) {
	f := newForge(t)
	archive := filepath.Join(f.sessions, "archive")
	if err := os.Mkdir(archive, 0o755); err != nil {
		t.Fatal(err)
	}
	writeForgeSession(t, archive, "t-0", ".forge/files/inbound/"+f.blob)
	tg := open(t, target.Spec{Layout: layout.Forge, Root: f.root, Exclude: []string{"archive"}})
	if got := scanned(t, tg); len(got) != 1 {
		t.Fatalf("the scan found %q, want the one reference outside the archive", got)
	}
	rws, err := tg.OpenRewriters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, rw := range rws {
		defer rw.Close()
		_, err := rw.Rewrite(context.Background(), func(p ref.Place, old []byte) ([]byte, error) {
			offered = append(offered, p.Document)
			return nil, nil
		}, sessions.RewriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{filepath.Join(f.sessions, "t-1.json")}; !slices.Equal(offered, want) {
		t.Errorf("the rewriters offered %q, want %q", offered, want)
	}
}
