package migrate_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"gocloud.dev/blob"
	_ "modernc.org/sqlite"

	"github.com/mediactl/mediactl/internal/realworld"
	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// forgeWorkdir builds an agent work directory: blobs in .forge/files/inbound
// and two sessions naming them, absolutely and relatively.
func forgeWorkdir(t *testing.T) (root string, blobs []string) {
	t.Helper()
	root = t.TempDir()
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	sess := filepath.Join(root, ".forge", "sessions")
	must(t, os.MkdirAll(inbound, 0o700))
	must(t, os.MkdirAll(sess, 0o700))
	for i := range 3 {
		blobs = append(blobs, writeBlob(t, inbound, append(append([]byte{}, pngHead...), fmt.Sprintf("image %d", i)...), ".png"))
	}
	doc1 := `{
  "task_id": "t-1",
  "messages": [
    {"role": "user", "content": "What's in this image?",
     "parts": [
       {"type": "text", "text": "What's in this image?"},
       {"type": "image", "media": {"mimeType": "image/png", "uri": "` + filepath.Join(inbound, blobs[0]) + `"}}]},
    {"role": "assistant", "content": "A cat.", "tool_calls": [{"id": "c", "type": "function",
      "function": {"name": "crop", "arguments": "{\"path\":\"` + filepath.Join(inbound, blobs[1]) + `\"}"}}]}
  ],
  "created_at": "2026-07-01T10:00:00.123456Z"
}
`
	doc2 := `{"task_id":"t-2","messages":[{"role":"user","parts":[{"type":"image","media":{"uri":".forge/files/inbound/` + blobs[1] + `"}}]}]}`
	must(t, os.WriteFile(filepath.Join(sess, "t-1.json"), []byte(doc1), 0o600))
	must(t, os.WriteFile(filepath.Join(sess, "t-2.json"), []byte(doc2), 0o640))
	return root, blobs
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		must(t, err)
		fi, _ := e.Info()
		out[e.Name()] = fmt.Sprintf("%v\n%s", fi.Mode(), b)
	}
	return out
}

// backend is a bucket service the migration tests run against.
type backend struct {
	name string
	// bucket creates a bucket (or container) and returns its URL.
	bucket func(t *testing.T, name string) string
}

// backends are S3 (gofakes3 in process, and SeaweedFS started by the test
// script), GCS (fake-gcs-server in process) and Azure (Azurite), all on 127.0.0.1.
func backends(t *testing.T) []backend {
	return []backend{
		{"s3", func(t *testing.T, name string) string { return storetest.StartS3(t, nil).Bucket(t, name) }},
		{"seaweedfs", func(t *testing.T, name string) string { return storetest.SeaweedFS(t).Bucket(t, name) }},
		{"gcs", func(t *testing.T, name string) string { return storetest.StartGCS(t).Bucket(t, name) }},
		{"azure", func(t *testing.T, name string) string { return storetest.StartAzurite(t).Container(t, name) }},
	}
}

// withPrefix adds a key prefix to a bucket URL.
func withPrefix(u, prefix string) string {
	if strings.Contains(u, "?") {
		return u + "&prefix=" + prefix
	}
	return u + "?prefix=" + prefix
}

// readRef reads the object a rewritten reference names with a plain gocloud
// read: the reference's scheme and bucket must be those of bucketURL (which
// adds only how to reach the server).
func readRef(t *testing.T, reference, bucketURL string) []byte {
	t.Helper()
	r, err := url.Parse(reference)
	must(t, err)
	b, err := url.Parse(bucketURL)
	must(t, err)
	if r.Scheme != b.Scheme || r.Host != b.Host {
		t.Fatalf("reference %s does not name bucket %s://%s", reference, b.Scheme, b.Host)
	}
	q := b.Query()
	q.Del("prefix")
	b.RawQuery = q.Encode()
	bucket, err := blob.OpenBucket(context.Background(), b.String())
	must(t, err)
	defer bucket.Close()
	body, err := bucket.ReadAll(context.Background(), strings.TrimPrefix(r.Path, "/"))
	must(t, err)
	return body
}

func TestMigration(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			t.Run("forge", func(t *testing.T) { testForgeMigration(t, b) })
			t.Run("coffer", func(t *testing.T) { testCofferMigration(t, b) })
		})
	}
}

