//go:build unix

package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/ref"
)

const (
	localRef  = "/srv/agent/.forge/files/inbound/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png"
	bucketRef = "s3://media/agent-inputs/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png"
)

func forgeSession(id, uri string) string {
	return `{
  "task_id": "` + id + `",
  "messages": [
    {"role": "user", "content": "What's in this image?",
     "parts": [{"type": "image", "media": {"mimeType": "image/png", "uri": "` + uri + `"}}]}
  ]
}
`
}

func writeMode(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	writeFile(t, path, content)
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// forgeWrite replaces a session the way forge does: write <name>.tmp, fsync,
// rename over the session.
func forgeWrite(path, content string) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// checkNoLeftovers fails the test when the rewriter's temporary files are
// left under dir.
func checkNoLeftovers(t *testing.T, dir string) {
	t.Helper()
	var left []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".") && strings.HasSuffix(d.Name(), ".tmp") {
			left = append(left, path)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

func filesRewriterOf(t *testing.T, w Rewriter) *filesRewriter {
	t.Helper()
	fw, ok := w.(*filesRewriter)
	if !ok {
		t.Fatalf("rewriter is a %T", w)
	}
	return fw
}

// TestRewriteFilesRoundTrip rewrites a forge session folder and rolls it back
// from the journal: every file is byte for byte what it was, with its mode and
// owner, and the places Edit saw are exactly the ones Walk reports.
func TestRewriteFilesRoundTrip(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "sessions")
	outside := filepath.Join(base, "outside.json")
	files := map[string]struct {
		content string
		mode    os.FileMode
	}{
		"t-1.json":            {forgeSession("t-1", localRef), 0o600},
		"t-2.json":            {forgeSession("t-2", "/elsewhere/x.png"), 0o644},
		"sub/t-3.jsonl":       {`{"uri":"` + localRef + `"}` + "\n" + `{"uri":"` + localRef + `"}` + "\n", 0o640},
		"sub/deep/t-4.json":   {forgeSession("t-4", localRef), 0o755},
		"t-5.json.tmp":        {forgeSession("t-5", localRef), 0o600},
		"notes.txt":           {localRef, 0o600},
		"sub/deep/t-6.ndjson": {`{"uri":"` + localRef + `"}`, 0o600},
	}
	for name, f := range files {
		writeMode(t, filepath.Join(dir, name), f.content, f.mode)
	}
	// A session file owned by someone else keeps its owner (we run as root in CI).
	owned := filepath.Join(dir, "t-1.json")
	chowned := os.Geteuid() == 0
	if chowned {
		if err := os.Chown(owned, 1234, 5678); err != nil {
			t.Fatal(err)
		}
	}
	// A link to a session outside the folder is neither read nor written.
	writeMode(t, outside, forgeSession("out", localRef), 0o600)
	if err := os.Symlink(outside, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}

	w := openRewriter(t, dir)
	if w.String() != dir {
		t.Errorf("String() = %q", w.String())
	}
	var seen []ref.Place
	var j journal
	c, err := w.Rewrite(ctx, replaceEdit(localRef, bucketRef, &seen), j.options(0))
	if err != nil {
		t.Fatalf("Rewrite: %v", err)
	}
	want := RewriteCounts{Units: 5, Changed: 4, Skipped: 2} // link.json and t-5.json.tmp
	if c != want {
		t.Errorf("counts = %+v, want %+v", c, want)
	}

	// The places are Walk's.
	items, _ := walkAll(t, rewritable{openFiles(t, dir).(*filesSource)})
	checkSawWalk(t, seen, items)

	// On disk: rewritten where the reference was, modes and owner kept.
	for name, f := range files {
		path := filepath.Join(dir, name)
		got := readString(t, path)
		wantContent := f.content
		if !strings.HasSuffix(name, ".tmp") && name != "notes.txt" {
			wantContent = strings.ReplaceAll(f.content, localRef, bucketRef)
		}
		if got != wantContent {
			t.Errorf("%s = %q, want %q", name, got, wantContent)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != f.mode.Perm() {
			t.Errorf("%s mode = %v, want %v", name, fi.Mode().Perm(), f.mode.Perm())
		}
	}
	if chowned {
		st := statT(t, owned)
		if st.Uid != 1234 || st.Gid != 5678 {
			t.Errorf("owner of t-1.json = %d:%d, want 1234:5678", st.Uid, st.Gid)
		}
	}
	if got := readString(t, outside); got != forgeSession("out", localRef) {
		t.Errorf("the link's target was written: %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link.json")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("link.json is no longer a link: %v %v", fi, err)
	}
	checkNoLeftovers(t, base)

	// The journal: each change prepared, then committed, in order.
	if len(j.prepared) != 4 || !reflect.DeepEqual(j.prepared, j.committed) {
		t.Errorf("prepared %d, committed %d changes; want the same 4", len(j.prepared), len(j.committed))
	}
	for i := 0; i+1 < len(j.events); i += 2 {
		p, c := j.events[i], j.events[i+1]
		if !strings.HasPrefix(p, "prepare ") || c != "commit "+strings.TrimPrefix(p, "prepare ") {
			t.Errorf("events %q, %q: want a prepare and its commit", p, c)
		}
	}
	for _, ch := range j.committed {
		if ch.Place.Source != dir || ch.Place.Offset != -1 || ch.Place.Table != "" {
			t.Errorf("change place = %+v", ch.Place)
		}
		if !bytes.Equal(ch.New, bytes.ReplaceAll(ch.Old, []byte(localRef), []byte(bucketRef))) {
			t.Errorf("change %s: Old/New do not match the edit", ch.Place)
		}
	}

	// Nothing left to do: a second run changes nothing.
	if c, err := w.Rewrite(ctx, replaceEdit(localRef, bucketRef, nil), RewriteOptions{}); err != nil || c.Changed != 0 || c.Units != 5 {
		t.Errorf("second run: %+v, %v", c, err)
	}

	// Roll back from the journal, in a new rewriter, as a later run would.
	w2 := openRewriter(t, dir)
	var j2 journal
	c, err = w2.Rewrite(ctx, j.rollbackEdit(), j2.options(0))
	if err != nil || c.Changed != 4 {
		t.Fatalf("rollback: %+v, %v", c, err)
	}
	for name, f := range files {
		path := filepath.Join(dir, name)
		if got := readString(t, path); got != f.content {
			t.Errorf("after rollback %s = %q, want %q", name, got, f.content)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != f.mode.Perm() {
			t.Errorf("after rollback %s mode = %v", name, fi.Mode().Perm())
		}
	}
	if chowned {
		if st := statT(t, owned); st.Uid != 1234 || st.Gid != 5678 {
			t.Errorf("after rollback owner = %d:%d", st.Uid, st.Gid)
		}
	}
}

// TestRewriteFilesExclude: the rewriter reads what Walk reads with the same
// Options.Exclude and nothing else. An excluded folder is not entered: its
// sessions are not offered to Edit and stay byte for byte as they were, and a
// truncated file there, which Walk never reads, is no unit left untouched.
func TestRewriteFilesExclude(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "sessions")
	files := map[string]string{
		"t-1.json":             forgeSession("t-1", localRef),
		"sub/t-2.json":         forgeSession("t-2", localRef),
		"sub/t-2.json.bak":     forgeSession("t-2", localRef),
		"archive/t-0.json":     forgeSession("t-0", localRef),
		"archive/partial.json": `{"task_id": "t-9", "messages": [{"role": "us`,
		"sub/old.json":         forgeSession("old", localRef),
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	opts := Options{Exclude: []string{"archive", "sub/old.json"}}
	w, err := OpenRewriter(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var seen []ref.Place
	c, err := w.Rewrite(ctx, replaceEdit(localRef, bucketRef, &seen), RewriteOptions{})
	if err != nil {
		t.Fatalf("Rewrite: %v", err)
	}
	if want := (RewriteCounts{Units: 2, Changed: 2}); c != want {
		t.Errorf("counts = %+v, want %+v", c, want)
	}
	src, err := Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	items, _ := walkAll(t, rewritable{src.(*filesSource)})
	checkSawWalk(t, seen, items)
	for name, content := range files {
		want := content
		if name == "t-1.json" || name == "sub/t-2.json" {
			want = strings.ReplaceAll(content, localRef, bucketRef)
		}
		if got := readString(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func statT(t *testing.T, path string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t)
}

// exchangeModes runs a test with the atomic exchange (where the system has it)
// and with the compare-then-rename fallback.
func exchangeModes(t *testing.T, fn func(t *testing.T, noExchange bool)) {
	for _, noExchange := range []bool{false, true} {
		name := "exchange"
		if noExchange {
			name = "compare-rename"
		}
		t.Run(name, func(t *testing.T) { fn(t, noExchange) })
	}
}

// TestRewriteFilesConcurrentWriter: a runtime replaces the session (as forge
// does, by rename) or edits it in place between our read and our install. The
// rewrite notices, re-reads and edits again: the other writer's content is kept,
// with our change applied to it.
func TestRewriteFilesConcurrentWriter(t *testing.T) {
	for _, how := range []string{"rename", "in-place"} {
		t.Run(how, func(t *testing.T) {
			exchangeModes(t, func(t *testing.T, noExchange bool) {
				ctx := context.Background()
				dir := t.TempDir()
				path := filepath.Join(dir, "t-1.json")
				writeMode(t, path, forgeSession("t-1", localRef), 0o600)
				theirs := forgeSession("t-1", localRef) + `{"appended by the runtime": true}` + "\n"

				w := openRewriter(t, dir)
				fw := filesRewriterOf(t, w)
				fw.noExchange.Store(noExchange)
				calls := 0
				fw.beforeInstall = func(d, name string) {
					calls++
					if calls > 1 {
						return
					}
					if d != dir || name != "t-1.json" {
						t.Errorf("hook called for %s/%s", d, name)
					}
					var err error
					if how == "rename" {
						err = forgeWrite(path, theirs)
					} else {
						err = os.WriteFile(path, []byte(theirs), 0o600)
					}
					if err != nil {
						t.Error(err)
					}
				}
				var olds []string
				edit := func(p ref.Place, old []byte) ([]byte, error) {
					olds = append(olds, string(old))
					return bytes.ReplaceAll(old, []byte(localRef), []byte(bucketRef)), nil
				}
				var j journal
				c, err := w.Rewrite(ctx, edit, j.options(0))
				if err != nil {
					t.Fatalf("Rewrite: %v", err)
				}
				if c != (RewriteCounts{Units: 1, Changed: 1, Retried: 1}) {
					t.Errorf("counts = %+v", c)
				}
				if len(olds) != 2 || olds[0] != forgeSession("t-1", localRef) || olds[1] != theirs {
					t.Errorf("Edit saw %q; want the original, then the other writer's version", olds)
				}
				want := strings.ReplaceAll(theirs, localRef, bucketRef)
				if got := readString(t, path); got != want {
					t.Errorf("file = %q, want the other writer's content rewritten: %q", got, want)
				}
				// Both attempts were prepared; only the second was committed.
				if len(j.prepared) != 2 || len(j.committed) != 1 || string(j.committed[0].Old) != theirs {
					t.Errorf("prepared %d, committed %+v", len(j.prepared), j.committed)
				}
				checkNoLeftovers(t, dir)
			})
		})
	}
}

// TestRewriteFilesWriterDuringUndo: the runtime replaces the session before our
// exchange (so we swap its version back) and once more right after it. Its
// newest version must end up in place, with our change applied on a retry.
func TestRewriteFilesWriterDuringUndo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the exchange is Linux's renameat2")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "t-1.json")
	writeMode(t, path, forgeSession("v1", localRef), 0o600)
	w := openRewriter(t, dir)
	fw := filesRewriterOf(t, w)
	installs := 0
	fw.beforeInstall = func(_, _ string) {
		installs++
		if installs == 1 {
			if err := forgeWrite(path, forgeSession("v2", localRef)); err != nil {
				t.Error(err)
			}
		}
	}
	fw.afterExchange = func(_, _ string) {
		if installs == 1 {
			// Replaces our version, which the exchange has just put in place.
			if err := forgeWrite(path, forgeSession("v3", localRef)); err != nil {
				t.Error(err)
			}
		}
	}
	var olds []string
	edit := func(p ref.Place, old []byte) ([]byte, error) {
		olds = append(olds, string(old))
		return bytes.ReplaceAll(old, []byte(localRef), []byte(bucketRef)), nil
	}
	c, err := w.Rewrite(context.Background(), edit, RewriteOptions{})
	if err != nil || c != (RewriteCounts{Units: 1, Changed: 1, Retried: 1}) {
		t.Fatalf("counts %+v, err %v", c, err)
	}
	if len(olds) != 2 || olds[1] != forgeSession("v3", localRef) {
		t.Errorf("Edit saw %q; want v1, then v3", olds)
	}
	if got := readString(t, path); got != forgeSession("v3", bucketRef) {
		t.Errorf("file = %q, want v3 rewritten", got)
	}
	checkNoLeftovers(t, dir)
}

// TestRewriteFilesKeepsChanging: a session that changes before every install is
// left with the other writer's last version and reported as a conflict.
func TestRewriteFilesKeepsChanging(t *testing.T) {
	exchangeModes(t, func(t *testing.T, noExchange bool) {
		dir := t.TempDir()
		path := filepath.Join(dir, "busy.json")
		writeMode(t, path, forgeSession("busy", localRef), 0o600)
		writeMode(t, filepath.Join(dir, "calm.json"), forgeSession("calm", localRef), 0o600)
		w := openRewriter(t, dir)
		fw := filesRewriterOf(t, w)
		fw.noExchange.Store(noExchange)
		n := 0
		last := ""
		fw.beforeInstall = func(_, name string) {
			if name != "busy.json" {
				return
			}
			n++
			last = forgeSession(fmt.Sprintf("busy-v%d", n), localRef)
			if err := forgeWrite(path, last); err != nil {
				t.Error(err)
			}
		}
		var j journal
		c, err := w.Rewrite(context.Background(), replaceEdit(localRef, bucketRef, nil), j.options(2))
		if c != (RewriteCounts{Units: 2, Changed: 1, Retried: 2, Conflicts: 1}) {
			t.Errorf("counts = %+v", c)
		}
		units := unitErrors(t, err)
		if len(units) != 1 || units[0].Place.Document != path || !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), path) {
			t.Fatalf("err = %v; want a conflict naming %s", err, path)
		}
		if n != 3 || readString(t, path) != last {
			t.Errorf("after %d installs the file is %q, want the other writer's last version", n, readString(t, path))
		}
		if got := readString(t, filepath.Join(dir, "calm.json")); !strings.Contains(got, bucketRef) {
			t.Errorf("the other file was not rewritten: %q", got)
		}
		checkNoLeftovers(t, dir)
	})
}

// TestRewriteFilesRacingWriter runs a forge-like writer that keeps replacing a
// session while rewrites run: whatever the interleaving, the file ends with the
// writer's last version (ours applied to it or not), never an older one.
func TestRewriteFilesRacingWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t-1.json")
	version := func(n int) string { return fmt.Sprintf(`{"version": %d, "uri": %q}`, n, localRef) }
	writeMode(t, path, version(0), 0o600)
	w := openRewriter(t, dir)

	var stop atomic.Bool
	var wg sync.WaitGroup
	var last int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; !stop.Load(); n++ {
			if err := forgeWrite(path, version(n)); err != nil {
				t.Error(err)
				return
			}
			last = n
		}
	}()
	var total RewriteCounts
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		c, err := w.Rewrite(context.Background(), replaceEdit(localRef, bucketRef, nil), RewriteOptions{Retries: 20})
		if err != nil && !errors.Is(err, ErrConflict) {
			t.Fatalf("Rewrite: %v", err)
		}
		total.Changed += c.Changed
		total.Retried += c.Retried
	}
	stop.Store(true)
	wg.Wait()
	got := readString(t, path)
	if got != version(last) && got != strings.ReplaceAll(version(last), localRef, bucketRef) {
		t.Fatalf("file = %q; want version %d (the writer's last), rewritten or not", got, last)
	}
	if total.Changed == 0 {
		t.Errorf("no rewrite got through in 300 ms (%+v)", total)
	}
	t.Logf("writer wrote %d versions; rewrites: %+v", last, total)
	checkNoLeftovers(t, dir)
}

