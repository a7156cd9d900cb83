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

// A forge store written by forge's own code is migrated as the operator
// does it (both stores to a bucket mounted in the files dir, --rewrite,
// --delete-source, then gc purge): the media live only in the bucket, and
// the sessions name the copies. Owners are forgotten one by one: every copy
// a session of an owner not forgotten names — by a media part, a path in
// its text, or its digest anywhere — is still in the bucket, byte for
// byte; forgotten together, the copies only they name are gone, unless the
// receipt says why one stays.
func TestForgetRealworldForgeOnlyInTheBucket(t *testing.T) {
	root, truth := realworld.Forge(t)
	files := filepath.Join(root, ".forge", "files")
	remote := filepath.Join(files, "remote")
	if err := os.Mkdir(remote, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"inbound", "generated"} {
		args := []string{"--layout", "forge", "--root", root, "--to", "file://" + remote + "?prefix=" + st + "/",
			"--rewrite", "--rewrite-template", "{files_dir}/remote/{prefix}{key}", "--rewrite-min-idle", "0",
			"--delete-source", "--min-age", "0"}
		if st == "generated" {
			args = append(args, "--store", filepath.Join(files, st))
		}
		migrateForReplay(t, args...)
		var stdout, stderr bytes.Buffer
		if code := run([]string{"mediactl", "gc", "purge", "--store", filepath.Join(files, st), "--sessions", filepath.Join(root, ".forge", "sessions"), "--keep-within", "0"}, &stdout, &stderr); code != exitOK {
			t.Fatalf("gc purge %s: exit %d\n%s\n%s", st, code, stdout.String(), stderr.String())
		}
	}

	owners := map[string]string{} // session file → task id (the forge owner)
	for _, s := range truth["session_files"].([]any) {
		sf := s.(map[string]any)
		owners[sf["file"].(string)] = sf["task_id"].(string)
	}
	type blob struct {
		copy  string // the copy's file in the bucket
		bytes []byte
		named map[string]bool // owners whose sessions name it
	}
	var blobs []*blob
	onlyInBucket := 0
	for _, b := range truth["blobs"].([]any) {
		m := b.(map[string]any)
		st, key := m["store"].(string), m["key"].(string)
		data, err := os.ReadFile(filepath.Join(remote, st, key))
		if err != nil {
			continue // not migrated (a name that looks temporary)
		}
		if _, err := os.Stat(filepath.Join(files, st, key)); err != nil {
			onlyInBucket++
		}
		bl := &blob{copy: filepath.Join(remote, st, key), bytes: data, named: map[string]bool{}}
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
	if onlyInBucket < 20 {
		t.Fatalf("only %d of %d blobs live only in the bucket after the migration", onlyInBucket, len(blobs))
	}
	var order []string
	seen := map[string]bool{}
	for _, bl := range blobs {
		if len(bl.named) < 2 {
			continue
		}
		for o := range bl.named {
			if !seen[o] && len(order) < 6 {
				seen[o] = true
				order = append(order, o)
			}
		}
	}
	if len(order) < 3 {
		t.Fatalf("only %d owners share blobs in the truth", len(order))
	}
	type receipt struct {
		Erased []struct{ Key, Bucket string }
		Kept   []struct{ Key, Reason, Bucket string }
	}
	forget := func(owners ...string) receipt {
		t.Helper()
		args := []string{"mediactl", "forget", "--layout", "forge", "--root", root, "--delete", "--receipt", filepath.Join(t.TempDir(), "r"), "-o", "json"}
		for _, o := range owners {
			args = append(args, "--owner", o)
		}
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("forget %v: exit %d\n%s\n%s", owners, code, stdout.String(), stderr.String())
		}
		var rep receipt
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("forget %v: %v\n%s", owners, err, stdout.String())
		}
		return rep
	}
	forgotten := map[string]bool{}
	fromBucket := 0
	for i, o := range order {
		rep := forget(o)
		for _, e := range rep.Erased {
			if e.Bucket != "" {
				fromBucket++
			}
		}
		forgotten[o] = true
		for _, bl := range blobs {
			othersName := false
			for n := range bl.named {
				othersName = othersName || !forgotten[n]
			}
			if got, err := os.ReadFile(bl.copy); othersName && (err != nil || !bytes.Equal(got, bl.bytes)) {
				t.Errorf("after forgetting %v: the copy %s, which an owner not forgotten names, is gone or changed (%v)", order[:i+1], strings.TrimPrefix(bl.copy, remote), err)
			}
		}
	}
	all := forget(order...)
	reasons := map[string]int{}
	for _, k := range all.Kept {
		reasons[k.Reason]++
	}
	t.Logf("forgotten together: %d erased, kept %v", len(all.Erased), reasons)
	for _, bl := range blobs {
		only := len(bl.named) > 0
		for n := range bl.named {
			only = only && forgotten[n]
		}
		if _, err := os.Stat(bl.copy); !only || err != nil {
			continue
		}
		why := ""
		for _, k := range all.Kept {
			if k.Bucket != "" && strings.HasSuffix(bl.copy, "/"+k.Key) {
				why = k.Reason
			}
		}
		if why == "" {
			t.Errorf("the copy %s, named only by the forgotten owners, is still there and the receipt does not say why", strings.TrimPrefix(bl.copy, remote))
		}
	}
	if fromBucket == 0 {
		t.Error("forgetting the owners one by one erased no copy from the bucket")
	}
	t.Logf("forgot %d owners; %d copies erased from the bucket one by one; every copy an owner not forgotten names is still there", len(order), fromBucket)
}