// testForgeMigration: copy, rewrite, check and roll back a forge work
// directory; the rewritten references open through a plain gocloud read, and
// rollback restores the session files byte for byte. On SeaweedFS one blob is
// above 16 MiB, so that it goes up in parts.
func testForgeMigration(t *testing.T, be backend) {
	ctx := context.Background()
	root, blobs := forgeWorkdir(t)
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	sessDir := filepath.Join(root, ".forge", "sessions")
	before := snapshot(t, sessDir)

	want := 3
	if be.name == "seaweedfs" {
		big := make([]byte, 20<<20)
		for i := range big {
			big[i] = byte(i * 7)
		}
		writeBlob(t, inbound, big, ".bin")
		want++
	}
	src := openStore(t, inbound)
	bucketURL := be.bucket(t, "media")
	dst := openStore(t, withPrefix(bucketURL, "inbound/"))
	j := journal(t, filepath.Join(t.TempDir(), "j.jsonl"))
	rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: j, VerifyDownload: true})
	if rep.Copied != int64(want) || rep.Failed != 0 {
		t.Fatalf("copy: %+v", rep)
	}

	rw, err := sessions.OpenRewriter(ctx, sessDir, sessions.Options{})
	must(t, err)
	defer rw.Close()
	proven := j.State().Copied
	rr, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: replacerFor(j, src, dst, root), Journal: j})
	must(t, err)
	if rr.Changed != 2 || rr.References != 3 || rr.Kept != 0 || rr.Problems != 0 {
		t.Fatalf("rewrite: %+v", rr)
	}

	// No session points at the local copies any more.
	rd, err := sessions.Open(ctx, sessDir, sessions.Options{})
	must(t, err)
	defer rd.Close()
	ck, err := migrate.Check(ctx, []sessions.Source{rd}, src, scan.NewResolver(src, []string{root}), func(k string) bool { _, ok := proven.Get(k); return ok }, 0)
	must(t, err)
	if ck.StillLocal != 0 || !ck.Complete {
		t.Fatalf("check: %+v", ck)
	}

	// Each new reference opens through a plain gocloud read, at the bytes of the blob.
	b1, _ := os.ReadFile(filepath.Join(sessDir, "t-1.json"))
	newRef := migrate.ObjectURL(dst.(store.Bucket), blobs[0])
	if !bytes.Contains(b1, []byte(`"uri": "`+newRef+`"`)) {
		t.Fatalf("t-1.json after rewrite:\n%s", b1)
	}
	local, _ := os.ReadFile(filepath.Join(inbound, blobs[0]))
	if !bytes.Equal(readRef(t, newRef, bucketURL), local) {
		t.Fatal("the object behind the rewritten reference differs from the blob")
	}

	// Rollback restores the files exactly, mode included.
	must(t, j.Close())
	j2 := journal(t, j.Path())
	rb, err := migrate.RollbackSessions(ctx, []sessions.Rewriter{rw}, j2, 0)
	must(t, err)
	if rb.Changed != 2 || rb.References != 3 || rb.Problems != 0 {
		t.Fatalf("rollback: %+v", rb)
	}
	after := snapshot(t, sessDir)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s after rollback:\n%s\nwant\n%s", name, after[name], b)
		}
	}
	if len(after) != len(before) {
		t.Errorf("files after rollback: %d, before %d", len(after), len(before))
	}
	// A second rollback finds nothing to do.
	rb, err = migrate.RollbackSessions(ctx, []sessions.Rewriter{rw}, j2, 0)
	must(t, err)
	if rb.Changed != 0 || rb.Problems != 0 {
		t.Fatalf("second rollback: %+v", rb)
	}
}

// The check after a rewrite resolves references as the rewrite does: one
// spelled through an alias of the store's folder (the work directory's old
// place) still points at the local blob, and is counted.
func TestCheckResolvesAsTheRewrite(t *testing.T) {
	ctx := context.Background()
	root, blobs := forgeWorkdir(t)
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	sessDir := filepath.Join(root, ".forge", "sessions")
	old := "/srv/agent-before-the-move/.forge/files/inbound"
	must(t, os.WriteFile(filepath.Join(sessDir, "t-3.json"), []byte(`{"task_id":"t-3","messages":[{"role":"user","parts":[{"type":"image","media":{"uri":"`+old+"/"+blobs[2]+`"}}]}]}`), 0o600))
	src := openStore(t, inbound)
	rd, err := sessions.Open(ctx, sessDir, sessions.Options{})
	must(t, err)
	defer rd.Close()
	only := func(k string) bool { return k == blobs[2] }
	plain, err := migrate.Check(ctx, []sessions.Source{rd}, src, scan.NewResolver(src, []string{root}), only, 0)
	must(t, err)
	aliased, err := migrate.Check(ctx, []sessions.Source{rd}, src, ref.NewLocal(ref.Local{Dir: inbound, Aliases: []string{old}, Bases: []string{root}}), only, 0)
	must(t, err)
	if plain.StillLocal != 0 || aliased.StillLocal != 1 {
		t.Fatalf("still local: %d without the alias, %d with it; want 0, 1", plain.StillLocal, aliased.StillLocal)
	}
}

