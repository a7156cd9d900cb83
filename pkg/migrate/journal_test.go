package migrate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/ref"
)

// TestJournalTornTail: a run killed while appending leaves half a line; the
// next run keeps every complete record, drops the torn one and appends after it.
func TestJournalTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := migrate.OpenJournal(path)
	must(t, err)
	must(t, j.Append(migrate.Record{T: "start", Version: 1, From: "/a", To: "s3://b"}))
	must(t, j.Append(migrate.Record{T: "copied", Key: dA + ".png", Size: 3, SHA256: dA, ModTime: time.Unix(1, 0)}))
	must(t, j.Close())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	f.WriteString(`{"t":"copied","key":"` + dB)
	f.Close()

	j, err = migrate.OpenJournal(path)
	must(t, err)
	st := j.State()
	if st.Runs != 1 || st.From != "/a" || st.Copied.Len() != 1 || proofOf(st, dA+".png").Size != 3 {
		t.Fatalf("state %+v", st)
	}
	place := ref.Place{Document: "/s/t.json"}
	must(t, j.AppendSync(migrate.Record{T: "rewrite", Place: &place, OldSHA256: "x", NewSHA256: "y"}))
	must(t, j.Close())
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), dB) || strings.Count(string(b), "\n") != 3 {
		t.Fatalf("journal after reopen:\n%s", b)
	}
}

// TestJournalDamaged: a malformed line in the middle is an error naming it.
func TestJournalDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	os.WriteFile(path, []byte("{\"t\":\"start\"}\nnot json\n{\"t\":\"start\"}\n"), 0o600)
	if _, err := migrate.OpenJournal(path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzReadJournal: any bytes give a state or an error, never a panic, and the
// well-formed prefix is never longer than the input.
func FuzzReadJournal(f *testing.F) {
	f.Add("{\"t\":\"start\",\"version\":1}\n{\"t\":\"copied\",\"key\":\"k\",\"sha256\":\"s\"}\n")
	f.Add("{\"t\":\"rewrite\",\"place\":{\"document\":\"d\"},\"edits\":[{\"at\":3,\"old\":\"a\",\"new\":\"b\"}]}\n{\"t\"")
	f.Fuzz(func(t *testing.T, s string) {
		st, good, err := migrate.ReadJournal(strings.NewReader(s))
		if err == nil && (st == nil || good > int64(len(s))) {
			t.Fatalf("state %v, prefix %d of %d", st, good, len(s))
		}
	})
}

// TestLoadJournal: reading a journal for a dry run changes nothing in it,
// not even a torn last line, and appending to it fails.
func TestLoadJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	body := "{\"t\":\"copied\",\"key\":\"" + dA + ".png\",\"size\":3,\"sha256\":\"" + dA + "\"}\n{\"t\":\"cop"
	must(t, os.WriteFile(path, []byte(body), 0o600))
	j, err := migrate.LoadJournal(path)
	must(t, err)
	if _, ok := j.Proven(dA + ".png"); !ok {
		t.Fatal("the proven copy is not read")
	}
	if err := j.Append(migrate.Record{T: "start"}); err == nil || !strings.Contains(err.Error(), "opened for reading only") {
		t.Fatalf("Append to a journal loaded for reading = %v, want the read-only error", err)
	}
	must(t, j.Close())
	if b, _ := os.ReadFile(path); string(b) != body {
		t.Fatalf("the journal changed:\n%s", b)
	}
}

func proofOf(st *migrate.JournalState, key string) migrate.Proof {
	p, _ := st.Copied.Get(key)
	return p
}
