package migrate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/sessions"
)

// readBackStore is a forge-like work directory: blobs in .forge/files/inbound,
// sessions in .forge/sessions naming them by absolute path, and a file://
// bucket at .forge/files/remote (the mount forge reads the copies through).
type readBackStore struct {
	root, inbound, sessDir, remote string
	keys                           []string
}

func newReadBackStore(t *testing.T, n int) *readBackStore {
	root := t.TempDir()
	s := &readBackStore{
		root:    root,
		inbound: filepath.Join(root, ".forge", "files", "inbound"),
		sessDir: filepath.Join(root, ".forge", "sessions"),
		remote:  filepath.Join(root, ".forge", "files", "remote"),
	}
	for _, d := range []string{s.inbound, s.sessDir, s.remote} {
		must(t, os.MkdirAll(d, 0o700))
	}
	for i := range n {
		key := writeBlob(t, s.inbound, append(append([]byte{}, pngHead...), fmt.Sprint("picture ", i)...), ".png")
		s.keys = append(s.keys, key)
		doc := fmt.Sprintf(`{"task_id":"t-%d","messages":[{"role":"user","parts":[{"type":"image","media":{"mimeType":"image/png","uri":%q}}]}]}`,
			i, filepath.Join(s.inbound, key))
		must(t, os.WriteFile(filepath.Join(s.sessDir, fmt.Sprintf("t-%d.json", i)), []byte(doc), 0o600))
	}
	return s
}

// run migrates the store into the remote bucket with the forge template,
// reading the copies back through rp.
func (s *readBackStore) run(t *testing.T, rp *replay.Replayer, reads func(string) bool, deleteSource bool) *migrate.RunReport {
	t.Helper()
	ctx := context.Background()
	src := openStore(t, s.inbound)
	dstURL := "file://" + s.remote
	dst := openStore(t, dstURL)
	tmpl, err := migrate.ParseTemplate("{files_dir}/remote/{prefix}{key}", map[string]string{"files_dir": filepath.Dir(s.inbound)})
	must(t, err)
	rd, err := sessions.Open(ctx, s.sessDir, sessions.Options{})
	must(t, err)
	defer rd.Close()
	rw, err := sessions.OpenRewriter(ctx, s.sessDir, sessions.Options{})
	must(t, err)
	defer rw.Close()
	rep, err := migrate.Run(ctx, migrate.RunOptions{
		Options:      migrate.Options{From: src, To: dst},
		JournalPath:  filepath.Join(s.root, "journal.jsonl"),
		Rewrite:      true,
		Rewriters:    []sessions.Rewriter{rw},
		Template:     tmpl,
		Sessions:     []sessions.Source{rd},
		Bases:        []string{s.root},
		ReadBack:     &migrate.ReadBack{Replayer: rp, Reads: reads},
		DeleteSource: deleteSource,
	})
	must(t, err)
	return rep
}

func (s *readBackStore) replayer(t *testing.T, mount string) *replay.Replayer {
	rp, err := replay.New(replay.Config{Buckets: []replay.Bucket{{URL: "file://" + s.remote, Prefixes: []string{""}, Mount: mount}}})
	must(t, err)
	t.Cleanup(func() { rp.Close() })
	return rp
}

// Every rewritten reference is read back through pkg/replay, as the runtime
// reads it, and leads to its proven copy.
func TestReadBackProvesEveryRewrittenReference(t *testing.T) {
	s := newReadBackStore(t, 5)
	rep := s.run(t, s.replayer(t, ""), nil, false)
	if rep.Rewrite == nil || rep.Rewrite.References != 5 {
		t.Fatalf("rewrite: %+v", rep.Rewrite)
	}
	ck := rep.Check
	if ck.ReadBack != 5 || ck.Unresolved != 0 || ck.ReadBackOther != 0 || ck.ReadBackFull {
		t.Errorf("read back %d, other %d, unresolved %d (%+v), full %v; want 5, 0, 0, false", ck.ReadBack, ck.ReadBackOther, ck.Unresolved, ck.UnresolvedList, ck.ReadBackFull)
	}
	if rep.Outcome != outcome.OK {
		t.Errorf("outcome %s, want ok", rep.Outcome)
	}
}

