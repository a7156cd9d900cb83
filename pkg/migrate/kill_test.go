package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestKillNineAtAnyPoint: a migration (copy, then rewrite) killed with SIGKILL
// at random moments never leaves a session pointing at a copy that is not
// there in full, never journals a copy that is not proven, and never leaves a
// session file half-written; a rerun completes, and rollback still restores
// the original sessions byte for byte.
func TestKillNineAtAnyPoint(t *testing.T) {
	if os.Getenv("MEDIACTL_MIGRATE_CHILD") != "" {
		return
	}
	ctx := context.Background()
	srv := storetest.StartS3(t, nil)
	bucketURL := srv.Bucket(t, "media")
	root := t.TempDir()
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	sessDir := filepath.Join(root, ".forge", "sessions")
	must(t, os.MkdirAll(inbound, 0o700))
	must(t, os.MkdirAll(sessDir, 0o700))
	var names []string
	for i := range 120 {
		body := make([]byte, 1024+(i%12)*150_000)
		for k := range body {
			body[k] = byte(i + k*31)
		}
		names = append(names, writeBlob(t, inbound, body, ".bin"))
	}
	for s := range 40 {
		var parts []string
		for k := range 3 {
			parts = append(parts, fmt.Sprintf(`{"type":"image","media":{"uri":%q}}`, filepath.Join(inbound, names[(s*3+k)%len(names)])))
		}
		doc := fmt.Sprintf("{\n  \"task_id\": \"t-%d\",\n  \"messages\": [{\"role\": \"user\", \"parts\": [%s]}]\n}\n", s, strings.Join(parts, ", "))
		must(t, os.WriteFile(filepath.Join(sessDir, fmt.Sprintf("t-%02d.json", s)), []byte(doc), 0o600))
	}
	original := snapshot(t, sessDir)
	jpath := filepath.Join(root, "journal.jsonl")
	dst := openStore(t, bucketURL)

	// Kill points: after the child journaled so many more copies or rewrites
	// (so that every phase is hit whatever the machine's speed), then at
	// fixed delays.
	kills := []struct {
		record string
		after  int
		delay  time.Duration
	}{
		{"copied", 1, 0}, {"copied", 15, 0}, {"copied", 30, 0}, {"copied", 30, 0},
		{"rewrite", 1, 0}, {"rewrite", 8, 0}, {"rewrite", 12, 0},
		{"", 0, 5 * time.Millisecond}, {"", 0, 300 * time.Millisecond},
	}
	for i, k := range kills {
		base := countRecords(jpath, k.record)
		cmd := exec.Command(os.Args[0], "-test.run=^TestMigrateChild$")
		cmd.Env = append(os.Environ(), "MEDIACTL_MIGRATE_CHILD="+root, "MEDIACTL_MIGRATE_BUCKET="+bucketURL)
		must(t, cmd.Start())
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		if k.record == "" {
			time.Sleep(k.delay)
		} else {
			for countRecords(jpath, k.record) < base+k.after {
				select {
				case <-done:
				case <-time.After(time.Millisecond):
					continue
				}
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done

		j, err := migrate.OpenJournal(jpath)
		if err != nil {
			t.Fatalf("kill %d: journal unreadable: %v", i, err)
		}
		// Every journaled copy is in the bucket, complete.
		for key, p := range j.State().Copied.All() {
			attrs, err := dst.Stat(ctx, key)
			if err != nil || attrs.Size != p.Size || attrs.Metadata[migrate.MetadataKey] != p.Digest() {
				t.Fatalf("kill %d: journal says %s is proven, bucket says %+v, %v", i, key, attrs, err)
			}
		}
		proven := j.State().Copied.Len()
		j.Close()
		// Every session is whole JSON, and each reference either still names
		// the local blob or names an object in the bucket holding its bytes.
		rewritten := checkSessions(t, sessDir, inbound, dst)
		t.Logf("kill %d (%s +%d, %v): %d proven copies, %d references rewritten", i, k.record, k.after, k.delay, proven, rewritten)
	}

	// A rerun completes.
	j := journal(t, jpath)
	src := openStore(t, inbound)
	rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: j})
	if rep.Failed != 0 || rep.Proven() != int64(len(names)) {
		t.Fatalf("rerun copy: %+v", rep)
	}
	rw, err := sessions.OpenRewriter(ctx, sessDir, sessions.Options{})
	must(t, err)
	defer rw.Close()
	repl := replacerFor(j, src, dst, root)
	if _, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: repl, Journal: j}); err != nil {
		t.Fatal(err)
	}
	noneLocal(t, sessDir, src, root)
	if n := checkSessions(t, sessDir, inbound, dst); n != 120 {
		t.Fatalf("%d references rewritten, want 120", n)
	}
	// Rollback restores every file as it was before the first run.
	if _, err := migrate.RollbackSessions(ctx, []sessions.Rewriter{rw}, j, 0); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, sessDir)
	for name, b := range original {
		if after[name] != b {
			t.Fatalf("%s after rollback differs from the original", name)
		}
	}
}

