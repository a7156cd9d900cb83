package forget

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/target"
	"github.com/mediactl/mediactl/pkg/trash"
)

// work is a forge work directory.
type work struct {
	t     *testing.T
	root  string
	inbox string
	sess  string
}

func newWork(t *testing.T) *work {
	root := t.TempDir()
	w := &work{t: t, root: root, inbox: filepath.Join(root, ".forge", "files", "inbound"), sess: filepath.Join(root, ".forge", "sessions")}
	for _, d := range []string{w.inbox, w.sess} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// blob writes content under its sha256 name (ext ".png"), or under name,
// a day old, and returns the key.
func (w *work) blob(content, name string) string {
	if name == "" {
		sum := sha256.Sum256([]byte(content))
		name = hex.EncodeToString(sum[:]) + ".png"
	}
	p := filepath.Join(w.inbox, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		w.t.Fatal(err)
	}
	return name
}

// session saves forge's session of task, whose parts name keys, with text.
func (w *work) session(task, text string, keys ...string) {
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf(`{"type":"image","media":{"mimeType":"image/png","uri":%q}}`, filepath.Join(w.inbox, k)))
	}
	doc := fmt.Sprintf(`{"task_id":%q,"messages":[{"role":"user","content":%q,"parts":[%s]}]}`, task, text, strings.Join(parts, ","))
	if err := os.WriteFile(filepath.Join(w.sess, task+".json"), []byte(doc), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *work) exists(key string) bool {
	_, err := os.Lstat(filepath.Join(w.inbox, key))
	return err == nil
}

func (w *work) forget(del bool, owners ...string) *Report {
	w.t.Helper()
	ctx := context.Background()
	tg, err := target.Open(ctx, target.Spec{Layout: "forge", Root: w.root})
	if err != nil {
		w.t.Fatal(err)
	}
	defer tg.Close()
	var stores []scan.Target
	for _, s := range tg.Stores {
		stores = append(stores, scan.Target{Store: s, Resolver: tg.Resolver(s)})
	}
	rep, err := Run(ctx, Options{Stores: stores, Sources: tg.Sources, Rule: owner.Rule{Layout: "forge"}, Owners: owners, Delete: del,
		Companion: func(s store.Store) func(string) (string, bool) { return tg.Companion(s) }})
	if err != nil {
		w.t.Fatal(err)
	}
	return rep
}

func keysOf(bs []Blob) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Key)
	}
	return out
}

func keptReason(rep *Report, key string) string {
	for _, k := range rep.Kept {
		if k.Key == key {
			return k.Reason
		}
	}
	return ""
}

// The owner's own blob goes; the same bytes another owner uploaded stay,
// and so does a blob another owner's text names only by its words.
func TestForgetSharedAndWords(t *testing.T) {
	w := newWork(t)
	mine := w.blob("only alice", "")
	shared := w.blob("same bytes", "")
	words := w.blob("holiday", "holiday photo.jpg")
	orphan := w.blob("nobody", "")
	w.session("alice", "look", mine, shared, words)
	w.session("bob", "my upload", shared)
	w.session("carol", "what a holiday - photo attached")

	rep := w.forget(false, "alice")
	if rep.Outcome != outcome.OK || !rep.DryRun {
		t.Fatalf("dry run: %+v", rep)
	}
	if got := keysOf(rep.Erased); !slices.Equal(got, []string{mine}) {
		t.Fatalf("dry run erases %v, want %v", got, []string{mine})
	}
	if !w.exists(mine) {
		t.Fatal("the dry run removed a blob")
	}
	if keptReason(rep, shared) != KeptNamedPrecisely || keptReason(rep, words) != KeptNamedByRule {
		t.Fatalf("kept: %+v", rep.Kept)
	}

	rep = w.forget(true, "alice")
	if rep.Outcome != outcome.OK || rep.DryRun {
		t.Fatalf("delete: %+v", rep)
	}
	if got := keysOf(rep.Erased); !slices.Equal(got, []string{mine}) {
		t.Fatalf("erased %v", got)
	}
	b := rep.Erased[0]
	if b.RemovedAt == nil || b.References != 1 || rep.Dangling != 1 || !slices.Equal(b.Where, []string{"store"}) || b.SHA256 != strings.TrimSuffix(mine, ".png") {
		t.Fatalf("receipt: %+v", b)
	}
	for _, k := range []string{shared, words, orphan} {
		if !w.exists(k) {
			t.Errorf("%s is gone", k)
		}
	}
	if w.exists(mine) {
		t.Error("the erased blob is still there")
	}
	runs, err := trash.Runs(context.Background(), storeOf(t, w.inbox))
	if err != nil || len(runs) != 0 {
		t.Errorf("trash runs left: %v %v", runs, err)
	}
	// The receipt never names the other owners.
	for _, k := range rep.Kept {
		if strings.Contains(k.Reason, "bob") || strings.Contains(k.Reason, "carol") {
			t.Errorf("kept reason names an owner: %q", k.Reason)
		}
	}
}