// TestRewriteFilesLinkSwappedIn: the session is replaced by a symbolic link to
// another file just before the install. Nothing is written through the link:
// the link stays, its target is untouched, and the file is reported.
func TestRewriteFilesLinkSwappedIn(t *testing.T) {
	exchangeModes(t, func(t *testing.T, noExchange bool) {
		base := t.TempDir()
		dir := filepath.Join(base, "sessions")
		path := filepath.Join(dir, "t-1.json")
		target := filepath.Join(base, "secret.json")
		writeMode(t, path, forgeSession("t-1", localRef), 0o600)
		writeMode(t, target, forgeSession("secret", localRef), 0o600)
		w := openRewriter(t, dir)
		fw := filesRewriterOf(t, w)
		fw.noExchange.Store(noExchange)
		fw.beforeInstall = func(_, _ string) {
			if err := os.Remove(path); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Error(err)
			}
		}
		c, err := w.Rewrite(context.Background(), replaceEdit(localRef, bucketRef, nil), RewriteOptions{})
		if c.Failed != 1 || c.Changed != 0 {
			t.Errorf("counts = %+v", c)
		}
		units := unitErrors(t, err)
		if len(units) != 1 || units[0].Place.Document != path || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("err = %v", err)
		}
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer the link: %v %v", path, fi, err)
		}
		if got := readString(t, target); got != forgeSession("secret", localRef) {
			t.Errorf("the link's target was written: %q", got)
		}
		checkNoLeftovers(t, base)
	})
}

