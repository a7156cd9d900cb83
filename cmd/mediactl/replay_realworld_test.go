package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/internal/realworld"
	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/replay"
)

// pointerValue is the string at the JSON pointer p of v.
func pointerValue(v any, p string) (string, bool) {
	for _, tok := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return "", false
			}
			v = x[i]
		default:
			return "", false
		}
	}
	s, ok := v.(string)
	return s, ok
}

// replayed reads ref through r to its end and reports whether the bytes
// hash to want (hex sha256).
func replayed(t *testing.T, r *replay.Replayer, ref, want string) bool {
	rc, _, err := r.Open(context.Background(), ref)
	if err != nil {
		t.Errorf("replay %s: %v", ref, err)
		return false
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		t.Errorf("replay %s: %v", ref, err)
		return false
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("replay %s: sha256 %s, want %s", ref, got, want)
		return false
	}
	return true
}

// A forge work directory written by forge's own code is migrated (inbound/
// and generated/, each under its prefix of one bucket mounted at
// .forge/files/remote, with the documented template and --delete-source);
// then, on a pod that has the sessions and the mount but neither local
// store, every media part the truth says exists — all three URI forms
// before the rewrite — is read as forge reads it (a local file below
// .forge/files, through pkg/replay) and hashes to its blob.
func TestReplayRealworldForgeAfterMigrate(t *testing.T) {
	root, truth, files, remote := forgeInBucket(t, nil)
	// The replaying pod: no local store.
	away := t.TempDir()
	for _, st := range []string{"inbound", "generated"} {
		if err := os.Rename(filepath.Join(files, st), filepath.Join(away, st)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := replay.New(replay.Config{Roots: []string{files}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	docs := map[string]any{}
	parts, ok := 0, 0
	forms := map[string]int{}
	for _, b := range truth["blobs"].([]any) {
		blob := b.(map[string]any)
		key := blob["key"].(string)
		for _, pr := range blob["part_refs"].([]any) {
			ref := pr.(map[string]any)
			session := ref["session"].(string)
			if strings.HasSuffix(session, ".tmp") {
				continue // forge loads <id>.json only
			}
			doc, seen := docs[session]
			if !seen {
				raw, err := os.ReadFile(filepath.Join(root, ".forge", "sessions", session))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(raw, &doc); err != nil {
					t.Fatalf("%s: %v", session, err)
				}
				docs[session] = doc
			}
			parts++
			forms[ref["form"].(string)]++
			uri, found := pointerValue(doc, ref["where"].(string))
			if !found {
				t.Errorf("%s#%s: no media URI", session, ref["where"])
				continue
			}
			if !filepath.IsAbs(uri) || !strings.HasPrefix(uri, remote+"/") {
				t.Errorf("%s#%s: %q is not a rewritten path below the mount", session, ref["where"], uri)
				continue
			}
			if replayed(t, r, uri, strings.TrimSuffix(key, filepath.Ext(key))) {
				ok++
			}
		}
	}
	t.Logf("forge: %d of %d media parts replayed on the pod (forms before the rewrite: %v)", ok, parts, forms)
	if parts < 150 || len(forms) != 3 || ok != parts {
		t.Errorf("%d of %d parts replayed, forms %v; want every part, all three forms", ok, parts, forms)
	}
}

// A coffer home written by coffer's own code (opaque names uuid4().hex plus
// the user's suffix: none, upper case, Chinese, with a space) is migrated to
// a bucket mounted at another folder; on a pod without channel-media, every
// attachment block whose file existed reads, as coffer re-materialises it
// (any local path), the original bytes.
func TestReplayRealworldCofferAfterMigrate(t *testing.T) {
	home, truth := realworld.Coffer(t)
	legacy := truth["legacy"].(map[string]any)
	// Names the precise extractor once cut short or missed (issue of a
	// trailing blank, a '#' and '?', quotes, '&', '%', a no-break space),
	// each downloaded a day ago as coffer does.
	extras := map[string]string{} // message id → path
	for i, suffix := range []string{".pdf ", ".v1#draft?x=1", `.r&d%20 "q"`, ".caf\u00e9\u00a0x"} {
		id := fmt.Sprintf("e%031x", i)
		hexName := fmt.Sprintf("%032x", 0x5eed0000+i)
		p, err := realworld.AddCofferDownload(home, id, hexName, suffix, "file"+suffix, []byte("bytes of the odd file "+suffix), 24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		extras[id] = p
	}
	// The bytes of every file before the migration, by path.
	want := map[string]string{}
	files := []string{}
	for p := range legacy["files"].(map[string]any) {
		files = append(files, p)
	}
	for _, p := range extras {
		files = append(files, p)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d := sha256.Sum256(b)
		want[p] = hex.EncodeToString(d[:])
	}
	mount := filepath.Join(t.TempDir(), "media")
	if err := os.Mkdir(mount, 0o700); err != nil {
		t.Fatal(err)
	}
	migrateDeletingSource(t, "coffer", filepath.Join(home, ".coffer"), "file://"+mount+"?prefix=channel-media/", mount+"/{prefix}{key}")
	media := filepath.Join(home, ".coffer", "channel-media")
	if err := os.Rename(media, filepath.Join(t.TempDir(), "channel-media")); err != nil {
		t.Fatal(err)
	}
	r, err := replay.New(replay.Config{Roots: []string{home}, Buckets: []replay.Bucket{{URL: "file://" + mount, Prefixes: []string{""}}}, AllowUnverifiedLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	db := cofferDB(t, filepath.Join(home, ".coffer"))
	defer db.Close()

	refs := legacy["attachment_refs"].([]any)
	for id, p := range extras {
		refs = append(refs, map[string]any{"exists_at_path": true, "path": p, "message_id": id, "block": float64(1)})
	}
	blocks, ok, odd := 0, 0, 0
	for _, a := range refs {
		ar := a.(map[string]any)
		if ar["exists_at_path"] != true {
			continue
		}
		orig := ar["path"].(string)
		sum, known := want[orig]
		if !known {
			t.Errorf("%s: an existing attachment the files list does not hold", orig)
			continue
		}
		blocks++
		if base := filepath.Base(orig); strings.ContainsAny(base, " ") || !strings.Contains(base, ".") || strings.ToLower(base) != base ||
			strings.IndexFunc(base, func(r rune) bool { return r > 0x7f }) >= 0 || blobname.IsTemporary(base) {
			odd++
		}
		var content string
		if err := db.QueryRow(`SELECT content FROM chat_messages WHERE id = ?`, ar["message_id"]).Scan(&content); err != nil {
			t.Fatal(err)
		}
		var list []map[string]any
		if err := json.Unmarshal([]byte(content), &list); err != nil {
			t.Fatalf("message %s: %v", ar["message_id"], err)
		}
		i := int(ar["block"].(float64))
		p, _ := list[i]["path"].(string)
		if !strings.HasPrefix(p, mount+"/channel-media/") {
			t.Errorf("message %s block %d: %q is not rewritten below the mount", ar["message_id"], i, p)
			continue
		}
		if replayed(t, r, p, sum) {
			ok++
		}
	}
	t.Logf("coffer: %d of %d attachment blocks replayed on the pod (%d with odd names)", ok, blocks, odd)
	if blocks < 80 || odd < len(extras) || ok != blocks {
		t.Errorf("%d of %d blocks replayed (%d odd names); want every block", ok, blocks, odd)
	}
}
