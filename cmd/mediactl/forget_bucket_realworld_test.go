package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
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
	root, truth, files, remote := forgeInBucket(t, func(store, sessions string) {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"mediactl", "gc", "purge", "--store", store, "--sessions", sessions, "--keep-within", "0"}, &stdout, &stderr); code != exitOK {
			t.Fatalf("gc purge %s: exit %d\n%s\n%s", filepath.Base(store), code, stdout.String(), stderr.String())
		}
	})
	blobs := forgeOwnedBlobs(t, truth, remote, true)
	onlyInBucket := 0
	for _, bl := range blobs {
		if _, err := os.Stat(filepath.Join(files, bl.store, bl.key)); err != nil {
			onlyInBucket++
		}
	}
	if onlyInBucket < 20 {
		t.Fatalf("only %d of %d blobs live only in the bucket after the migration", onlyInBucket, len(blobs))
	}
	order := sharingOwners(blobs, 6)
	if len(order) < 3 {
		t.Fatalf("only %d owners share blobs in the truth", len(order))
	}
	each, _ := forgetting{root: root, bucket: true}.inTurnThenTogether(t, blobs, order)
	fromBucket := 0
	for _, rep := range each {
		for _, e := range rep.Erased {
			if e.Bucket != "" {
				fromBucket++
			}
		}
	}
	if fromBucket == 0 {
		t.Error("forgetting the owners one by one erased no copy from the bucket")
	}
	t.Logf("forgot %d owners; %d copies erased from the bucket one by one; every copy an owner not forgotten names is still there", len(order), fromBucket)
}