// TestRewriteFilesVanished: a session the runtime deletes before the install is
// not recreated.
func TestRewriteFilesVanished(t *testing.T) {
	exchangeModes(t, func(t *testing.T, noExchange bool) {
		dir := t.TempDir()
		path := filepath.Join(dir, "old.json")
		writeMode(t, path, forgeSession("old", localRef), 0o600)
		w := openRewriter(t, dir)
		fw := filesRewriterOf(t, w)
		fw.noExchange.Store(noExchange)
		fw.beforeInstall = func(_, _ string) { os.Remove(path) }
		var j journal
		c, err := w.Rewrite(context.Background(), replaceEdit(localRef, bucketRef, nil), j.options(0))
		if err != nil || c != (RewriteCounts{Units: 1, Gone: 1}) {
			t.Errorf("counts %+v, err %v", c, err)
		}
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the deleted session was recreated: %v", err)
		}
		if len(j.prepared) != 1 || len(j.committed) != 0 {
			t.Errorf("prepared %d, committed %d", len(j.prepared), len(j.committed))
		}
		checkNoLeftovers(t, dir)
	})
}

// TestRewriteFilesPrepareError: Prepare failing stops the rewrite before that
// change is written; what was committed before stays.
func TestRewriteFilesPrepareError(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		writeMode(t, filepath.Join(dir, n+".json"), forgeSession(n, localRef), 0o600)
	}
	w := openRewriter(t, dir)
	j := journal{failAt: 2}
	c, err := w.Rewrite(context.Background(), replaceEdit(localRef, bucketRef, nil), j.options(0))
	if !errors.Is(err, errPrepare) || !strings.Contains(err.Error(), filepath.Join(dir, "b.json")) {
		t.Fatalf("err = %v; want the Prepare error naming b.json", err)
	}
	if c != (RewriteCounts{Units: 2, Changed: 1}) {
		t.Errorf("counts = %+v; want a written, b offered but not written, c not offered", c)
	}
	for n, want := range map[string]string{"a": bucketRef, "b": localRef, "c": localRef} {
		if got := readString(t, filepath.Join(dir, n+".json")); got != forgeSession(n, want) {
			t.Errorf("%s.json = %q", n, got)
		}
	}
	checkNoLeftovers(t, dir)
}

