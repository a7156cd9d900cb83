package main

import (
	"bytes"
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
	blobs := forgeOwnedBlobs(t, truth, filepath.Join(root, ".forge", "files"), false)
	// The owners to forget: those naming the most shared blobs first.
	order := sharingOwners(blobs, 8)
	if len(order) < 4 {
		t.Fatalf("only %d owners share blobs in the truth", len(order))
	}
	each, all := forgetting{root: root, found: true}.inTurnThenTogether(t, blobs, order)
	erasedAll := len(all.Erased)
	for _, rep := range each {
		erasedAll += len(rep.Erased)
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
	db := cofferDB(t, coffer)
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
