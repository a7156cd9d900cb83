package retain_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// name is a content-addressed key of content.
func name(content string) string {
	d := sha256.Sum256([]byte(content))
	return hex.EncodeToString(d[:]) + ".png"
}

// forgeSession is a session as forge's MemoryStore.Save writes it (the
// fields these tests use).
type forgeSession struct {
	TaskID   string         `json:"task_id"`
	Messages []forgeMessage `json:"messages"`
}

type forgeMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func textSession(id, text string) forgeSession {
	return forgeSession{TaskID: id, Messages: []forgeMessage{{Role: "assistant", Content: text}}}
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

// mark opens w's store and sessions and marks them with opts.
func (w *forgeWork) mark(t testing.TB, opts retain.MarkOptions) *retain.Retention {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, w.inbound)
	must(t, err)
	t.Cleanup(func() { st.Close() })
	src, err := sessions.Open(ctx, w.sessions, sessions.Options{})
	must(t, err)
	t.Cleanup(func() { src.Close() })
	r, err := retain.Mark(ctx, st, []sessions.Source{src}, opts)
	must(t, err)
	return r
}

// TestMarkFence: the decision for one key (migrate's selection) keeps a blob
// younger than the fence, as gc does, and says why.
func TestMarkFence(t *testing.T) {
	w := newForgeWork(t)
	old := w.blob(t, "old")
	young := name("young")
	must(t, os.WriteFile(filepath.Join(w.inbound, young), []byte("young"), 0o600))
	saveForge(t, w.sessions, textSession("t", "nothing here"))
	r := w.mark(t, retain.MarkOptions{})
	cutoff := r.Started.Add(-retain.DefaultMinAge)
	if got := r.Keeps(old, cutoff); got != "" {
		t.Errorf("old blob: kept (%s)", got)
	}
	if got := r.Keeps(young, cutoff); got != retain.KeptYoung {
		t.Errorf("young blob: %q", got)
	}
	if got := r.Keeps("not-in-the-store.png", cutoff); got != retain.KeptUnlisted {
		t.Errorf("unknown key: %q", got)
	}
	if r.Kept != 0 || r.Blobs != 2 || !r.Complete {
		t.Errorf("retention: %d kept of %d, complete %v", r.Kept, r.Blobs, r.Complete)
	}
}

// TestKeepsTemporary: a file of the store whose name looks temporary is no
// blob of the retention, and the decision for its key says it is kept for its
// name, not that it is gone from the store.
func TestKeepsTemporary(t *testing.T) {
	w := newForgeWork(t)
	tmp := "9df6e7510c12409b9d0a061bc2b1b79a.tmp"
	must(t, os.WriteFile(filepath.Join(w.inbound, tmp), []byte("notes"), 0o600))
	old := time.Now().Add(-72 * time.Hour)
	must(t, os.Chtimes(filepath.Join(w.inbound, tmp), old, old))
	saveForge(t, w.sessions, textSession("t", "nothing here"))
	r := w.mark(t, retain.MarkOptions{})
	cutoff := r.Started.Add(-retain.DefaultMinAge)
	if got := r.Keeps(tmp, cutoff); got != retain.KeptTemporary {
		t.Errorf("temporary name: %q", got)
	}
	if got := r.Keeps("gone.tmp", cutoff); got != retain.KeptUnlisted {
		t.Errorf("temporary name not in the store: %q", got)
	}
	if r.Blobs != 0 {
		t.Errorf("retention holds %d blobs, want none", r.Blobs)
	}
}

// TestMarkCopiedTo: text naming a blob's copy under the destination does not
// keep the source; any other mention of the blob in the same string does, and
// so does a path that climbs out of the prefix.
func TestMarkCopiedTo(t *testing.T) {
	w := newForgeWork(t)
	var ks []string
	texts := []string{
		"saved to s3://media/inbound/%s.",
		"s3://media/inbound/%s and the original /srv/agent/.forge/files/inbound/%[1]s",
		"s3://media/inbound/../elsewhere/%s",
		`{"uri":"s3://media/inbound/%s"}`,
	}
	for i, text := range texts {
		k := w.blob(t, fmt.Sprint("copied ", i))
		ks = append(ks, k)
		saveForge(t, w.sessions, textSession(fmt.Sprint("t-", i), fmt.Sprintf(text, k)))
	}
	r := w.mark(t, retain.MarkOptions{CopiedTo: []string{"s3://media/inbound/"}})
	want := []bool{false, true, true, false}
	for i, k := range ks {
		id, _ := r.Lookup(k)
		if got := r.KeptID(id); got != want[i] {
			t.Errorf("%q: kept %v, want %v", texts[i], got, want[i])
		}
	}
	// Without the destination every one of them is kept.
	r = w.mark(t, retain.MarkOptions{})
	if r.Kept != int64(len(ks)) {
		t.Errorf("without CopiedTo: %d of %d kept", r.Kept, len(ks))
	}
}