// Two runs that each rewrite part of one unit (a blob copied later, a
// reference that was busy) roll back together: the second's edits first, then
// the first's, and the files are as they were before either.
func TestRollbackUndoesEveryRunOfAUnit(t *testing.T) {
	ctx := context.Background()
	root, blobs := forgeWorkdir(t)
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	sessDir := filepath.Join(root, ".forge", "sessions")
	before := snapshot(t, sessDir)
	src := openStore(t, inbound)
	dst := openStore(t, storetest.StartS3(t, nil).Bucket(t, "media"))
	jp := filepath.Join(t.TempDir(), "j.jsonl")
	rw, err := sessions.OpenRewriter(ctx, sessDir, sessions.Options{})
	must(t, err)
	defer rw.Close()
	for i, key := range blobs[:2] {
		j := journal(t, jp)
		copyAll(t, migrate.Options{From: src, To: dst, Journal: j, Select: migrate.Selection{Include: []string{key}}})
		rr, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: replacerFor(j, src, dst, root), Journal: j})
		must(t, err)
		if rr.Changed == 0 || rr.Problems != 0 {
			t.Fatalf("run %d: rewrite %+v", i+1, rr)
		}
		must(t, j.Close())
	}
	if b, _ := os.ReadFile(filepath.Join(sessDir, "t-1.json")); bytes.Count(b, []byte("s3://")) != 2 {
		t.Fatalf("t-1.json after both runs:\n%s", b)
	}
	rb, err := migrate.RollbackSessions(ctx, []sessions.Rewriter{rw}, journal(t, jp), 0)
	must(t, err)
	if rb.Problems != 0 || rb.Changed != 2 {
		t.Fatalf("rollback: %+v", rb)
	}
	after := snapshot(t, sessDir)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s after rollback:\n%s\nwant\n%s", name, after[name], b)
		}
	}
}

