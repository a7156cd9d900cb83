package layout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mediactl/mediactl/internal/realworld"
	"github.com/mediactl/mediactl/pkg/layout"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// scanned is what a scan of a layout found.
type scanned struct {
	rep   *scan.Report
	found []scan.Found
}

// scanLayout runs scan over everything the layout found, each store with the
// layout's resolver, as the CLI's --layout does.
func scanLayout(t *testing.T, l *layout.Layout) scanned {
	t.Helper()
	ctx := context.Background()
	var opts scan.Options
	for _, dir := range l.StoreDirs() {
		st, err := store.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		opts.Stores = append(opts.Stores, scan.Target{Store: st, Resolver: l.Resolver(dir)})
	}
	for _, spec := range l.Sessions {
		src, err := sessions.Open(ctx, spec, sessions.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		opts.Sources = append(opts.Sources, src)
	}
	var out scanned
	var mu sync.Mutex
	opts.OnReference = func(f scan.Found) {
		mu.Lock()
		out.found = append(out.found, f)
		mu.Unlock()
	}
	rep, err := scan.Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete {
		t.Fatalf("scan incomplete: %+v", rep.Problems)
	}
	out.rep = rep
	return out
}

// extracts says whether the precise extractor finds p as a whole JSON string
// value: paths with spaces and "~/" paths are taken by an extractor change of
// their own; what depends on them is checked once they are.
func extracts(p string) bool {
	found := false
	ex := &ref.Extractor{Found: func(r ref.Reference, _ ref.Place) { found = found || r.Path == p }}
	b, _ := json.Marshal(map[string]string{"path": p})
	_ = ex.Document(bytes.NewReader(b), ref.Place{})
	return found
}

func strs(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return slices.Compact(s)
}

func TestForgeRealworld(t *testing.T) {
	root, truth := realworld.Forge(t)
	checkForge(t, root, truth)
}

// The root under a directory whose name has a space and an "&" (which forge's
// JSON writes as \u0026).
func TestForgeRealworldSpaceAmpersand(t *testing.T) {
	root, truth := realworld.ForgeIn(t, filepath.Join(t.TempDir(), "My Agent & Co"))
	checkForge(t, root, truth)
}

func checkForge(t *testing.T, root string, truth map[string]any) {
	t.Helper()
	l, err := layout.Find(layout.Forge, root)
	if err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(root, ".forge", "files")
	if want := []string{filepath.Join(files, "inbound"), filepath.Join(files, "generated")}; !slices.Equal(l.StoreDirs(), want) {
		t.Errorf("stores %v, want %v", l.StoreDirs(), want)
	}
	got := scanLayout(t, l)
	// Absolute paths under a root with a space are taken by an extractor
	// change of their own; until then only the relative forms are checked.
	absolute := extracts(root + "/.forge/files/inbound/c.png")
	if !absolute {
		t.Logf("the extractor does not take %s/… yet: checking the relative forms only", root)
	}
	relevant := func(raw string) bool { return absolute || !strings.HasPrefix(raw, "/") }

	// Dangling: exactly the truth's keys and references.
	var keys, refs []string
	for _, f := range got.rep.Dangling {
		keys = append(keys, filepath.Base(f.Store)+"/"+f.Key)
		refs = append(refs, filepath.Base(f.Place.Document)+" "+f.Ref.Raw)
	}
	var wantRefs, wantKeys []string
	for _, r := range truth["dangling_refs"].([]any) {
		r := r.(map[string]any)
		if relevant(r["raw"].(string)) {
			wantRefs = append(wantRefs, r["session"].(string)+" "+r["raw"].(string))
			wantKeys = append(wantKeys, r["Store"].(string)+"/"+r["Key"].(string))
		}
	}
	if absolute && !slices.Equal(sorted(wantKeys), strs(truth["dangling_keys"])) {
		t.Fatalf("truth: dangling_refs name %v, dangling_keys %v", sorted(wantKeys), strs(truth["dangling_keys"]))
	}
	if g, w := sorted(keys), sorted(wantKeys); !slices.Equal(g, w) {
		t.Errorf("dangling keys\n got %v\nwant %v", g, w)
	}
	if int(got.rep.DanglingBlobs) != len(sorted(wantKeys)) {
		t.Errorf("%d dangling blobs, want %d", got.rep.DanglingBlobs, len(sorted(wantKeys)))
	}
	if g, w := sorted(refs), sorted(wantRefs); !slices.Equal(g, w) {
		t.Errorf("dangling references\n got %v\nwant %v", g, w)
	}

	// forge's own files are the runtime's, never "outside".
	for _, f := range got.rep.Outside {
		if strings.HasPrefix(f.Ref.Path, ".forge/files/") || strings.Contains(f.Ref.Path, "/.forge/files/") {
			t.Errorf("listed as outside: %s %s", f.Place, f.Ref.Raw)
		}
	}
	runtime := map[string]bool{}
	for _, f := range got.found {
		if f.Status == ref.Runtime {
			runtime[filepath.Base(f.Place.Document)+" "+f.Ref.Raw] = true
		}
	}
	var wantRuntime []string
	for _, r := range truth["outside_refs"].([]any) {
		r := r.(map[string]any)
		if relevant(r["raw"].(string)) {
			wantRuntime = append(wantRuntime, r["session"].(string)+" "+r["raw"].(string))
		}
	}
	if g, w := sorted(slices.Collect(maps.Keys(runtime))), sorted(wantRuntime); !slices.Equal(g, w) {
		t.Errorf("the runtime's files\n got %v\nwant %v", g, w)
	}
	if got.rep.ByStatus["runtime"] != int64(len(wantRuntime)) || len(wantRuntime) == 0 {
		t.Errorf("by_status runtime = %d, want %d", got.rep.ByStatus["runtime"], len(wantRuntime))
	}
	if absolute && len(got.rep.Outside) != 0 {
		t.Errorf("outside: %v (the truth has none but forge's own files)", got.rep.Outside)
	}

	// Every media part resolves inside a store, in each of its three forms.
	forms := truth["media_part_uri_forms"].(map[string]any)
	inside := map[string]int{}
	for _, f := range got.found {
		if f.Status == ref.Inside && strings.HasSuffix(f.Place.Pointer, "/media/uri") {
			switch {
			case strings.HasPrefix(f.Ref.Raw, "work/.forge/"):
				inside["cwd-relative (work/…)"]++
			case strings.HasPrefix(f.Ref.Raw, ".forge/"):
				inside["dot-forge-relative (.forge/…)"]++
			case strings.HasPrefix(f.Ref.Raw, root+"/"):
				inside["absolute"]++
			}
		}
	}
	for form, n := range forms {
		if form == "absolute" && !absolute {
			continue
		}
		if inside[form] != int(n.(float64)) {
			t.Errorf("%s media parts inside a store: %d, want %d", form, inside[form], int(n.(float64)))
		}
	}
}

func TestCofferRealworldLegacy(t *testing.T) {
	home, truth := realworld.Coffer(t)
	l, err := layout.Find(layout.Coffer, filepath.Join(home, ".coffer"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Home != home {
		t.Errorf("home %q, want %q", l.Home, home)
	}
	if want := []string{filepath.Join(home, ".coffer", "channel-media")}; !slices.Equal(l.StoreDirs(), want) {
		t.Errorf("stores %v, want %v", l.StoreDirs(), want)
	}
	got := scanLayout(t, l)
	legacy := truth["legacy"].(map[string]any)
	checkCofferDangling(t, got, legacy, func(p string) string { return p })
	if len(got.rep.Problems) != 0 {
		t.Errorf("problems: %v", got.rep.Problems)
	}
	// "~/.coffer/…" mentions resolve against the home: each as the extractor
	// reports it (RelPath "~/…"), and those the scan found.
	r := l.Resolver(l.StoreDirs()[0])
	n := 0
	for _, m := range legacy["mentions"].([]any) {
		m := m.(map[string]any)
		if m["kind"] != "tool_use.command(~)" {
			continue
		}
		n++
		st, key := r.Resolve(ref.Reference{Kind: ref.RelPath, Path: m["raw"].(string)})
		if st != ref.Inside || key != m["name"] {
			t.Errorf("%s: %v %q, want inside %q", m["raw"], st, key, m["name"])
		}
	}
	if n == 0 {
		t.Error("no ~/ mention in the truth")
	}
	for _, f := range got.found {
		if strings.HasPrefix(f.Ref.Path, "~/") && f.Status != ref.Inside {
			t.Errorf("%s: %v, want inside", f.Ref.Raw, f.Status)
		}
	}
}

// checkCofferDangling: the dangling references name exactly the truth's
// dangling paths (as written in the rows), and every attachment that names an
// existing file resolves to it, through moved(path), where the file is now.
func checkCofferDangling(t *testing.T, got scanned, legacy map[string]any, moved func(string) string) {
	t.Helper()
	var paths []string
	for _, f := range got.rep.Dangling {
		paths = append(paths, f.Ref.Path)
	}
	if g, w := sorted(paths), strs(legacy["dangling_paths"]); !slices.Equal(g, w) {
		t.Errorf("dangling paths\n got %d %v\nwant %d %v", len(g), g, len(w), w)
	}
	if int(got.rep.DanglingBlobs) != len(legacy["dangling_paths"].([]any)) {
		t.Errorf("%d dangling blobs, want %d", got.rep.DanglingBlobs, len(legacy["dangling_paths"].([]any)))
	}
	resolved := map[string]string{}
	for _, f := range got.found {
		if f.Status == ref.Inside && !f.Missing {
			resolved[f.Ref.Path] = filepath.Join(f.Store, f.Key)
		}
	}
	for _, a := range legacy["attachment_refs"].([]any) {
		a := a.(map[string]any)
		p := a["path"].(string)
		if a["exists_at_path"] != true {
			continue
		}
		if !extracts(p) {
			t.Logf("the extractor does not take %q yet", p)
			continue
		}
		if want := moved(p); resolved[p] != want {
			t.Errorf("attachment %s resolves to %q, want %q", p, resolved[p], want)
		}
	}
}

func TestCofferRealworldUpgraded(t *testing.T) {
	home, truth := realworld.CofferUpgraded(t)
	dot := filepath.Join(home, ".coffer")
	l, err := layout.Find(layout.Coffer, dot)
	if err != nil {
		t.Fatal(err)
	}
	channel, chat := filepath.Join(dot, "content", "channel-media"), filepath.Join(dot, "content", "chat-media")
	if want := []string{channel, chat}; !slices.Equal(l.StoreDirs(), want) {
		t.Errorf("stores %v, want %v", l.StoreDirs(), want)
	}
	if want := []string{"sqlite:" + filepath.Join(dot, "runs.db")}; !slices.Equal(l.Sessions, want) {
		t.Errorf("sessions %v, want %v", l.Sessions, want)
	}
	got := scanLayout(t, l)
	legacyDir := filepath.Join(dot, "channel-media") + "/"
	checkCofferDangling(t, got, truth["legacy"].(map[string]any), func(p string) string {
		return channel + "/" + strings.TrimPrefix(p, legacyDir)
	})
	for _, u := range truth["upgraded"].(map[string]any)["uploads"].([]realworld.Upload) {
		n := 0
		for _, f := range got.found {
			if f.Ref.Path == u.Path {
				n++
				if f.Status != ref.Inside || f.Store != chat || f.Key != u.Key || f.Missing {
					t.Errorf("upload %s: %v in %s key %q missing %v", u.Key, f.Status, f.Store, f.Key, f.Missing)
				}
			}
		}
		if (n > 0) != u.Referenced {
			t.Errorf("upload %s: %d references, referenced = %v", u.Key, n, u.Referenced)
		}
	}
}

// Half upgraded: the legacy folder exists again beside content/channel-media,
// and holds some of the files. A reference to the legacy path resolves to the
// file wherever it is; only the files gone from both places dangle.
func TestCofferRealworldBothLayouts(t *testing.T) {
	home, truth := realworld.CofferUpgraded(t)
	dot := filepath.Join(home, ".coffer")
	legacyDir, channel := filepath.Join(dot, "channel-media"), filepath.Join(dot, "content", "channel-media")
	if err := os.Mkdir(legacyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(channel)
	if err != nil {
		t.Fatal(err)
	}
	back := map[string]bool{}
	for i, e := range entries {
		if i%2 == 0 {
			if err := os.Rename(filepath.Join(channel, e.Name()), filepath.Join(legacyDir, e.Name())); err != nil {
				t.Fatal(err)
			}
			back[e.Name()] = true
		}
	}
	l, err := layout.Find(layout.Coffer, dot)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{legacyDir, channel, filepath.Join(dot, "content", "chat-media")}; !slices.Equal(l.StoreDirs(), want) {
		t.Fatalf("stores %v, want %v", l.StoreDirs(), want)
	}
	got := scanLayout(t, l)
	checkCofferDangling(t, got, truth["legacy"].(map[string]any), func(p string) string {
		name := strings.TrimPrefix(p, legacyDir+"/")
		if back[name] {
			return p
		}
		return filepath.Join(channel, name)
	})
}

func TestCompanion(t *testing.T) {
	home, truth := realworld.CofferUpgraded(t)
	l, err := layout.Find(layout.Coffer, filepath.Join(home, ".coffer"))
	if err != nil {
		t.Fatal(err)
	}
	uploads := truth["upgraded"].(map[string]any)["uploads"].([]realworld.Upload)
	for _, u := range uploads {
		if owner, ok := l.Companion(u.Sidecar); !ok || owner != u.Key {
			t.Errorf("Companion(%s) = %q %v, want %q", u.Sidecar, owner, ok, u.Key)
		}
		if owner, ok := l.Companion(u.Key); ok {
			t.Errorf("Companion(%s) = %q: an upload is no sidecar", u.Key, owner)
		}
	}
	// A sidecar whose upload arrives after the first listing.
	chat := filepath.Join(home, ".coffer", "content", "chat-media")
	for _, n := range []string{"77aa.heic", "77aa.json", "lonely.json"} {
		if err := os.WriteFile(filepath.Join(chat, n), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[string]string{"77aa.json": "77aa.heic", "lonely.json": "", ".json": "", "../x.json": "", "77aa": ""} {
		owner, ok := l.Companion(key)
		if owner != want || ok != (want != "") {
			t.Errorf("Companion(%q) = %q %v, want %q", key, owner, ok, want)
		}
	}
	var none *layout.Layout
	if _, ok := none.Companion(uploads[0].Sidecar); ok {
		t.Error("a nil layout has companions")
	}
	root, _ := realworld.Forge(t)
	forge, err := layout.Find(layout.Forge, root)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := forge.Companion("x.json"); ok {
		t.Error("forge has companions")
	}

	// A sidecar folder that cannot be listed cannot tell: not "no owner",
	// which would make a sidecar of an upload in use look like an orphan.
	for name, swap := range map[string]func(dir string) error{
		"removed":         os.RemoveAll,
		"now a file":      func(dir string) error { return errors.Join(os.RemoveAll(dir), os.WriteFile(dir, nil, 0o600)) },
		"now a dead link": func(dir string) error { return errors.Join(os.RemoveAll(dir), os.Symlink("nowhere", dir)) },
	} {
		home, truth := realworld.CofferUpgraded(t)
		l, err := layout.Find(layout.Coffer, filepath.Join(home, ".coffer"))
		if err != nil {
			t.Fatal(err)
		}
		if err := swap(filepath.Join(home, ".coffer", "content", "chat-media")); err != nil {
			t.Fatal(err)
		}
		sidecar := truth["upgraded"].(map[string]any)["uploads"].([]realworld.Upload)[0].Sidecar
		if owner, ok := l.Companion(sidecar); owner != "" || !ok {
			t.Errorf("%s: Companion(%s) = %q %v, want \"\" true (cannot tell)", name, sidecar, owner, ok)
		}
	}
}

func TestFindErrors(t *testing.T) {
	empty := t.TempDir()
	_, err := layout.Find("nosuch", empty)
	var unknown *layout.UnknownError
	if !errors.As(err, &unknown) || unknown.Name != "nosuch" {
		t.Errorf("unknown layout: %v", err)
	}
	for _, name := range layout.Names {
		_, err := layout.Find(name, empty)
		var nf *layout.NotFoundError
		if !errors.As(err, &nf) || nf.Layout != name || nf.Root != empty || nf.What != "blob store" || len(nf.Looked) == 0 {
			t.Errorf("%s in an empty folder: %#v", name, err)
		}
	}
	// Stores without sessions.
	if err := os.MkdirAll(filepath.Join(empty, ".forge", "files", "generated"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = layout.Find(layout.Forge, empty)
	var nf *layout.NotFoundError
	if !errors.As(err, &nf) || nf.What != "session source" || !slices.Equal(nf.Looked, []string{filepath.Join(empty, ".forge", "sessions")}) {
		t.Errorf("forge without sessions: %v", err)
	}
}

func TestFindRelativeRoot(t *testing.T) {
	root, _ := realworld.Forge(t)
	t.Chdir(root)
	l, err := layout.Find(layout.Forge, "")
	if err != nil {
		t.Fatal(err)
	}
	if l.Root != root || !slices.Equal(l.Bases, []string{root, filepath.Dir(root)}) || l.Home != "" {
		t.Errorf("forge found in the current directory: %+v", l)
	}
}

// A coffer folder that is not named .coffer has no known home: "~/" stays
// unanchored.
func TestCofferHomeOnlyForDotCoffer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "coffer-state")
	for _, p := range []string{filepath.Join(dir, "channel-media")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "runs.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := layout.Find(layout.Coffer, dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Home != "" {
		t.Errorf("home %q", l.Home)
	}
	st, _ := l.Resolver(filepath.Join(dir, "channel-media")).Resolve(ref.Reference{Kind: ref.RelPath, Path: "~/.coffer/channel-media/a.jpg"})
	if st != ref.Unanchored {
		t.Errorf("~/ without a home: %v", st)
	}
}

// TestReadsPath: forge replays only local files inside its files dir, coffer
// any local file; neither reads a URL or a relative or unclean path.
func TestReadsPath(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".forge/files/inbound", ".forge/sessions", ".coffer/channel-media"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	forge, err := layout.Find(layout.Forge, root)
	if err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(root, ".forge", "files")
	if forge.Vars["files_dir"] != files {
		t.Fatalf("files_dir = %q", forge.Vars["files_dir"])
	}
	coffer := &layout.Layout{Name: layout.Coffer, Reads: []string{"/"}}
	for _, c := range []struct {
		l    *layout.Layout
		p    string
		want bool
	}{
		{forge, files + "/remote/ab.png", true},
		{forge, files + "/inbound/ab.png", true},
		{forge, root + "/elsewhere/ab.png", false},
		{forge, files + "/../x.png", false},
		{forge, "s3://media/inbound/ab.png", false},
		{forge, "file://" + files + "/remote/ab.png", false},
		{forge, ".forge/files/remote/ab.png", false},
		{coffer, "/mnt/media/ab.png", true},
		{coffer, "s3://media/ab.png", false},
		{coffer, "media/ab.png", false},
	} {
		if got := c.l.ReadsPath(c.p); got != c.want {
			t.Errorf("%s reads %q = %v, want %v", c.l.Name, c.p, got, c.want)
		}
	}
}

// TestCofferDatabaseThatCannotBeReached: coffer.db is a link to a volume that
// is not mounted (or a link that loops) beside a readable runs.db. The
// layout still names it as a session source, so that reading it fails and the
// run reads less than everything: gc then removes nothing. Left out, gc would
// read runs.db alone and remove the blobs only coffer.db's sessions name.
func TestCofferDatabaseThatCannotBeReached(t *testing.T) {
	for name, target := range map[string]string{
		"unmounted": filepath.Join(t.TempDir(), "not-mounted", "coffer.db"),
		"loop":      "coffer.db",
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), ".coffer")
			if err := os.MkdirAll(filepath.Join(dir, "content", "chat-media"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "runs.db"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(dir, "coffer.db")); err != nil {
				t.Fatal(err)
			}
			l, err := layout.Find(layout.Coffer, dir)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"sqlite:" + filepath.Join(dir, "runs.db"), "sqlite:" + filepath.Join(dir, "coffer.db")}
			if !slices.Equal(l.Sessions, want) {
				t.Errorf("sessions %q, want %q", l.Sessions, want)
			}
		})
	}
}

// TestCofferDatabaseThatIsNotAFile: a folder where coffer keeps its database
// is refused, naming it, rather than passed over.
func TestCofferDatabaseThatIsNotAFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".coffer")
	if err := os.MkdirAll(filepath.Join(dir, "content", "chat-media"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runs.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "coffer.db"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := layout.Find(layout.Coffer, dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "coffer.db")) {
		t.Fatalf("Find = %v, want an error naming coffer.db", err)
	}
}

// TestForReplay: on the pod that replays from the copies, the layout's
// reads are known without its stores and sessions; only the folder the
// runtime reads must be there.
func TestForReplay(t *testing.T) {
	root := t.TempDir()
	if _, err := layout.ForReplay(layout.Forge, root); err == nil {
		t.Fatal("forge without .forge/files: no error")
	}
	files := filepath.Join(root, ".forge", "files")
	if err := os.MkdirAll(filepath.Join(files, "remote"), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := layout.ForReplay(layout.Forge, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Reads) != 1 || l.Reads[0] != files || l.Vars["files_dir"] != files || len(l.Stores) != 0 {
		t.Fatalf("forge for replay: %+v", l)
	}
	if _, err := layout.Find(layout.Forge, root); err == nil {
		t.Fatal("Find without stores: no error")
	}
	c, err := layout.ForReplay(layout.Coffer, root)
	if err != nil || c.Root != root || len(c.Reads) != 1 {
		t.Fatalf("coffer for replay: %+v, %v", c, err)
	}
	if _, err := layout.ForReplay("nope", root); err == nil {
		t.Fatal("unknown layout: no error")
	}
}