// TestMarkCopiedToEndsWithTheKey: the text left out for naming a copy ends
// where the copy's key ends, whatever byte follows it; a blob named after it
// in the same string is kept, as gc keeps it.
func TestMarkCopiedToEndsWithTheKey(t *testing.T) {
	w := newForgeWork(t)
	const copies = "/srv/agent/.forge/files/remote/"
	// A URL's query, a shell's assignment and path list, a fragment, a
	// list, a space, and the punctuation of prose in Chinese and Japanese.
	seps := []string{"&right=", ":", "=", "?", "#", ",", ";", " ", "、", "，", "："}
	var copied, after []string
	for i, sep := range seps {
		x, y := w.blob(t, fmt.Sprint("copied ", i)), w.blob(t, fmt.Sprint("named after it ", i))
		copied, after = append(copied, x), append(after, y)
		saveForge(t, w.sessions, textSession(fmt.Sprint("t-", i), copies+x+sep+w.inbound+"/"+y))
	}
	r := w.mark(t, retain.MarkOptions{CopiedTo: []string{copies}})
	for i := range copied {
		if id, _ := r.Lookup(copied[i]); r.KeptID(id) {
			t.Errorf("%q after the copy: its source is kept by the text naming the copy", seps[i])
		}
		if id, _ := r.Lookup(after[i]); !r.KeptID(id) {
			t.Errorf("%q after the copy: the blob named next in the same string is not kept", seps[i])
		}
	}
}

// TestMarkNestedStoreEmptyFolders: another store's internal folder is found
// below the store whether or not it holds a file. After a restore of its
// only run, a purge or a --delete that moved nothing, it holds only empty
// folders (tmp/, trash/RUN/), and its blobs beside it are that store's all
// the same. The store's own internal folder, and a blob named like the
// folder, are no other store.
func TestMarkNestedStoreEmptyFolders(t *testing.T) {
	for _, scheme := range []string{"local", "file"} {
		t.Run(scheme, func(t *testing.T) {
			w := newForgeWork(t)
			w.blob(t, "a blob")
			inner := filepath.Join(w.inbound, "old-pod")
			must(t, os.MkdirAll(filepath.Join(inner, store.InternalDir, "tmp"), 0o700))
			must(t, os.MkdirAll(filepath.Join(inner, store.InternalDir, "trash", "20261101T000000Z-1"), 0o700))
			must(t, os.WriteFile(filepath.Join(inner, name("inner")), []byte("inner"), 0o600))
			// A folder holding only an empty internal folder, and a blob
			// named .mediactl (a file, not a store's folder).
			must(t, os.MkdirAll(filepath.Join(w.inbound, "bare", store.InternalDir), 0o700))
			must(t, os.MkdirAll(filepath.Join(w.inbound, "file"), 0o700))
			must(t, os.WriteFile(filepath.Join(w.inbound, "file", store.InternalDir), []byte("a blob"), 0o600))
			// The store's own internal folder, with empty folders only.
			must(t, os.MkdirAll(filepath.Join(w.inbound, store.InternalDir, "trash", "20261102T000000Z-2"), 0o700))
			ctx := context.Background()
			loc := w.inbound
			if scheme == "file" {
				loc = "file://" + filepath.ToSlash(w.inbound)
			}
			st, err := store.Open(ctx, loc)
			must(t, err)
			defer st.Close()
			for k := range 3 {
				r, err := retain.Mark(ctx, st, nil, retain.MarkOptions{Shard: shard.Spec{K: k, N: 3}})
				must(t, err)
				if want := []string{"bare", "old-pod"}; !slices.Equal(sorted(r.Nested), want) {
					t.Errorf("shard %d of 3: Nested = %q, want %q", k, r.Nested, want)
				}
			}
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