// testCofferMigration: a coffer SQLite database (WAL) with attachment blocks;
// rewritten in place, rolled back byte for byte.
func testCofferMigration(t *testing.T, be backend) {
	ctx := context.Background()
	home := t.TempDir()
	media := filepath.Join(home, "channel-media")
	must(t, os.MkdirAll(media, 0o700))
	opaque := "3f2c1e0d9b8a47c6a5e4d3c2b1a09f8e.jpg"
	must(t, os.WriteFile(filepath.Join(media, opaque), []byte("\xff\xd8\xffjpeg bytes"), 0o600))
	other := "77aa0e0d9b8a47c6a5e4d3c2b1a09f8e.jpg"
	must(t, os.WriteFile(filepath.Join(media, other), []byte("\xff\xd8\xffnot migrated"), 0o600))

	dbPath := filepath.Join(home, "coffer.db")
	db, err := sql.Open("sqlite", "file:"+dbPath)
	must(t, err)
	defer db.Close()
	for _, q := range []string{
		`PRAGMA journal_mode=WAL`,
		`CREATE TABLE chat_messages(id TEXT PRIMARY KEY, conversation_id TEXT, seq INTEGER, role TEXT, content TEXT)`,
		`INSERT INTO chat_messages VALUES ('m1','c1',1,'user','[{"type":"text","text":"look"},{"type":"attachment","path":"` + filepath.Join(media, opaque) + `","mime":"image/jpeg","filename":"photo.jpg"}]')`,
		`INSERT INTO chat_messages VALUES ('m2','c1',2,'user','[{"type":"attachment","path":"` + filepath.Join(media, other) + `","mime":"image/jpeg"}]')`,
		`INSERT INTO chat_messages VALUES ('m3','c1',3,'assistant','[{"type":"text","text":"a cat"}]')`,
	} {
		_, err := db.Exec(q)
		must(t, err)
	}
	dump := func() string {
		rows, err := db.Query(`SELECT id, content FROM chat_messages ORDER BY id`)
		must(t, err)
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var id, content string
			must(t, rows.Scan(&id, &content))
			fmt.Fprintf(&b, "%s %s\n", id, content)
		}
		return b.String()
	}
	before := dump()

	src := openStore(t, media)
	bucketURL := be.bucket(t, "coffer")
	dst := openStore(t, bucketURL)
	j := journal(t, filepath.Join(t.TempDir(), "j.jsonl"))
	rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: j, Select: migrate.Selection{Include: []string{"3f2c*"}}})
	if rep.Copied != 1 {
		t.Fatalf("copy: %+v", rep)
	}
	rw, err := sessions.OpenRewriter(ctx, "sqlite:"+dbPath, sessions.Options{})
	must(t, err)
	defer rw.Close()
	proven := j.State().Copied
	repl := &migrate.Replacer{Resolver: scan.NewResolver(src, nil), Target: func(key string) (string, bool) {
		_, ok := proven.Get(key)
		return migrate.ObjectURL(dst.(store.Bucket), key), ok
	}}
	rr, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: repl, Journal: j})
	must(t, err)
	if rr.Changed != 1 || rr.References != 1 {
		t.Fatalf("rewrite: %+v", rr)
	}
	var content string
	must(t, db.QueryRow(`SELECT content FROM chat_messages WHERE id='m1'`).Scan(&content))
	newRef := migrate.ObjectURL(dst.(store.Bucket), opaque)
	if !strings.Contains(content, `"path":"`+newRef+`"`) || !strings.Contains(content, `"filename":"photo.jpg"`) {
		t.Fatalf("m1 after rewrite: %s", content)
	}
	if body := readRef(t, newRef, bucketURL); string(body) != "\xff\xd8\xffjpeg bytes" {
		t.Fatalf("object: %q", body)
	}
	rb, err := migrate.RollbackSessions(ctx, []sessions.Rewriter{rw}, j, 0)
	must(t, err)
	if rb.Changed != 1 || rb.Problems != 0 {
		t.Fatalf("rollback: %+v", rb)
	}
	if after := dump(); after != before {
		t.Fatalf("after rollback:\n%s\nwant\n%s", after, before)
	}
}

// cancelAfter cancels a context once n bytes were read for upload.
type cancelAfter struct {
	n      int64
	read   int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Add(n int64) {
	c.read += n
	if c.read >= c.n {
		c.cancel()
	}
}

// TestResume: a copy interrupted halfway continues where it stopped: nothing
// proven is uploaded again, nothing is missing at the end. On every backend.
func TestResume(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			dir := t.TempDir()
			var total int64
			for i := range 12 {
				body := bytes.Repeat([]byte{byte(i)}, 64<<10+i)
				writeBlob(t, dir, body, ".bin")
				total += int64(len(body))
			}
			src := openStore(t, dir)
			dst := openStore(t, be.bucket(t, "resume"))
			jpath := filepath.Join(t.TempDir(), "j.jsonl")
			ctx, cancel := context.WithCancel(context.Background())
			j := journal(t, jpath)
			rep, err := migrate.Copy(ctx, migrate.Options{From: src, To: dst, Journal: j, Jobs: 1, Progress: &cancelAfter{n: total / 2, cancel: cancel}})
			must(t, err)
			if !rep.Interrupted || rep.Copied == 0 || rep.Copied >= 12 {
				t.Fatalf("first run: %+v", rep)
			}
			first := rep.Copied
			must(t, j.Close())
			rep = copyAll(t, migrate.Options{From: src, To: dst, Journal: journal(t, jpath)})
			if rep.Resumed != first || rep.Copied+rep.Existing != 12-first || rep.Failed != 0 {
				t.Fatalf("rerun after %d copies: %+v", first, rep)
			}
			n := 0
			must(t, dst.List(context.Background(), "", func(store.Entry) error { n++; return nil }))
			if n != 12 {
				t.Fatalf("the bucket holds %d objects, want 12", n)
			}
		})
	}
}

