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

	"golang.org/x/sys/unix"
)

// readAgain walks src and fails on any item with a problem: a read that
// took an unchanged document for a change ends incomplete.
func readAgain(t *testing.T, src Source) []walked {
	t.Helper()
	items, _ := walkAll(t, src)
	for _, it := range items {
		if it.Err != nil {
			t.Fatalf("%s: %v", it.Place.Document, it.Err)
		}
	}
	return items
}

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
	readAgain(t, src) // the complete read the check follows
	items := readAgain(t, ChangedSince(src, since))
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

	items = readAgain(t, ChangedSince(src, since))
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
	// A source never read whole is read whole.
	if items, _ := walkAll(t, ChangedSince(openFiles(t, dir), since)); len(documents(items)) != 5 {
		t.Fatalf("a source never read whole read %v", documents(items))
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

// TestChangedSinceMovedIn: what is new in the folder may be old files with
// their old times: a folder of sessions renamed in (its files keep their
// change times), a link made to an old file or folder, the whole folder
// swapped for another. All of it is read again.
func TestChangedSinceMovedIn(t *testing.T) {
	old := time.Now().Add(-48 * time.Hour)
	parent := t.TempDir()
	dir := filepath.Join(parent, "sessions")
	elsewhere := t.TempDir()
	mk := func(p string) {
		writeFile(t, p, `{"n":1}`)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(dir, "acme", "quiet.json"))
	mk(filepath.Join(dir, "top.json"))
	mk(filepath.Join(elsewhere, "archive", "t-7.json"))
	mk(filepath.Join(elsewhere, "archive", "deep", "t-8.json"))
	mk(filepath.Join(elsewhere, "linked.json"))
	mk(filepath.Join(elsewhere, "linkdir", "t-9.json"))
	time.Sleep(time.Second)
	src := openFiles(t, dir)
	if items := readAgain(t, src); len(documents(items)) != 2 {
		t.Fatalf("first read: %v", documents(items))
	}
	since := time.Now().Add(-500 * time.Millisecond)
	read := func() []string {
		items := readAgain(t, ChangedSince(src, since))
		var got []string
		for _, d := range documents(items) {
			rel, _ := filepath.Rel(dir, d)
			got = append(got, filepath.ToSlash(rel))
		}
		slices.Sort(got)
		return got
	}
	if got := read(); len(got) != 0 {
		t.Fatalf("nothing changed, and read %v", got)
	}
	if err := os.Rename(filepath.Join(elsewhere, "archive"), filepath.Join(dir, "acme", "archive")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "linked.json"), filepath.Join(dir, "linked.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "linkdir"), filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	// acme changed (a folder came in): all of it is read, quiet.json too.
	want := []string{"acme/archive/deep/t-8.json", "acme/archive/t-7.json", "acme/quiet.json", "linkdir/t-9.json", "linked.json"}
	if got := read(); !slices.Equal(got, want) {
		t.Fatalf("read again %v, want %v", got, want)
	}

	// The whole folder swapped for another of old files.
	other := filepath.Join(parent, "sessions.new")
	mk(filepath.Join(other, "swapped.json"))
	if err := os.Rename(dir, filepath.Join(parent, "sessions.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, dir); err != nil {
		t.Fatal(err)
	}
	if got := read(); !slices.Equal(got, []string{"swapped.json"}) {
		t.Fatalf("after the folder was swapped, read again %v", got)
	}
}

// TestChangedSinceMount: a folder of old sessions mounted into the sessions
// folder shows its own old times, and its parent's do not change: a folder
// the whole read did not enter is read whole.
func TestChangedSinceMount(t *testing.T) {
	old := time.Now().Add(-48 * time.Hour)
	dir, archive := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, "top.json"), `{"n":1}`)
	writeFile(t, filepath.Join(archive, "t-7.json"), `{"n":7}`)
	for _, p := range []string{filepath.Join(dir, "top.json"), filepath.Join(archive, "t-7.json")} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	mnt := filepath.Join(dir, "archive")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	src := openFiles(t, dir)
	readAgain(t, src)
	since := time.Now().Add(-500 * time.Millisecond)
	if err := unix.Mount(archive, mnt, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, 0) })
	var got []string
	for _, d := range documents(readAgain(t, ChangedSince(src, since))) {
		got = append(got, filepath.Base(d))
	}
	if !slices.Equal(got, []string{"t-7.json"}) {
		t.Fatalf("read again %v, want the mounted folder's t-7.json", got)
	}
}

// TestSQLiteReplacedByRename: a database replaced by rename between two
// reads of one source is read as it is now, by ChangedSince too.
func TestSQLiteReplacedByRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "coffer.db")
	mk := func(p, content string) {
		db, err := sql.Open("sqlite", "file:"+p)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE TABLE chat_messages(id INTEGER PRIMARY KEY, content TEXT); INSERT INTO chat_messages(content) VALUES (?)`, content); err != nil {
			t.Fatal(err)
		}
	}
	mk(path, "old-row")
	time.Sleep(time.Second)
	src := openFiles(t, "sqlite:"+path)
	since := time.Now().Add(-500 * time.Millisecond)
	readAgain(t, src)
	mk(filepath.Join(dir, "restored.db"), "new-row")
	if err := os.Rename(filepath.Join(dir, "restored.db"), path); err != nil {
		t.Fatal(err)
	}
	for _, s := range []Source{ChangedSince(src, since), src} {
		var texts []string
		for _, it := range readAgain(t, s) {
			texts = append(texts, string(it.Text))
		}
		if !slices.Contains(texts, "new-row") || slices.Contains(texts, "old-row") {
			t.Fatalf("%T read %q after the database was replaced, want new-row", s, texts)
		}
	}
}

// TestSessionGoneBeforeItsOpen: a session the runtime deletes (or renames)
// between the walk's lstat and its open is a change, not a problem: the walk
// lists again, and is complete.
func TestSessionGoneBeforeItsOpen(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), `{"n":1}`)
	writeFile(t, filepath.Join(dir, "b.json.tmp"), `{"n":2}`)
	probeHook = func(p string) {
		if filepath.Base(p) == "b.json.tmp" {
			// forge's save: the temporary file renamed over the session.
			os.Rename(p, filepath.Join(dir, "b.json"))
		}
	}
	defer func() { probeHook = nil }()
	var got []string
	for _, d := range documents(readAgain(t, openFiles(t, dir))) {
		got = append(got, filepath.Base(d))
	}
	if !slices.Equal(got, []string{"a.json", "b.json"}) {
		t.Fatalf("read %v, want a.json and b.json", got)
	}
}
