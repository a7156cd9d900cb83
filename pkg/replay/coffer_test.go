package replay_test

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/store"
)

// TestCofferAttachments: a coffer home — attachments with random names in
// ~/.coffer/channel-media, referenced by absolute paths inside the JSON
// blocks (Python json.dumps defaults: ", " and ": ", ensure_ascii) of
// chat_messages in a WAL-mode SQLite database. Before migration the paths read
// only as unverified local files (no digest anywhere); after migrate.Run
// copies them to a bucket, the URLs the default rewrite renders read verified
// against the sha256 metadata, and an attachment altered in the bucket fails.
func TestCofferAttachments(t *testing.T) {
	home := t.TempDir()
	coffer := filepath.Join(home, ".coffer")
	media := filepath.Join(coffer, "channel-media")
	os.MkdirAll(media, 0o700)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(coffer, "coffer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode=WAL").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
	if _, err := db.Exec(`CREATE TABLE chat_messages (id TEXT PRIMARY KEY, conversation_id TEXT, seq INTEGER, role TEXT, content TEXT)`); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for i := range 3 {
		var id [16]byte
		rand.Read(id[:])
		p := filepath.Join(media, hex.EncodeToString(id[:])+".jpg")
		data := append([]byte("\xff\xd8\xff\xe0"), pngBlob(3000 + i)[8:]...)
		os.WriteFile(p, data, 0o600)
		want[p] = data
		pj, _ := json.Marshal(p)
		content := fmt.Sprintf(`[{"type": "text", "text": "caf\u00e9 photo %d"}, {"type": "attachment", "path": %s, "mime": "image/jpeg", "filename": "photo.jpg"}]`, i, pj)
		if _, err := db.Exec(`INSERT INTO chat_messages VALUES (?, 'c1', ?, 'user', ?)`, fmt.Sprint("m", i), i, content); err != nil {
			t.Fatal(err)
		}
	}
	attachments := func() []string {
		rows, err := db.Query(`SELECT content FROM chat_messages ORDER BY seq`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var content string
			rows.Scan(&content)
			var blocks []struct{ Type, Path string }
			if err := json.Unmarshal([]byte(content), &blocks); err != nil {
				t.Fatal(err)
			}
			for _, b := range blocks {
				if b.Type == "attachment" {
					out = append(out, b.Path)
				}
			}
		}
		return out
	}

	strict := newReplayer(t, replay.Config{Roots: []string{coffer}})
	lenient := newReplayer(t, replay.Config{Roots: []string{coffer}, AllowUnverifiedLocal: true})
	for _, p := range attachments() {
		_, _, err := readRef(t, strict, p)
		wantRefused(t, p, err, replay.ErrNoDigest)
		got, info, err := readRef(t, lenient, p)
		if err != nil || !bytes.Equal(got, want[p]) || info.Verified {
			t.Fatalf("unverified read of %s: %d bytes, %+v, %v", p, len(got), info, err)
		}
	}

	dir := filepath.Join(t.TempDir(), "bucket")
	os.MkdirAll(dir, 0o700)
	dstURL := "file://" + dir + "?prefix=coffer/"
	src, err := store.OpenLocal(media)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := store.OpenBucket(ctx, dstURL)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if rep, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: src, To: dst}, JournalPath: filepath.Join(t.TempDir(), "journal")}); err != nil || rep.Copy == nil || rep.Copy.Copied != 3 {
		t.Fatalf("migrate.Run = %+v, %v", rep, err)
	}
	r := newReplayer(t, replay.Config{Buckets: []replay.Bucket{{URL: dstURL, Prefixes: []string{"coffer/"}}}})
	for _, p := range attachments() {
		u := objectURL(dst, filepath.Base(p))
		rc, info, err := r.Open(ctx, u)
		if err != nil {
			t.Fatalf("Open(%q): %v", u, err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, want[p]) || !info.Verified || info.SHA256 != sum(want[p]) || info.ContentType != "image/jpeg" {
			t.Fatalf("%s after migration: %d bytes, %+v, %v", u, len(got), info, err)
		}
	}
	p := attachments()[0]
	putObject(t, dst, filepath.Base(p), append([]byte("\xff\xd8\xff\xe0"), pngBlob(100)...), want[p])
	wantMismatch(t, r, objectURL(dst, filepath.Base(p)))
}
