package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestMigrateThenReplaySeaweedFS: a forge work directory, written the way
// forge writes it (json.MarshalIndent, absolute URIs, <id>.json.tmp then a
// rename), is migrated to SeaweedFS with --rewrite; every media reference of
// the rewritten sessions then rehydrates through pkg/replay to the original
// bytes. An object altered after the migration is refused, and so are a
// reference into another bucket and a key outside the allowed prefix.
func TestMigrateThenReplaySeaweedFS(t *testing.T) {
	srv := storetest.SeaweedFS(t)
	bucketURL := srv.Bucket(t, "replay-e2e")
	name := strings.TrimPrefix(bucketURL[:strings.Index(bucketURL, "?")], "s3://")
	root := t.TempDir()
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	sessDir := filepath.Join(root, ".forge", "sessions")
	for _, d := range []string{inbound, sessDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	original := map[string][]byte{} // key -> bytes
	type media struct {
		MimeType string `json:"mimeType"`
		URI      string `json:"uri"`
	}
	type part struct {
		Type  string `json:"type"`
		Text  string `json:"text,omitempty"`
		Media *media `json:"media,omitempty"`
	}
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Parts   []part `json:"parts,omitempty"`
	}
	for s := range 3 {
		var msgs []message
		for i := range 4 {
			content := bytes.Repeat([]byte{byte(s), byte(i), 0x89, 'P', 'N', 'G'}, 500+s*97+i)
			sum := sha256.Sum256(content)
			key := hex.EncodeToString(sum[:]) + ".png"
			if err := os.WriteFile(filepath.Join(inbound, key), content, 0o600); err != nil {
				t.Fatal(err)
			}
			original[key] = content
			msgs = append(msgs, message{Role: "user", Content: "What's in <this> & that?", Parts: []part{
				{Type: "text", Text: "What's in <this> & that?"},
				{Type: "image", Media: &media{MimeType: "image/png", URI: filepath.Join(inbound, key)}},
			}}, message{Role: "assistant", Content: "a picture"})
		}
		b, err := json.MarshalIndent(struct {
			TaskID   string    `json:"task_id"`
			Messages []message `json:"messages"`
		}{"t-" + string(rune('1'+s)), msgs}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		final := filepath.Join(sessDir, "t-"+string(rune('1'+s))+".json")
		if err := os.WriteFile(final+".tmp", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(final+".tmp", final); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Hour)
		os.Chtimes(final, old, old)
	}

	var stdout, stderr bytes.Buffer
	if code := run([]string{"mediactl", "migrate", "--layout", "forge", "--root", root, "--to", bucketURL + "&prefix=inbound/",
		"--rewrite", "--runtime-reads-urls", "-q"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("migrate: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}

	r, err := replay.New(replay.Config{Buckets: []replay.Bucket{{URL: bucketURL, Prefixes: []string{"inbound/"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	var uris []string
	es, _ := os.ReadDir(sessDir)
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(sessDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Messages []message `json:"messages"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
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
	if len(uris) != len(original) {
		t.Fatalf("%d media references in the rewritten sessions, want %d", len(uris), len(original))
	}
	for _, u := range uris {
		prefix := "s3://" + name + "/inbound/"
		if !strings.HasPrefix(u, prefix) {
			t.Fatalf("not rewritten to the bucket: %s", u)
		}
		rc, info, err := r.Open(ctx, u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !info.Verified || !bytes.Equal(got, original[strings.TrimPrefix(u, prefix)]) {
			t.Fatalf("%s: %d bytes, verified %v, %v", u, len(got), info.Verified, err)
		}
	}

	// Altered in the bucket after the migration: the metadata still says the
	// proven digest, the bytes do not.
	dst, err := store.Open(ctx, bucketURL+"&prefix=inbound/")
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	victim := strings.TrimPrefix(uris[0], "s3://"+name+"/inbound/")
	if err := dst.Put(ctx, victim, strings.NewReader("not the proven bytes"), store.PutOptions{Metadata: map[string]string{"sha256": strings.TrimSuffix(victim, ".png")}}); err != nil {
		t.Fatal(err)
	}
	rc, _, err := r.Open(ctx, uris[0])
	if err == nil {
		_, err = io.ReadAll(rc)
		rc.Close()
	}
	if !errors.Is(err, replay.ErrDigestMismatch) {
		t.Fatalf("an altered object: %v, want a digest mismatch", err)
	}
	for ref, want := range map[string]error{
		"s3://another-bucket/inbound/" + victim: replay.ErrBucketNotAllowed,
		"s3://" + name + "/elsewhere/" + victim: replay.ErrPrefixNotAllowed,
	} {
		if _, _, err := r.Open(ctx, ref); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", ref, err, want)
		}
	}
}
