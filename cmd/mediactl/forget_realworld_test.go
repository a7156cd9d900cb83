package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/internal/realworld"
)

// On a forge store written by forge's own code (53 blobs shared by several
// sessions, mentions in prose and tool calls, a blob in two stores), owners
// are forgotten one after another with --delete. After each, every blob a
// session of an owner not forgotten names — by a media part, a path in its
// text, or its digest anywhere — is still in its store, byte for byte; and
// the forgotten owners' blobs that no one else names are gone.
func TestForgetRealworldForgeKeepsOthersMedia(t *testing.T) {
	root, truth := realworld.Forge(t)
	files := filepath.Join(root, ".forge", "files")
	owners := map[string]string{} // session file → task id (the forge owner)
	for _, s := range truth["session_files"].([]any) {
		sf := s.(map[string]any)
		owners[sf["file"].(string)] = sf["task_id"].(string)
	}
	type blob struct {
		path  string
		bytes []byte
		named map[string]bool // owners whose sessions name it
	}
	var blobs []*blob
	for _, b := range truth["blobs"].([]any) {
		m := b.(map[string]any)
		p := filepath.Join(files, m["store"].(string), m["key"].(string))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bl := &blob{path: p, bytes: data, named: map[string]bool{}}
		for _, field := range []string{"part_refs", "text_refs"} {
			for _, r := range m[field].([]any) {
				if o, ok := owners[r.(map[string]any)["session"].(string)]; ok {
					bl.named[o] = true
				}
			}
		}
		for _, f := range m["digest_mentioned_in"].([]any) {
			if o, ok := owners[f.(string)]; ok {
				bl.named[o] = true
			}
		}
		blobs = append(blobs, bl)
	}
	// The owners to forget: those naming the most shared blobs first.
	var order []string
	seen := map[string]bool{}
	for _, bl := range blobs {
		if len(bl.named) < 2 {
			continue
		}
		for o := range bl.named {
			if !seen[o] && len(order) < 8 {
				seen[o] = true
				order = append(order, o)
			}
		}
	}
	if len(order) < 4 {
		t.Fatalf("only %d owners share blobs in the truth", len(order))
	}
	forgotten := map[string]bool{}
	receipts := t.TempDir()
	erasedAll := 0
	for i, o := range order {
		var stdout, stderr bytes.Buffer
		code := run([]string{"mediactl", "forget", "--layout", "forge", "--root", root, "--owner", o, "--delete",
			"--receipt", filepath.Join(receipts, "r"+string(rune('a'+i))), "-o", "json"}, &stdout, &stderr)
		if code != exitOK && code != exitFound {
			t.Fatalf("forget %s: exit %d\n%s\n%s", o, code, stdout.String(), stderr.String())
		}
		var rep struct {
			Erased []struct{ Key string }
			Kept   []struct{ Key, Reason string }
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("forget %s: %v\n%s", o, err, stdout.String())
		}
		erasedAll += len(rep.Erased)
		forgotten[o] = true
		for _, bl := range blobs {
			othersName := false
			for n := range bl.named {
				if !forgotten[n] {
					othersName = true
				}
			}
			got, err := os.ReadFile(bl.path)
			switch {
			case othersName && (err != nil || !bytes.Equal(got, bl.bytes)):
				t.Errorf("after forgetting %v: %s, which an owner not forgotten names, is gone or changed (%v)", order[:i+1], strings.TrimPrefix(bl.path, files), err)
			}
		}
	}
	// Each run above kept what the earlier forgotten owners' sessions (still
	// there: forget erases media, not transcripts) name. Forgotten together,
	// the blobs only they name go, unless the report says why one stays.
	var stdout, stderr bytes.Buffer
	args := []string{"mediactl", "forget", "--layout", "forge", "--root", root, "--delete", "--receipt", filepath.Join(receipts, "all"), "-o", "json"}
	for _, o := range order {
		args = append(args, "--owner", o)
	}
	if code := run(args, &stdout, &stderr); code != exitOK && code != exitFound {
		t.Fatalf("forget all: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	var all struct {
		Erased []struct{ Key string }
		Kept   []struct{ Key, Reason string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &all); err != nil {
		t.Fatal(err)
	}
	erasedAll += len(all.Erased)
	reasons := map[string]int{}
	for _, k := range all.Kept {
		reasons[k.Reason]++
	}
	t.Logf("forgotten together: %d erased, kept %v", len(all.Erased), reasons)
	for _, bl := range blobs {
		onlyForgotten := len(bl.named) > 0
		for n := range bl.named {
			onlyForgotten = onlyForgotten && forgotten[n]
		}
		if _, err := os.Stat(bl.path); !onlyForgotten || err != nil {
			continue
		}
		why := ""
		for _, k := range all.Kept {
			if strings.HasSuffix(bl.path, "/"+k.Key) {
				why = k.Reason
			}
		}
		if why == "" {
			t.Errorf("%s, named only by the forgotten owners, is still there and the report does not say why", strings.TrimPrefix(bl.path, files))
		}
	}
	if erasedAll == 0 {
		t.Error("forgetting 8 owners erased nothing")
	}
	t.Logf("forgot %d owners, erased %d blobs; every blob an owner not forgotten names is still there", len(order), erasedAll)
}

// On a coffer home written by coffer's own code, five conversations are
// forgotten together: every file whose name (its uuid hex) any other
// conversation's messages hold is still there, byte for byte; the rows are
// read as coffer wrote them (Python's json.dumps, \u escapes).
func TestForgetRealworldCofferKeepsOthersMedia(t *testing.T) {
	home, _ := realworld.Coffer(t)
	coffer := filepath.Join(home, ".coffer")
	media := filepath.Join(coffer, "channel-media")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(coffer, "coffer.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT conversation_id, content FROM chat_messages ORDER BY conversation_id, seq`)
	if err != nil {
		t.Fatal(err)
	}
	contents := map[string][]string{}
	var convs []string
	for rows.Next() {
		var c, content string
		if err := rows.Scan(&c, &content); err != nil {
			t.Fatal(err)
		}
		if _, ok := contents[c]; !ok {
			convs = append(convs, c)
		}
		contents[c] = append(contents[c], content)
	}
	rows.Close()
	db.Close()
	entries, err := os.ReadDir(media)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(media, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		before[e.Name()] = b
	}
	if len(convs) < 10 {
		t.Fatalf("%d conversations", len(convs))
	}
	forgotten := map[string]bool{}
	args := []string{"mediactl", "forget", "--layout", "coffer", "--root", coffer, "--delete", "--receipt", filepath.Join(t.TempDir(), "r"), "-o", "json"}
	for _, c := range convs[:5] {
		forgotten[c] = true
		args = append(args, "--owner", c)
	}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != exitOK && code != exitFound {
		t.Fatalf("forget: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	var rep struct{ Erased []struct{ Key string } }
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	for name, b := range before {
		id, _, _ := strings.Cut(name, ".")
		named := false
		for c, cs := range contents {
			if forgotten[c] {
				continue
			}
			for _, content := range cs {
				named = named || strings.Contains(content, id)
			}
		}
		got, err := os.ReadFile(filepath.Join(media, name))
		if named && (err != nil || !bytes.Equal(got, b)) {
			t.Errorf("%s, which a conversation not forgotten names, is gone or changed (%v)", name, err)
		}
	}
	t.Logf("forgot 5 of %d conversations: %d files erased", len(convs), len(rep.Erased))
	if len(rep.Erased) == 0 {
		t.Error("forgetting five conversations erased nothing")
	}
}