// rewriteRoundTrip rewrites every reference to the blobs of src in the
// sessions at location to s3://media/<key>, checks with a fresh scan that none
// points at src any more, runs the rewrite again (nothing to do, the same kept
// count), rolls back and proves the sessions are byte for byte what they
// were (dump renders them).
func rewriteRoundTrip(t *testing.T, location string, src store.Store, bases []string, dump func() string, wantRefs int64) {
	t.Helper()
	ctx := context.Background()
	before := dump()
	rw, err := sessions.OpenRewriter(ctx, location, sessions.Options{})
	must(t, err)
	defer rw.Close()
	j := journal(t, filepath.Join(t.TempDir(), "j.jsonl"))
	repl := &migrate.Replacer{Resolver: scan.NewResolver(src, bases), Target: func(key string) (string, bool) {
		return "s3://media/" + key, true
	}}
	first, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: repl, Journal: j})
	must(t, err)
	if first.References != wantRefs || first.Problems != 0 || first.Kept != 0 {
		t.Fatalf("rewrite: %+v", first)
	}
	rewritten := dump()
	rd, err := sessions.Open(ctx, location, sessions.Options{})
	must(t, err)
	defer rd.Close()
	ck, err := migrate.Check(ctx, []sessions.Source{rd}, src, scan.NewResolver(src, bases), func(string) bool { return true }, 0)
	must(t, err)
	if ck.StillLocal != first.Kept || !ck.Complete {
		t.Fatalf("after the rewrite a scan finds %d references still local (%+v), the rewrite kept %d:\n%s", ck.StillLocal, ck.List, first.Kept, rewritten)
	}
	second, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: repl, Journal: j})
	must(t, err)
	if second.References != 0 || second.Changed != 0 || second.Kept != first.Kept {
		t.Fatalf("second rewrite: %+v, first kept %d", second, first.Kept)
	}
	rb, err := migrate.RollbackSessions(ctx, []sessions.Rewriter{rw}, j, 0)
	must(t, err)
	if rb.References != wantRefs || rb.Problems != 0 {
		t.Fatalf("rollback: %+v", rb)
	}
	if after := dump(); after != before {
		t.Fatalf("after rollback:\n%s\nwant\n%s", after, before)
	}
}

