package migrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
)

// TestJournalInUse: while one run has the journal open and is appending
// (its last record half written), a second migrate or a rollback of the same
// journal is refused before it reads or cuts anything; the bytes the first
// run wrote stay as they are, and its next record lands after them.
func TestJournalInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := migrate.OpenJournal(path)
	must(t, err)
	defer j.Close()
	must(t, j.Started("/a", "s3://b"))
	must(t, j.Append(migrate.Record{T: "copied", Key: dA + ".png", Size: 3, SHA256: dA, ModTime: time.Unix(1, 0)}))
	// What a reader sees of the run's next record while it is being
	// written: no newline yet, which looks like a torn tail.
	next, err := json.Marshal(migrate.Record{T: "copied", Key: dB + ".png", Size: 5, SHA256: dB, ModTime: time.Unix(3, 0)})
	must(t, err)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	defer f.Close()
	f.Write(next[:20])
	before, _ := os.ReadFile(path)

	var ju *migrate.JournalInUseError
	if _, err := migrate.OpenJournal(path); !errors.As(err, &ju) || ju.Path != path {
		t.Fatalf("a second OpenJournal = %v, want a JournalInUseError", err)
	}
	if _, err := migrate.Rollback(context.Background(), migrate.RollbackOptions{JournalPath: path}); !errors.As(err, &ju) {
		t.Fatalf("Rollback of a journal in use = %v, want a JournalInUseError", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatalf("the refused opens changed the journal:\n%s\nwas\n%s", after, before)
	}
	if _, err := migrate.LoadJournal(path); err != nil {
		t.Errorf("a dry run's read of a journal in use: %v", err)
	}

	// The record ends, and the run's own next record goes after it.
	f.Write(append(next[20:], '\n'))
	before, _ = os.ReadFile(path)
	must(t, j.Append(migrate.Record{T: "copied", Key: dC + ".png", Size: 4, SHA256: dC, ModTime: time.Unix(2, 0)}))
	must(t, j.Close())
	if after, _ := os.ReadFile(path); len(after) <= len(before) || string(after[:len(before)]) != string(before) {
		t.Fatalf("the run's next record did not go after the bytes already there:\n%s", after)
	}
	j2, err := migrate.OpenJournal(path) // closed: free again
	must(t, err)
	defer j2.Close()
	if st := j2.State(); st.Copied.Len() != 3 {
		t.Errorf("the journal holds %d proofs, want 3", st.Copied.Len())
	}
}