func storeOf(t *testing.T, dir string) store.Store {
	st, err := store.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// An owner no unit has is reported, and nothing is removed.
func TestForgetUnknownOwner(t *testing.T) {
	w := newWork(t)
	k := w.blob("x", "")
	w.session("alice", "", k)
	rep := w.forget(true, "alice", "mallory")
	if rep.Outcome != outcome.Found || !slices.Equal(rep.Unknown, []string{"mallory"}) || len(rep.Erased) != 0 || !w.exists(k) {
		t.Fatalf("%+v", rep)
	}
}

// A session that cannot be read stops the run: nothing removed.
func TestForgetIncomplete(t *testing.T) {
	w := newWork(t)
	k := w.blob("x", "")
	w.session("alice", "", k)
	if err := os.WriteFile(filepath.Join(w.sess, "cut.json"), []byte(`{"task_id":"bob","messages":[{"content":"`), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := w.forget(true, "alice")
	if rep.Outcome != outcome.Incomplete || len(rep.Erased) != 0 || !w.exists(k) || len(rep.Problems) == 0 {
		t.Fatalf("%+v", rep)
	}
}

// A blob of the owner's already in a gc trash run is deleted from that run;
// the run's other blobs stay.
func TestForgetTrashRun(t *testing.T) {
	w := newWork(t)
	mine := w.blob("alice's", "")
	other := w.blob("someone's orphan", "")
	w.session("alice", "", mine)
	w.session("bob", "hello")
	st := storeOf(t, w.inbox)
	ctx := context.Background()
	var run string
	err := storelock.Do(ctx, st, "gc", func(l *storelock.Lock) error {
		fi1, _ := os.Stat(filepath.Join(w.inbox, mine))
		fi2, _ := os.Stat(filepath.Join(w.inbox, other))
		res, err := trash.Move(ctx, l, trash.List{{Key: mine, Size: fi1.Size(), ModTime: fi1.ModTime()}, {Key: other, Size: fi2.Size(), ModTime: fi2.ModTime()}}, trash.Options{})
		if res != nil {
			run = res.Run
		}
		return err
	})
	if err != nil || run == "" {
		t.Fatal(err, run)
	}
	rep := w.forget(true, "alice")
	if rep.Outcome != outcome.OK || len(rep.Erased) != 1 || !slices.Equal(rep.Erased[0].Where, []string{"trash run " + run}) {
		t.Fatalf("%+v", rep)
	}
	runs, err := trash.Runs(ctx, st)
	if err != nil || len(runs) != 1 || runs[0].Blobs != 1 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	if _, err := os.Stat(filepath.Join(w.inbox, ".mediactl", "trash", run, other)); err != nil {
		t.Errorf("the other blob of the run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.inbox, ".mediactl", "trash", run, mine)); err == nil {
		t.Error("the owner's blob is still in the trash run")
	}
}

// A session another owner saves during the run, naming the blob, keeps it:
// before the decision (the second read sees it) and after the moves (the
// read after them puts it back).
func TestForgetNamedDuringRun(t *testing.T) {
	for _, at := range []string{"read", "moved"} {
		t.Run(at, func(t *testing.T) {
			w := newWork(t)
			mine := w.blob("alice's", "")
			gone := w.blob("alice's other", "")
			w.session("alice", "", mine, gone)
			w.session("bob", "hello")
			phaseHook = func(p string) {
				if p == at {
					w.session("bob", "I have it too: sha256 "+strings.ToUpper(strings.TrimSuffix(mine, ".png")))
				}
			}
			t.Cleanup(func() { phaseHook = nil })
			rep := w.forget(true, "alice")
			if rep.Outcome != outcome.OK {
				t.Fatalf("%+v", rep)
			}
			if !w.exists(mine) {
				t.Fatal("the blob named during the run is gone")
			}
			if w.exists(gone) {
				t.Error("the other blob stayed")
			}
			want := KeptNamedByRule
			if at == "moved" {
				want = KeptNamedDuringRun
			}
			if got := keptReason(rep, mine); got != want {
				t.Errorf("kept %q, want %q", got, want)
			}
			if got := keysOf(rep.Erased); !slices.Equal(got, []string{gone}) {
				t.Errorf("erased %v", got)
			}
		})
	}
}

// A read after the moves that is not complete puts everything back.
func TestForgetRereadIncomplete(t *testing.T) {
	w := newWork(t)
	mine := w.blob("alice's", "")
	w.session("alice", "", mine)
	w.session("bob", "hello")
	phaseHook = func(p string) {
		if p == "moved" {
			if err := os.WriteFile(filepath.Join(w.sess, "cut.json"), []byte(`{"task_id":"bob","messages":[{"content":"`), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { phaseHook = nil })
	rep := w.forget(true, "alice")
	if rep.Outcome != outcome.Incomplete || rep.PutBack != 1 || len(rep.Erased) != 0 || !w.exists(mine) {
		t.Fatalf("%+v", rep)
	}
	runs, _ := trash.Runs(context.Background(), storeOf(t, w.inbox))
	if len(runs) != 0 {
		t.Errorf("runs left: %v", runs)
	}
}

// A blob written again (freshened) during the run stays.
func TestForgetFreshenedDuringRun(t *testing.T) {
	w := newWork(t)
	mine := w.blob("alice's", "")
	w.session("alice", "", mine)
	phaseHook = func(p string) {
		if p == "decided" {
			now := time.Now()
			if err := os.Chtimes(filepath.Join(w.inbox, mine), now, now); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { phaseHook = nil })
	rep := w.forget(true, "alice")
	if !w.exists(mine) || len(rep.Erased) != 0 || !strings.HasPrefix(keptReason(rep, mine), KeptChanged) {
		t.Fatalf("%+v", rep)
	}
}