// TestRewriteFilesEditError: an Edit error stops the rewrite; nothing of that
// unit is written.
func TestRewriteFilesEditError(t *testing.T) {
	dir := t.TempDir()
	writeMode(t, filepath.Join(dir, "a.json"), forgeSession("a", localRef), 0o600)
	writeMode(t, filepath.Join(dir, "b.json"), forgeSession("b", localRef), 0o600)
	w := openRewriter(t, dir)
	boom := errors.New("cannot parse")
	edit := func(p ref.Place, old []byte) ([]byte, error) {
		if filepath.Base(p.Document) == "a.json" {
			return nil, boom
		}
		return []byte("x"), nil
	}
	c, err := w.Rewrite(context.Background(), edit, RewriteOptions{})
	if !errors.Is(err, boom) || c != (RewriteCounts{Units: 1}) {
		t.Fatalf("counts %+v, err %v", c, err)
	}
	if got := readString(t, filepath.Join(dir, "b.json")); got != forgeSession("b", localRef) {
		t.Errorf("b.json written after the stop: %q", got)
	}
}

// TestRewriteFilesSingleFile: a spec naming a file rewrites that file, with the
// spec as its place; a spec that is a link to a file is refused; a spec that is a
// link to a folder rewrites the folder it leads to.
func TestRewriteFilesSingleFile(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	path := filepath.Join(base, "real", "t-1.json")
	writeMode(t, path, forgeSession("t-1", localRef), 0o640)

	var seen []ref.Place
	c, err := openRewriter(t, path).Rewrite(ctx, replaceEdit(localRef, bucketRef, &seen), RewriteOptions{})
	if err != nil || c != (RewriteCounts{Units: 1, Changed: 1}) {
		t.Fatalf("counts %+v, err %v", c, err)
	}
	if want := []ref.Place{{Source: path, Document: path, Offset: -1}}; !reflect.DeepEqual(seen, want) {
		t.Errorf("places %+v, want %+v", seen, want)
	}
	if got := readString(t, path); got != forgeSession("t-1", bucketRef) {
		t.Errorf("file = %q", got)
	}

	link := filepath.Join(base, "link.json")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRewriter(ctx, link, Options{}); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("OpenRewriter(link to a file) = %v; want a usage error", err)
	}

	dirLink := filepath.Join(base, "sessions")
	if err := os.Symlink(filepath.Join(base, "real"), dirLink); err != nil {
		t.Fatal(err)
	}
	seen = nil
	c, err = openRewriter(t, dirLink).Rewrite(ctx, replaceEdit(bucketRef, localRef, &seen), RewriteOptions{})
	if err != nil || c != (RewriteCounts{Units: 1, Changed: 1}) {
		t.Fatalf("through a folder link: counts %+v, err %v", c, err)
	}
	if want := filepath.Join(dirLink, "t-1.json"); len(seen) != 1 || seen[0].Document != want {
		t.Errorf("places %+v, want %s", seen, want)
	}
	if got := readString(t, path); got != forgeSession("t-1", localRef) {
		t.Errorf("file = %q", got)
	}
	if fi, err := os.Lstat(dirLink); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the folder link was replaced: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v", fi.Mode().Perm())
	}
}

