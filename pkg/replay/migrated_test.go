package replay_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// forgeSession is forge's file session document.
type forgeSession struct {
	TaskID    string         `json:"task_id"`
	Messages  []forgeMessage `json:"messages"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

type forgeMessage struct {
	Role    string      `json:"role"`
	Content string      `json:"content"`
	Parts   []forgePart `json:"parts,omitempty"`
}

type forgePart struct {
	Type  string      `json:"type"`
	Text  string      `json:"text,omitempty"`
	Media *forgeMedia `json:"media,omitempty"`
}

type forgeMedia struct {
	MimeType string `json:"mimeType"`
	URI      string `json:"uri"`
}

// TestMigratedFileBucket and TestMigratedSeaweedFS: a forge work directory
// (sessions written as forge writes them: json.MarshalIndent, absolute URIs,
// .json.tmp + rename) is migrated by migrate.Run as `migrate --rewrite` with
// the default template does (every reference becomes its copy's URL); every
// media reference rehydrates, before and after, to the original bytes, and an
// object altered in the bucket after the copy is refused.
func TestMigratedFileBucket(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bucket")
	os.MkdirAll(dir, 0o700)
	migrated(t, "file://"+dir+"?prefix=forge/inbound/")
}

func TestMigratedSeaweedFS(t *testing.T) {
	srv := storetest.SeaweedFS(t)
	migrated(t, strings.Replace(srv.Bucket(t, "migrated"), "?", "/forge/inbound/?", 1))
}

func migrated(t *testing.T, dstURL string) {
	work := t.TempDir()
	var blobs [][]byte
	for i := range 6 {
		blobs = append(blobs, pngBlob(1000+i*7000))
	}
	files, paths := forgeFiles(t, work, blobs...)
	sessDir := filepath.Join(work, ".forge", "sessions")
	os.MkdirAll(sessDir, 0o700)
	at := time.Date(2026, 7, 1, 10, 0, 0, 123456000, time.UTC)
	for s := range 2 {
		doc := forgeSession{TaskID: "t-" + string(rune('1'+s)), CreatedAt: at, UpdatedAt: at.Add(5 * time.Second)}
		for i, p := range paths[s*3 : s*3+3] {
			doc.Messages = append(doc.Messages,
				forgeMessage{Role: "user", Content: "What's in <this> & that?", Parts: []forgePart{
					{Type: "text", Text: "What's in <this> & that?"},
					{Type: "image", Media: &forgeMedia{MimeType: "image/png", URI: p}},
				}},
				forgeMessage{Role: "assistant", Content: "A cat, " + string(rune('a'+i))})
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		final := filepath.Join(sessDir, doc.TaskID+".json")
		os.WriteFile(final+".tmp", b, 0o600)
		if err := os.Rename(final+".tmp", final); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(sessDir, "t-1.json")); !bytes.Contains(b, []byte(`\u003cthis\u003e \u0026`)) {
		t.Fatal("the session is not written as forge writes it")
	}

	src, err := store.OpenLocal(filepath.Join(files, "inbound"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := store.OpenBucket(ctx, dstURL)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	sess, err := sessions.Open(ctx, sessDir, sessions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	rw, err := sessions.OpenRewriter(ctx, sessDir, sessions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	// migrate --rewrite with the default template: each path becomes the
	// object's URL.
	rep, err := migrate.Run(ctx, migrate.RunOptions{
		Options:     migrate.Options{From: src, To: dst},
		JournalPath: filepath.Join(t.TempDir(), "journal"),
		Rewrite:     true,
		Rewriters:   []sessions.Rewriter{rw},
		Sessions:    []sessions.Source{sess},
	})
	if err != nil || rep.Copy.Copied != int64(len(blobs)) {
		t.Fatalf("migrate.Run = %+v, %v; want %d copies", rep, err, len(blobs))
	}
	if rep.Rewrite == nil || rep.Rewrite.References != int64(len(blobs)) {
		t.Fatalf("migrate.Run rewrote %+v; want %d references", rep.Rewrite, len(blobs))
	}

	want := map[string][]byte{}
	for _, b := range blobs {
		want[sum(b)] = b
	}
	r := newReplayer(t, replay.Config{
		Roots:   []string{files},
		Buckets: []replay.Bucket{{URL: dstURL, Prefixes: []string{"forge/inbound/"}}},
		Cache:   filepath.Join(t.TempDir(), "cache"),
	})
	// What a pod would do: every media part of every session, rehydrated.
	var uris []string
	for _, e := range readDir(t, sessDir) {
		var doc forgeSession
		if err := json.Unmarshal(readFile(t, filepath.Join(sessDir, e.Name())), &doc); err != nil {
			t.Fatal(err)
		}
		for _, m := range doc.Messages {
			for _, p := range m.Parts {
				if p.Media != nil {
					uris = append(uris, p.Media.URI)
				}
			}
		}
	}
	if len(uris) != len(blobs) {
		t.Fatalf("%d media references in the sessions, want %d", len(uris), len(blobs))
	}
	for _, u := range uris {
		if !strings.Contains(u, "://") || !strings.Contains(u, "/forge/inbound/") {
			t.Fatalf("reference %q is not a rewritten one", u)
		}
		got, info, err := readRef(t, r, u)
		if err != nil || !bytes.Equal(got, want[info.SHA256]) || info.Source != replay.FromBucket {
			t.Fatalf("rehydrating %q: %d bytes from %s, %v; want the original blob from the bucket", u, len(got), info.Source, err)
		}
	}
	// The originals, while they are still on disk, read too.
	for i, p := range paths {
		wantBytes(t, r, p, blobs[i])
	}

	// An object altered in the bucket after the copy was proven.
	cold := newReplayer(t, replay.Config{Buckets: []replay.Bucket{{URL: dstURL, Prefixes: []string{"forge/inbound/"}}}})
	key := filepath.Base(paths[0])
	putObject(t, dst, key, pngBlob(len(blobs[0])), blobs[0])
	wantMismatch(t, cold, objectURL(dst, key))
	// Another bucket's URL, or a key outside the allowed prefix.
	_, _, err = readRef(t, cold, "s3://elsewhere/forge/inbound/"+key)
	wantRefused(t, "s3://elsewhere/forge/inbound/"+key, err, replay.ErrBucketNotAllowed)
	other := strings.Replace(objectURL(dst, key), "/forge/inbound/", "/forge/other/", 1)
	_, _, err = readRef(t, cold, other)
	if !errors.Is(err, replay.ErrPrefixNotAllowed) && !errors.Is(err, replay.ErrOutsideRoots) {
		t.Errorf("Open(%q) = %v, want a refusal", other, err)
	}
}

func readDir(t testing.TB, dir string) []os.DirEntry {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return des
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// objectURL is the reference migrate's default rewrite renders for the copy
// of key in dst: its URL.
func objectURL(dst store.Bucket, key string) string {
	return migrate.Template{}.Render(dst, key, "")
}
