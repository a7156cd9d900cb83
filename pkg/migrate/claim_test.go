package migrate_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// Each migration leaves its record in the bucket before it copies, under
// the ID its journal keeps for every run: two stores migrated into one
// bucket (the second proving the first one's object as its own) leave two
// records, a second run of one leaves no third, and a dry run none.
func TestMigrationRecordsItselfInTheBucket(t *testing.T) {
	ctx := context.Background()
	srv := storetest.StartS3(t, nil)
	pic := append(append([]byte{}, pngHead...), "the same picture"...)
	podA, podB := t.TempDir(), t.TempDir()
	key := writeBlob(t, podA, pic, ".png")
	if writeBlob(t, podB, pic, ".png") != key {
		t.Fatal("not one key")
	}
	dst := openStore(t, srv.Bucket(t, "shared"))
	run := func(dir, journal string, dry bool) *migrate.RunReport {
		t.Helper()
		rep, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: openStore(t, dir), To: dst, DryRun: dry}, JournalPath: journal})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	claims := func() map[string]migrate.Claim {
		t.Helper()
		c, err := migrate.Claims(ctx, dst)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ja, jb := filepath.Join(t.TempDir(), "a.jsonl"), filepath.Join(t.TempDir(), "b.jsonl")

	run(podA, ja, true)
	if c := claims(); len(c) != 0 {
		t.Fatalf("a dry run left records: %+v", c)
	}
	if rep := run(podA, ja, false); rep.Copy.Copied != 1 {
		t.Fatalf("pod A copied %d", rep.Copy.Copied)
	}
	if rep := run(podB, jb, false); rep.Copy.Existing != 1 {
		t.Fatalf("pod B found %d of its blobs there already", rep.Copy.Existing)
	}
	idOf := func(journal string) string {
		t.Helper()
		j, err := migrate.LoadJournal(journal)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(j.State().ID) {
			t.Fatalf("journal %s: ID %q", journal, j.State().ID)
		}
		return j.State().ID
	}
	a, b := idOf(ja), idOf(jb)
	c := claims()
	if len(c) != 2 || c[a].From != openStore(t, podA).Location() || c[b].From != openStore(t, podB).Location() || c[a].To != dst.Location() {
		t.Fatalf("records %+v (a %s, b %s)", c, a, b)
	}
	run(podA, ja, false)
	if idOf(ja) != a || len(claims()) != 2 {
		t.Fatalf("a second run of pod A's migration: ID %s, records %+v", idOf(ja), claims())
	}
}

// A journal begun before migrations kept an ID gets one at its next run,
// and its record with it.
func TestMigrationWithoutIDGetsOne(t *testing.T) {
	ctx := context.Background()
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	writeBlob(t, dir, append(append([]byte{}, pngHead...), "a picture"...), ".png")
	dst := openStore(t, srv.Bucket(t, "older"))
	journal := filepath.Join(t.TempDir(), "j.jsonl")
	// What an older mediactl wrote: a start record without an ID, a proof.
	if _, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: openStore(t, dir), To: dst}, JournalPath: journal}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	older := regexp.MustCompile(`,"id":"[0-9a-f]{32}"`).ReplaceAll(b, nil)
	if len(older) == len(b) {
		t.Fatal("the journal's start record holds no id")
	}
	if err := os.WriteFile(journal, older, 0o600); err != nil {
		t.Fatal(err)
	}
	in := store.Unwrap(dst).(store.Internal)
	c, err := migrate.Claims(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	for id := range c {
		if err := in.DeleteInternal(ctx, migrate.ClaimName(id)); err != nil {
			t.Fatal(err)
		}
	}
	j, err := migrate.LoadJournal(journal)
	if err != nil || j.State().ID != "" {
		t.Fatalf("the older journal: ID %q, %v", j.State().ID, err)
	}

	if _, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: openStore(t, dir), To: dst}, JournalPath: journal}); err != nil {
		t.Fatal(err)
	}
	j, err = migrate.LoadJournal(journal)
	if err != nil {
		t.Fatal(err)
	}
	c, err = migrate.Claims(ctx, dst)
	if _, ok := c[j.State().ID]; err != nil || len(c) != 1 || !ok {
		t.Fatalf("ID %q, records %+v, %v", j.State().ID, c, err)
	}
}

// A destination where the migration cannot leave its record gets nothing:
// a copy there without the record would be one forget takes for this
// store's alone.
func TestMigrationWithoutRecordCopiesNothing(t *testing.T) {
	ctx := context.Background()
	dir, bucket := t.TempDir(), t.TempDir()
	writeBlob(t, dir, append(append([]byte{}, pngHead...), "a picture"...), ".png")
	// The internal folder's name taken by a file: no record can be written.
	if err := os.WriteFile(filepath.Join(bucket, ".mediactl"), []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	dst := openStore(t, "file://"+bucket)
	_, err := migrate.Run(ctx, migrate.RunOptions{Options: migrate.Options{From: openStore(t, dir), To: dst}, JournalPath: filepath.Join(t.TempDir(), "j.jsonl")})
	if err == nil || !regexp.MustCompile(`record the migration`).MatchString(err.Error()) {
		t.Fatalf("err %v", err)
	}
	entries, err := os.ReadDir(bucket)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the destination holds %v (%v), want only the file in the way", entries, err)
	}
}
