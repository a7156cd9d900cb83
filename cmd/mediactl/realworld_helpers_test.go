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

// The set-up the tests on stores written by forge's and coffer's own code
// (internal/realworld) share: migrating them to a bucket as an operator
// does, reading which owners name which blob, forgetting owners.

// migrateForReplay runs migrate with args (and -o json), wants exit 0 or 1
// (a leftover of a save cut short still points at a local copy), and wants
// every reference to a copy read back and resolved.
func migrateForReplay(t *testing.T, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append(append([]string{"mediactl", "migrate"}, args...), "-o", "json"), &stdout, &stderr)
	if code != exitOK && code != exitFound {
		t.Fatalf("migrate %v: exit %d\n%s\n%s", args, code, stdout.String(), stderr.String())
	}
	var doc struct {
		Rewrite struct{ References int64 }
		Check   struct {
			ReadBack       int64 `json:"read_back"`
			Unresolved     int64 `json:"unresolved"`
			UnresolvedList []any `json:"unresolved_list"`
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("migrate %v: %v\n%s", args, err, stdout.String())
	}
	if doc.Rewrite.References == 0 || doc.Check.ReadBack == 0 || doc.Check.Unresolved != 0 {
		t.Fatalf("migrate %v: %d rewritten, %d read back, %d unresolved %v", args, doc.Rewrite.References, doc.Check.ReadBack, doc.Check.Unresolved, doc.Check.UnresolvedList)
	}
}

// migrateDeletingSource migrates the stores of the layout at root to the
// bucket to, rewriting the references with template at once (no idle time,
// no minimum age) and deleting the local copies, as migrateForReplay does;
// extra are further flags.
func migrateDeletingSource(t *testing.T, layout, root, to, template string, extra ...string) {
	t.Helper()
	migrateForReplay(t, append([]string{"--layout", layout, "--root", root, "--to", to,
		"--rewrite", "--rewrite-template", template, "--rewrite-min-idle", "0",
		"--delete-source", "--min-age", "0"}, extra...)...)
}

// forgeInBucket is a forge work directory written by forge's own code whose
// two stores (inbound/ and generated/) are migrated, each under its prefix
// of one bucket mounted at .forge/files/remote, with the documented template
// and --delete-source. after, when set, runs after each store's migration,
// given the store's directory and the sessions'.
func forgeInBucket(t *testing.T, after func(store, sessions string)) (root string, truth map[string]any, files, remote string) {
	t.Helper()
	root, truth = realworld.Forge(t)
	files = filepath.Join(root, ".forge", "files")
	remote = filepath.Join(files, "remote")
	if err := os.Mkdir(remote, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"inbound", "generated"} {
		var extra []string
		if st == "generated" {
			extra = []string{"--store", filepath.Join(files, st)}
		}
		migrateDeletingSource(t, "forge", root, "file://"+remote+"?prefix="+st+"/", "{files_dir}/remote/{prefix}{key}", extra...)
		if after != nil {
			after(filepath.Join(files, st), filepath.Join(root, ".forge", "sessions"))
		}
	}
	return root, truth, files, remote
}