// TestRewriteEveryEncoding: sessions written by Go's MarshalIndent under a
// work directory with "&" in its name (\u0026), with tool arguments and whole
// documents in escaped slashes, and coffer rows written by Python's json.dumps
// (non-ASCII file names as \uXXXX, in attachment blocks and in JSON held in a
// tool result), and Postgres text, json and jsonb columns holding both, are
// rewritten completely, and rolled back byte for byte.
func TestRewriteEveryEncoding(t *testing.T) {
	t.Run("forge", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "R&D", "agent")
		inbound := filepath.Join(root, ".forge", "files", "inbound")
		sess := filepath.Join(root, ".forge", "sessions")
		must(t, os.MkdirAll(inbound, 0o700))
		must(t, os.MkdirAll(sess, 0o700))
		var blobs []string
		for i := range 3 {
			blobs = append(blobs, writeBlob(t, inbound, append(append([]byte{}, pngHead...), fmt.Sprintf("image %d", i)...), ".png"))
		}
		slashes := func(s string) string { return strings.ReplaceAll(s, "/", `\/`) }
		args, err := json.Marshal(map[string]any{"path": filepath.Join(inbound, blobs[1]), "mode": "crop"})
		must(t, err)
		doc1 := goIndent(map[string]any{"task_id": "t-1", "messages": []any{
			map[string]any{"role": "user", "parts": []any{
				map[string]any{"type": "text", "text": "What's in <this> & that?"},
				map[string]any{"type": "image", "media": map[string]any{"mimeType": "image/png", "uri": filepath.Join(inbound, blobs[0])}},
			}},
			// The model wrote its arguments with escaped slashes.
			map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c", "type": "function",
				"function": map[string]any{"name": "crop", "arguments": slashes(string(args))}}}},
			map[string]any{"role": "assistant", "content": "Saved to " + filepath.Join(inbound, blobs[2]) + ".\nDone."},
		}}) + "\n"
		php := stringStyle{slash: true, ascii: true, comma: ",", colon: ":"}
		doc2 := php.encode(map[string]any{"task_id": "t-2", "messages": []any{
			map[string]any{"role": "user", "parts": []any{map[string]any{"type": "image", "media": map[string]any{"uri": ".forge/files/inbound/" + blobs[1]}}}},
			map[string]any{"role": "user", "content": "café, see " + filepath.Join(inbound, blobs[0])},
		}})
		must(t, os.WriteFile(filepath.Join(sess, "t-1.json"), []byte(doc1), 0o600))
		must(t, os.WriteFile(filepath.Join(sess, "t-2.json"), []byte(doc2), 0o640))
		if !strings.Contains(doc1, `R\u0026D`) || !strings.Contains(doc1, `\\/`) || !strings.Contains(doc2, `\/.forge\/files`) {
			t.Fatalf("the sessions are not in the encodings under test:\n%s\n%s", doc1, doc2)
		}
		dump := func() string {
			s := snapshot(t, sess)
			return s["t-1.json"] + "\n" + s["t-2.json"] + fmt.Sprint(len(s))
		}
		rewriteRoundTrip(t, sess, openStore(t, inbound), []string{root}, dump, 5)
	})
	t.Run("coffer", func(t *testing.T) {
		home := t.TempDir()
		media := filepath.Join(home, ".coffer", "channel-media")
		must(t, os.MkdirAll(media, 0o700))
		names := []string{"b0f2c5a1d3e94f6b8a7c0d1e2f3a4b5c.第二版", "c1d2e3f4a5b60718293a4b5c6d7e8f90.jpg"}
		for _, n := range names {
			must(t, os.WriteFile(filepath.Join(media, n), []byte("\xff\xd8\xff"+n), 0o600))
		}
		py := stringStyle{ascii: true, comma: ", ", colon: ": "}
		rows := []string{
			py.encode([]any{
				map[string]any{"type": "text", "text": "第二版 attached"},
				map[string]any{"type": "attachment", "path": filepath.Join(media, names[0]), "mime": "application/octet-stream", "filename": "报告.第二版"},
			}),
			py.encode([]any{map[string]any{"type": "tool_result", "tool_use_id": "tu1", "tool_name": "Read",
				"output": py.encode(map[string]any{"file_path": filepath.Join(media, names[0]), "note": "“ok”"})}}),
			py.encode([]any{map[string]any{"type": "attachment", "path": filepath.Join(media, names[1]), "mime": "image/jpeg", "filename": "Foto März.jpg"}}),
		}
		if !strings.Contains(rows[0], `\u7b2c\u4e8c\u7248`) || !strings.Contains(rows[1], `\\u7b2c`) {
			t.Fatalf("the rows are not in the encodings under test:\n%s", strings.Join(rows, "\n"))
		}
		dbPath := filepath.Join(home, ".coffer", "coffer.db")
		db, err := sql.Open("sqlite", "file:"+dbPath)
		must(t, err)
		defer db.Close()
		for _, q := range []string{
			`PRAGMA journal_mode=WAL`,
			`CREATE TABLE chat_messages(id TEXT PRIMARY KEY, conversation_id TEXT, seq INTEGER, role TEXT, content TEXT)`,
		} {
			_, err := db.Exec(q)
			must(t, err)
		}
		for i, row := range rows {
			_, err := db.Exec(`INSERT INTO chat_messages VALUES (?, 'c1', ?, 'user', ?)`, fmt.Sprintf("m%d", i), i, row)
			must(t, err)
		}
		dump := func() string {
			rs, err := db.Query(`SELECT id, content FROM chat_messages ORDER BY id`)
			must(t, err)
			defer rs.Close()
			var b strings.Builder
			for rs.Next() {
				var id, content string
				must(t, rs.Scan(&id, &content))
				fmt.Fprintf(&b, "%s %s\n", id, content)
			}
			return b.String()
		}
		rewriteRoundTrip(t, "sqlite:"+dbPath, openStore(t, media), nil, dump, 3)
	})
	t.Run("postgres", func(t *testing.T) {
		dbURL := postgresDatabase(t)
		ctx := context.Background()
		dir := filepath.Join(t.TempDir(), "a&b")
		must(t, os.MkdirAll(dir, 0o700))
		blob := writeBlob(t, dir, []byte("%PDF-1.4 report"), ".pdf")
		named := "d4e5f6a7b8c90123456789abcdef0123.第二版"
		must(t, os.WriteFile(filepath.Join(dir, named), []byte("bytes"), 0o600))
		py := stringStyle{ascii: true, comma: ", ", colon: ": "}
		php := stringStyle{slash: true, ascii: true, comma: ",", colon: ":"}
		attach := func(st stringStyle, p string) string {
			return st.encode(map[string]any{"attachments": []any{map[string]any{"path": p, "mime": "application/pdf", "filename": "Bericht März.pdf"}}})
		}
		conn, err := pgx.Connect(ctx, dbURL)
		must(t, err)
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `CREATE TABLE messages(id serial PRIMARY KEY, content text, meta json, metab jsonb)`)
		must(t, err)
		// json keeps its text as written, text too; jsonb normalizes it.
		_, err = conn.Exec(ctx, `INSERT INTO messages(content, meta, metab) VALUES ($1, $2, $3), ($4, $5, NULL)`,
			attach(py, filepath.Join(dir, named)), attach(php, filepath.Join(dir, blob)), attach(py, filepath.Join(dir, named)),
			"see "+filepath.Join(dir, blob)+" please", goCompact(map[string]any{"args": php.encode(map[string]any{"file": filepath.Join(dir, named)})}))
		must(t, err)
		dump := func() string {
			rows, err := conn.Query(ctx, `SELECT id, coalesce(content, ''), coalesce(meta::text, ''), coalesce(metab::text, '') FROM messages ORDER BY id`)
			must(t, err)
			defer rows.Close()
			var sb strings.Builder
			for rows.Next() {
				var id int
				var c, m, mb string
				must(t, rows.Scan(&id, &c, &m, &mb))
				fmt.Fprintf(&sb, "%d %s | %s | %s\n", id, c, m, mb)
			}
			return sb.String()
		}
		if d := dump(); !strings.Contains(d, `\u7b2c`) || !strings.Contains(d, `a\u0026b`) || !strings.Contains(d, `\/a&b\/`) {
			t.Fatalf("the rows are not in the encodings under test:\n%s", d)
		}
		rewriteRoundTrip(t, dbURL, openStore(t, dir), nil, dump, 5)
	})
}