// TestRewriteFilesSubfolderSwapped: a subfolder replaced by a link is not
// followed, whenever the swap happens: before the walk reaches it (the walk
// sees a link and skips it), or after the walk found it a folder and before
// it opened it (the walk lists the link's target; the rewriter reaches sub/
// with O_NOFOLLOW and refuses, before reading anything there).
func TestRewriteFilesSubfolderSwapped(t *testing.T) {
	for _, when := range []string{"before the walk reaches it", "as the walk enters it"} {
		t.Run(when, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "sessions")
			writeMode(t, filepath.Join(dir, "a.json"), forgeSession("a", localRef), 0o600)
			writeMode(t, filepath.Join(dir, "sub", "b.json"), forgeSession("b", localRef), 0o600)
			elsewhere := filepath.Join(base, "elsewhere")
			writeMode(t, filepath.Join(elsewhere, "b.json"), forgeSession("elsewhere", localRef), 0o600)
			sub := filepath.Join(dir, "sub")
			swap := func() error {
				if err := os.RemoveAll(sub); err != nil {
					return err
				}
				return os.Symlink(elsewhere, sub)
			}
			swapped := false
			edit := func(p ref.Place, old []byte) ([]byte, error) {
				if when == "before the walk reaches it" && filepath.Base(p.Document) == "a.json" {
					swapped = true
					if err := swap(); err != nil {
						return nil, err
					}
				}
				return bytes.ReplaceAll(old, []byte(localRef), []byte(bucketRef)), nil
			}
			if when == "as the walk enters it" {
				walkDirHook = func(p string) {
					if p == sub && !swapped {
						swapped = true
						if err := swap(); err != nil {
							t.Error(err)
						}
					}
				}
				defer func() { walkDirHook = nil }()
			}
			c, err := openRewriter(t, dir).Rewrite(context.Background(), edit, RewriteOptions{})
			if !swapped {
				t.Fatal("the swap did not happen")
			}
			if got := readString(t, filepath.Join(elsewhere, "b.json")); got != forgeSession("elsewhere", localRef) {
				t.Errorf("a file behind the swapped-in link was written: %q", got)
			}
			if when == "before the walk reaches it" {
				if c != (RewriteCounts{Units: 1, Changed: 1, Skipped: 1}) || err != nil {
					t.Errorf("counts = %+v, err %v; want a.json changed and the link skipped", c, err)
				}
				return
			}
			if c != (RewriteCounts{Units: 1, Changed: 1, Failed: 1}) {
				t.Errorf("counts = %+v, err %v", c, err)
			}
			units := unitErrors(t, err)
			if len(units) != 1 || units[0].Place.Document != filepath.Join(sub, "b.json") || !strings.Contains(err.Error(), "not a folder any more") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// TestRewriteFilesCanceled: a canceled context stops the rewrite after the unit
// at hand.
func TestRewriteFilesCanceled(t *testing.T) {
	dir := t.TempDir()
	writeMode(t, filepath.Join(dir, "a.json"), forgeSession("a", localRef), 0o600)
	writeMode(t, filepath.Join(dir, "b.json"), forgeSession("b", localRef), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	edit := func(p ref.Place, old []byte) ([]byte, error) {
		cancel()
		return bytes.ReplaceAll(old, []byte(localRef), []byte(bucketRef)), nil
	}
	c, err := openRewriter(t, dir).Rewrite(ctx, edit, RewriteOptions{})
	if !errors.Is(err, context.Canceled) || c.Units != 1 || c.Changed > 1 {
		t.Fatalf("counts %+v, err %v", c, err)
	}
	if got := readString(t, filepath.Join(dir, "b.json")); got != forgeSession("b", localRef) {
		t.Errorf("b.json written after the cancel: %q", got)
	}
}