// cofferDB is coffer's database in the .coffer directory, opened read-only.
func cofferDB(t *testing.T, coffer string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(coffer, "coffer.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// ownedBlob is a blob of a forge truth as a file holds it, with the owners
// (task ids) whose sessions name it: by a media part, a path in its text,
// or its digest anywhere.
type ownedBlob struct {
	store, key string
	path       string // the file read
	bytes      []byte
	named      map[string]bool
}

// forgeOwnedBlobs reads each blob of the forge truth in dir/<store>/<key>.
// A blob not there fails the test, unless migrated: then dir is a bucket's
// mount and the blob was not migrated (a name that looks temporary).
func forgeOwnedBlobs(t *testing.T, truth map[string]any, dir string, migrated bool) []*ownedBlob {
	t.Helper()
	owners := map[string]string{} // session file → task id (the forge owner)
	for _, s := range truth["session_files"].([]any) {
		sf := s.(map[string]any)
		owners[sf["file"].(string)] = sf["task_id"].(string)
	}
	var blobs []*ownedBlob
	for _, b := range truth["blobs"].([]any) {
		m := b.(map[string]any)
		bl := &ownedBlob{store: m["store"].(string), key: m["key"].(string), named: map[string]bool{}}
		bl.path = filepath.Join(dir, bl.store, bl.key)
		data, err := os.ReadFile(bl.path)
		if err != nil {
			if migrated {
				continue
			}
			t.Fatal(err)
		}
		bl.bytes = data
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
	return blobs
}

// sharingOwners are up to max owners that name blobs other owners name
// too, taken blob by blob.
func sharingOwners(blobs []*ownedBlob, max int) []string {
	var order []string
	seen := map[string]bool{}
	for _, bl := range blobs {
		if len(bl.named) < 2 {
			continue
		}
		for o := range bl.named {
			if !seen[o] && len(order) < max {
				seen[o] = true
				order = append(order, o)
			}
		}
	}
	return order
}

// forgetReceipt is what forget's document (-o json) says it erased and
// kept; Bucket is set for a copy in a bucket.
type forgetReceipt struct {
	Erased []struct{ Key, Bucket string }
	Kept   []struct{ Key, Reason, Bucket string }
}

// forgetting forgets owners of the forge work directory root with
// --delete and a receipt.
type forgetting struct {
	root   string
	found  bool // an exit 1 passes as well as 0
	bucket bool // the blobs are copies in a bucket: the receipt keeps one in a bucket
}

// run forgets owners in one run.
func (f forgetting) run(t *testing.T, owners ...string) forgetReceipt {
	t.Helper()
	args := []string{"mediactl", "forget", "--layout", "forge", "--root", f.root, "--delete", "--receipt", filepath.Join(t.TempDir(), "r"), "-o", "json"}
	for _, o := range owners {
		args = append(args, "--owner", o)
	}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != exitOK && (!f.found || code != exitFound) {
		t.Fatalf("forget %v: exit %d\n%s\n%s", owners, code, stdout.String(), stderr.String())
	}
	var rep forgetReceipt
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("forget %v: %v\n%s", owners, err, stdout.String())
	}
	return rep
}

// inTurnThenTogether forgets the owners in order one run each: after each,
// every blob an owner not forgotten names is still there, byte for byte.
// Each run kept what the earlier forgotten owners' sessions (still there:
// forget erases media, not transcripts) name; forgotten together, the
// blobs only they name go, unless the receipt says why one stays. It
// returns the receipts of the runs one by one and of the run together.
func (f forgetting) inTurnThenTogether(t *testing.T, blobs []*ownedBlob, order []string) (each []forgetReceipt, all forgetReceipt) {
	t.Helper()
	forgotten := map[string]bool{}
	for i, o := range order {
		each = append(each, f.run(t, o))
		forgotten[o] = true
		for _, bl := range blobs {
			othersName := false
			for n := range bl.named {
				othersName = othersName || !forgotten[n]
			}
			if got, err := os.ReadFile(bl.path); othersName && (err != nil || !bytes.Equal(got, bl.bytes)) {
				t.Errorf("after forgetting %v: %s/%s, which an owner not forgotten names, is gone or changed (%v)", order[:i+1], bl.store, bl.key, err)
			}
		}
	}
	all = f.run(t, order...)
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
		if _, err := os.Stat(bl.path); !only || err != nil {
			continue
		}
		why := ""
		for _, k := range all.Kept {
			if (!f.bucket || k.Bucket != "") && strings.HasSuffix(bl.path, "/"+k.Key) {
				why = k.Reason
			}
		}
		if why == "" {
			t.Errorf("%s/%s, named only by the forgotten owners, is still there and the receipt does not say why", bl.store, bl.key)
		}
	}
	return each, all
}
