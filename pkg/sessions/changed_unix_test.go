//go:build unix

package sessions

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestChangedSinceFiles: after a complete read, the files a runtime saved,
// replaced by rename (even with an old modification time, as cp -p and mv
// leave it) or appended to are read again; the others are not.
func TestChangedSinceFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	for _, name := range []string{"quiet.json", "appended.jsonl", "replaced.json"} {
		writeFile(t, filepath.Join(dir, name), `{"n":1}`+"\n")
	}
	// A file that came in from elsewhere with its old times kept.
	elsewhere := filepath.Join(t.TempDir(), "moved-in.json")
	writeFile(t, elsewhere, `{"n":2}`)
	for _, p := range []string{filepath.Join(dir, "quiet.json"), filepath.Join(dir, "appended.jsonl"), filepath.Join(dir, "replaced.json"), elsewhere} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	// The change times above are now; the read begins later. The kernel
	// stamps change times from a clock that lags by up to a tick: a margin
	// (gc's is RereadMargin) takes it in.
	time.Sleep(time.Second)
	src := openFiles(t, dir)
	since := time.Now().Add(-500 * time.Millisecond)
	items, _ := walkAll(t, ChangedSince(src, since))
	if docs := documents(items); len(docs) != 0 {
		t.Fatalf("nothing changed since, and read %v", docs)
	}

	// The runtime saves.
	f, err := os.OpenFile(filepath.Join(dir, "appended.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"n":3}`)
	f.Close()
	tmp := filepath.Join(dir, "replaced.json.tmp")
	writeFile(t, tmp, `{"n":4}`)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "replaced.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(elsewhere, filepath.Join(dir, "moved-in.json")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "new.json"), `{"n":5}`)

	items, _ = walkAll(t, ChangedSince(src, since))
	var got []string
	for _, d := range documents(items) {
		got = append(got, filepath.Base(d))
	}
	slices.Sort(got)
	if want := []string{"appended.jsonl", "moved-in.json", "new.json", "replaced.json"}; !slices.Equal(got, want) {
		t.Fatalf("read again %v, want %v", got, want)
	}
	// The source itself still reads everything.
	if items, _ := walkAll(t, src); len(documents(items)) != 5 {
		t.Fatalf("the source read %v", documents(items))
	}
}

// TestChangedSinceSQLite: a database in WAL mode is read whole again when a
// row was committed since, and not at all when nothing was.
func TestChangedSinceSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coffer.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE chat_messages(id INTEGER PRIMARY KEY, content TEXT); INSERT INTO chat_messages(content) VALUES ('first')`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	src := openFiles(t, "sqlite:"+path)
	since := time.Now().Add(-500 * time.Millisecond)
	rows := func() int64 {
		_, c := walkAll(t, ChangedSince(src, since))
		return c.Rows
	}
	if n := rows(); n != 0 {
		t.Fatalf("nothing committed since, and %d rows read", n)
	}
	if _, err := db.Exec(`INSERT INTO chat_messages(content) VALUES ('second')`); err != nil {
		t.Fatal(err)
	}
	if n := rows(); n != 2 {
		t.Fatalf("a row committed since: %d rows read, want the whole table (2)", n)
	}
}