// fromTruth decodes a part of a ground truth into v.
func fromTruth(t *testing.T, part any, v any) {
	t.Helper()
	b, err := json.Marshal(part)
	must(t, err)
	must(t, json.Unmarshal(b, v))
}

// TestRewriteRealworld: the forge store and the coffer home written by the
// runtimes' own code, under a root whose name has an "&" and a non-ASCII
// letter (Go writes them "\u0026" and "ü", Python "&" and "\u00fc"; one forge
// tool call holds the root with escaped slashes inside its arguments). Every
// reference a fresh scan finds inside the store is rewritten, none is kept,
// the attachments of the ground truth are among them, a second run has
// nothing to do, and rollback restores every session byte for byte.
func TestRewriteRealworld(t *testing.T) {
	goString := func(s string) string { // as encoding/json writes it, without quotes
		b, err := json.Marshal(s)
		must(t, err)
		return string(b[1 : len(b)-1])
	}
	t.Run("forge", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "Müller&Co")
		root, truthMap := realworld.ForgeIn(t, dest)
		sess := filepath.Join(root, ".forge", "sessions")
		escaped := false
		entries, err := os.ReadDir(sess)
		must(t, err)
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(sess, e.Name()))
			must(t, err)
			// The model's arguments with "\/", inside forge's own string.
			escaped = escaped || bytes.Contains(b, []byte(goString(strings.ReplaceAll(root, "/", `\/`))))
		}
		if !escaped {
			t.Fatal("no session holds the root with escaped slashes")
		}
		var truth struct {
			Needed       []string `json:"needed"`
			DanglingKeys []string `json:"dangling_keys"`
			TextOnly     []string `json:"text_only"` // named in prose only
		}
		fromTruth(t, truthMap, &truth)
		for _, dir := range []string{"inbound", "generated"} {
			t.Run(dir, func(t *testing.T) {
				src := openStore(t, filepath.Join(root, ".forge", "files", dir))
				referenced := realworldRoundTrip(t, sess, src, []string{root, dest}, func() string { return dumpDir(t, sess) })
				for key := range referenced {
					if !slices.Contains(truth.Needed, dir+"/"+key) && !slices.Contains(truth.DanglingKeys, dir+"/"+key) && !slices.Contains(truth.TextOnly, dir+"/"+key) {
						t.Errorf("rewrote references to %s/%s, which the ground truth says no session names", dir, key)
					}
				}
			})
		}
	})
	t.Run("coffer", func(t *testing.T) {
		home, truthMap := realworld.CofferIn(t, filepath.Join(t.TempDir(), "Müller&Co"))
		dbPath := filepath.Join(home, ".coffer", "coffer.db")
		db, err := sql.Open("sqlite", "file:"+dbPath)
		must(t, err)
		defer db.Close()
		var n int
		must(t, db.QueryRow(`SELECT count(*) FROM chat_messages WHERE content LIKE '%M\u00fcller&Co%'`).Scan(&n))
		if n == 0 {
			t.Fatal("no row holds the root as Python writes it")
		}
		dump := func() string {
			rows, err := db.Query(`SELECT id, content FROM chat_messages ORDER BY id`)
			must(t, err)
			defer rows.Close()
			var b strings.Builder
			for rows.Next() {
				var id, content string
				must(t, rows.Scan(&id, &content))
				fmt.Fprintf(&b, "%s %s\n", id, content)
			}
			return b.String()
		}
		var truth struct {
			Attached       []string `json:"attached"`
			NamesWithSpace []string `json:"names_with_space"`
			NonASCIINames  []string `json:"non_ascii_names"`
		}
		fromTruth(t, truthMap["legacy"].(map[string]any)["per_store"].(map[string]any)[filepath.Join(home, ".coffer", "channel-media")], &truth)
		src := openStore(t, filepath.Join(home, ".coffer", "channel-media"))
		referenced := realworldRoundTrip(t, "sqlite:"+dbPath, src, []string{filepath.Join(home, ".coffer", "workspace"), home}, dump)
		for _, name := range truth.Attached {
			// A name with a space is beyond the precise extractor for now.
			if !referenced[name] && !slices.Contains(truth.NamesWithSpace, name) {
				t.Errorf("attachment %s was not rewritten", name)
			}
		}
		for _, name := range truth.NonASCIINames {
			if slices.Contains(truth.Attached, name) && !referenced[name] {
				t.Errorf("attachment %s, named in \\u escapes, was not rewritten", name)
			}
		}
	})
}