// A reference the runtime would not read back is unresolved: listed with its
// place, the run exits 1, and --delete-source keeps its source.
func TestReadBackUnreadKeepsTheSource(t *testing.T) {
	s := newReadBackStore(t, 3)
	notTheFirst := filepath.Join(s.remote, s.keys[0])
	reads := func(ref string) bool { return ref != notTheFirst }
	rep := s.run(t, s.replayer(t, ""), reads, true)
	ck := rep.Check
	if ck.ReadBack != 2 || ck.Unresolved != 1 || len(ck.UnresolvedList) != 1 {
		t.Fatalf("read back %d, unresolved %d %+v; want 2, 1", ck.ReadBack, ck.Unresolved, ck.UnresolvedList)
	}
	u := ck.UnresolvedList[0]
	if u.Ref != notTheFirst || u.Key != s.keys[0] || u.Place.Document != filepath.Join(s.sessDir, "t-0.json") || !strings.Contains(u.Reason, "does not read") {
		t.Errorf("unresolved = %+v", u)
	}
	if rep.Outcome != outcome.Found {
		t.Errorf("outcome %s, want found (exit 1)", rep.Outcome)
	}
	if rep.Delete == nil || rep.Delete.Result == nil || rep.Delete.Result.Trashed != 2 || rep.Delete.Kept != 1 {
		t.Fatalf("delete = %+v", rep.Delete)
	}
	if _, err := os.Stat(filepath.Join(s.inbound, s.keys[0])); err != nil {
		t.Errorf("the source of the unresolved reference is gone: %v", err)
	}
	for _, k := range s.keys[1:] {
		if _, err := os.Stat(filepath.Join(s.inbound, k)); !os.IsNotExist(err) {
			t.Errorf("%s: the source of a proven reference is still there (%v)", k, err)
		}
	}
}

// A reference that the pods' mount does not show (the copies mounted
// elsewhere than the template says) does not resolve: every source is kept.
func TestReadBackWrongMountKeepsEverySource(t *testing.T) {
	s := newReadBackStore(t, 3)
	// The pods mount the bucket somewhere else: the rewritten paths lie
	// below no mount of it.
	other := t.TempDir()
	rp, err := replay.New(replay.Config{Buckets: []replay.Bucket{{URL: "file://" + other, Prefixes: []string{""}}}})
	must(t, err)
	defer rp.Close()
	rep := s.run(t, rp, nil, true)
	ck := rep.Check
	if ck.ReadBack != 0 || ck.Unresolved != 3 {
		t.Fatalf("read back %d, unresolved %d %+v; want 0, 3", ck.ReadBack, ck.Unresolved, ck.UnresolvedList)
	}
	for _, u := range ck.UnresolvedList {
		if u.Key == "" || !strings.Contains(u.Reason, "refused") {
			t.Errorf("unresolved = %+v", u)
		}
	}
	if rep.Delete == nil || rep.Delete.Result != nil || rep.Delete.Kept != 3 {
		t.Fatalf("delete = %+v", rep.Delete)
	}
	for _, k := range s.keys {
		if _, err := os.Stat(filepath.Join(s.inbound, k)); err != nil {
			t.Errorf("%s: source gone: %v", k, err)
		}
	}
}

// A reference below the mount that stands for no proven copy (a name the
// copies do not have) does not resolve, and which source it was meant for
// is unknown: no source is deleted.
func TestReadBackUnknownRefusesTheDelete(t *testing.T) {
	s := newReadBackStore(t, 2)
	bogus := filepath.Join(s.remote, strings.Repeat("d", 64)+".png")
	doc := fmt.Sprintf(`{"task_id":"t-x","messages":[{"role":"assistant","content":%q}]}`, "saved to "+bogus)
	must(t, os.WriteFile(filepath.Join(s.sessDir, "t-x.json"), []byte(doc), 0o600))
	rep := s.run(t, s.replayer(t, ""), nil, true)
	ck := rep.Check
	if ck.ReadBack != 2 || ck.Unresolved != 1 || ck.UnresolvedUnknown != 1 {
		t.Fatalf("read back %d, unresolved %d (unknown %d) %+v; want 2, 1 (1)", ck.ReadBack, ck.Unresolved, ck.UnresolvedUnknown, ck.UnresolvedList)
	}
	if u := ck.UnresolvedList[0]; u.Ref != bogus || u.Key != "" || !strings.Contains(u.Reason, "no such file") && !strings.Contains(u.Reason, "not exist") {
		t.Errorf("unresolved = %+v", u)
	}
	if rep.Delete == nil || rep.Delete.Refused == "" || rep.Delete.Result != nil {
		t.Fatalf("delete = %+v, want refused", rep.Delete)
	}
	for _, k := range s.keys {
		if _, err := os.Stat(filepath.Join(s.inbound, k)); err != nil {
			t.Errorf("%s: source gone: %v", k, err)
		}
	}
}