// noneLocal fails the test when a session in sessDir still points into src.
func noneLocal(t *testing.T, sessDir string, src store.Store, root string) {
	t.Helper()
	rd, err := sessions.Open(context.Background(), sessDir, sessions.Options{})
	must(t, err)
	defer rd.Close()
	ck, err := migrate.Check(context.Background(), []sessions.Source{rd}, src, scan.NewResolver(src, []string{root}), func(string) bool { return true }, 0)
	must(t, err)
	// A kill between the rewriter's swap and its cleanup leaves its temporary
	// file (".t-08.json.<hex>.tmp") holding the old version. Sessions read it,
	// as a leftover that may hold a session, so its references stay local and
	// keep their blobs until the operator removes it: only those may remain.
	var local []scan.Found
	for _, f := range ck.List {
		if base := filepath.Base(f.Place.Document); !(strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".tmp")) {
			local = append(local, f)
		}
	}
	if len(local) != 0 || !ck.Complete {
		t.Fatalf("%d references still point at the local store (complete %v): %+v", len(local), ck.Complete, local)
	}
}

// countRecords counts the journal's records of one type.
func countRecords(path, typ string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), `{"t":"`+typ+`"`)
}

func replacerFor(j *migrate.Journal, src, dst store.Store, root string) *migrate.Replacer {
	return &migrate.Replacer{
		Resolver: scan.NewResolver(src, []string{root}),
		Target: func(key string) (string, bool) {
			_, ok := j.Proven(key)
			return migrate.ObjectURL(dst.(store.Bucket), key), ok
		},
	}
}

// checkSessions checks every session file and returns how many references
// point at the bucket.
func checkSessions(t *testing.T, sessDir, inbound string, dst store.Store) int {
	t.Helper()
	entries, err := os.ReadDir(sessDir)
	must(t, err)
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			continue // a temporary file of a killed rewrite: session readers skip it
		}
		b, err := os.ReadFile(filepath.Join(sessDir, e.Name()))
		must(t, err)
		if !json.Valid(b) {
			t.Fatalf("%s is not whole JSON:\n%s", e.Name(), b)
		}
		var refs []ref.Reference
		ex := ref.Extractor{Found: func(r ref.Reference, _ ref.Place) { refs = append(refs, r) }}
		must(t, ex.Document(strings.NewReader(string(b)), ref.Place{Document: e.Name()}))
		for _, r := range refs {
			switch r.Kind {
			case ref.AbsPath:
				if _, err := os.Stat(r.Path); err != nil {
					t.Fatalf("%s names %s, which is gone", e.Name(), r.Raw)
				}
			case ref.BucketURL:
				u, _ := url.Parse(r.Raw)
				key := strings.TrimPrefix(u.Path, "/")
				body := readObject(t, dst, key)
				if digest(body)+".bin" != key {
					t.Fatalf("%s names %s, whose bytes do not match its name", e.Name(), r.Raw)
				}
				n++
			default:
				t.Fatalf("%s: unexpected reference %+v", e.Name(), r)
			}
		}
	}
	return n
}

// TestMigrateChild is the process TestKillNineAtAnyPoint kills: a whole
// migration, copy then rewrite.
func TestMigrateChild(t *testing.T) {
	root := os.Getenv("MEDIACTL_MIGRATE_CHILD")
	if root == "" {
		t.Skip("run by TestKillNineAtAnyPoint")
	}
	ctx := context.Background()
	src := openStore(t, filepath.Join(root, ".forge", "files", "inbound"))
	dst := openStore(t, os.Getenv("MEDIACTL_MIGRATE_BUCKET"))
	j := journal(t, filepath.Join(root, "journal.jsonl"))
	copyAll(t, migrate.Options{From: src, To: dst, Journal: j, Jobs: 4})
	rw, err := sessions.OpenRewriter(ctx, filepath.Join(root, ".forge", "sessions"), sessions.Options{})
	must(t, err)
	defer rw.Close()
	if _, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: replacerFor(j, src, dst, root), Journal: j}); err != nil {
		t.Fatal(err)
	}
}