// dumpDir renders every file of a folder with its mode.
func dumpDir(t *testing.T, dir string) string {
	t.Helper()
	s := snapshot(t, dir)
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + " " + s[n] + "\n")
	}
	return b.String()
}

// realworldRoundTrip rewrites every reference into src found in the sessions
// at location, proves with a fresh scan that none is left and none was kept,
// runs again, rolls back, and returns the keys whose references were rewritten.
func realworldRoundTrip(t *testing.T, location string, src store.Store, bases []string, dump func() string) map[string]bool {
	t.Helper()
	ctx := context.Background()
	before := dump()
	rd, err := sessions.Open(ctx, location, sessions.Options{})
	must(t, err)
	defer rd.Close()
	all := func(string) bool { return true }
	ck0, err := migrate.Check(ctx, []sessions.Source{rd}, src, scan.NewResolver(src, bases), all, 0)
	must(t, err)
	if ck0.StillLocal == 0 {
		t.Fatal("no reference into the store before the rewrite")
	}
	rw, err := sessions.OpenRewriter(ctx, location, sessions.Options{})
	must(t, err)
	defer rw.Close()
	j := journal(t, filepath.Join(t.TempDir(), "j.jsonl"))
	repl := &migrate.Replacer{Resolver: scan.NewResolver(src, bases), Target: func(key string) (string, bool) { return "s3://media/" + key, true }}
	first, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: repl, Journal: j})
	must(t, err)
	ck, err := migrate.Check(ctx, []sessions.Source{rd}, src, scan.NewResolver(src, bases), all, 0)
	must(t, err)
	// A stale "*.json.tmp" (forge's atomic-write leftover) is read, since it
	// may be the only copy of a session, but it is no session the runtime
	// reads, and it is not rewritten: its references stay local and keep
	// their blobs.
	inLeftovers := int64(0)
	for _, f := range ck.List {
		if strings.HasSuffix(f.Place.Document, ".tmp") {
			inLeftovers++
		}
	}
	if first.References != ck0.StillLocal-inLeftovers || first.Kept != 0 || first.Problems != 0 || ck.StillLocal != inLeftovers || !ck.Complete {
		t.Fatalf("%d references into the store; the rewrite rewrote %d, kept %d %+v, problems %d; %d still local after: %+v", ck0.StillLocal, first.References, first.Kept, first.KeptList, first.Problems, ck.StillLocal, ck.List)
	}
	second, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: repl, Journal: j})
	must(t, err)
	if second.References != 0 || second.Kept != first.Kept {
		t.Fatalf("second rewrite: %+v", second)
	}
	rb, err := migrate.RollbackSessions(ctx, []sessions.Rewriter{rw}, j, 0)
	must(t, err)
	if rb.References != first.References || rb.Problems != 0 {
		t.Fatalf("rollback: %+v", rb)
	}
	if after := dump(); after != before {
		t.Fatal("the sessions differ from the original after rollback")
	}
	return ck0.Referenced
}
