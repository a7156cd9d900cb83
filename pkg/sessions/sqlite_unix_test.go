//go:build unix

package sessions

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cofferWALContent is a message as coffer stores it: Python's json.dumps with
// its defaults (ensure_ascii, ", " and ": " separators).
const cofferWALContent = `[{"type": "text", "text": "Was ist auf dem Bild? \u00c4rger"}, {"type": "attachment", "path": "/home/u/.coffer/channel-media/b0f2c4e1a9d84f6b8e7a6c5d4b3a2f10.\u7b2c\u4e8c\u7248", "mime": "image/png", "filename": "\u7b2c\u4e8c\u7248"}]`

// createCleanWAL builds coffer's database in WAL mode the way coffer does and
// shuts the writer down cleanly: the database file stays in WAL mode (its header
// says so), and the -wal and -shm files are gone.
func createCleanWAL(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE conversations(id TEXT PRIMARY KEY, agent_key TEXT, title TEXT, model_id TEXT, created_at DATETIME, updated_at DATETIME);
CREATE TABLE chat_messages(id TEXT PRIMARY KEY, conversation_id TEXT, seq INTEGER, role TEXT,
	content TEXT, status TEXT, model_id TEXT, prompt_tokens INT, completion_tokens INT, created_at DATETIME);
INSERT INTO conversations VALUES('c1', 'default', 'Bild', 'model-x', '2026-07-01 10:00:00', '2026-07-01 10:00:05');`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO chat_messages(id, conversation_id, seq, role, content, status) VALUES('m1', 'c1', 1, 'user', ?, 'done')`, cofferWALContent); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 20)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(head, 0); err != nil {
		t.Fatal(err)
	}
	if head[18] != 2 || head[19] != 2 {
		t.Fatalf("the database is not in WAL mode (header bytes 18, 19 = %d, %d)", head[18], head[19])
	}
	checkNoWALFiles(t, path)
}

func checkNoWALFiles(t *testing.T, path string) {
	t.Helper()
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Lstat(path + suffix); !os.IsNotExist(err) {
			t.Errorf("%s%s exists (%v): there was none", filepath.Base(path), suffix, err)
		}
	}
}

// readCleanWAL opens and reads the database, and checks that what coffer
// wrote came out and that nothing was left beside the database.
func readCleanWAL(t *testing.T, path string) {
	t.Helper()
	src := openSQLiteSpec(t, "sqlite:"+path, "")
	items, c := walkAll(t, src)
	if got, _ := findText(items, "chat_messages", "id=m1", "content"); got != cofferWALContent {
		t.Errorf("chat_messages[id=m1].content = %q, want coffer's content", got)
	}
	if c.Rows != 2 {
		t.Errorf("counts = %+v, want 2 rows", c)
	}
	if err := src.Close(); err != nil {
		t.Error(err)
	}
	checkNoWALFiles(t, path)
}

// TestSQLiteCleanWALReadOnlyFolder: a WAL database after a clean shutdown
// opens read-only in a folder the operator cannot write, and no -wal or -shm
// is left behind, there or in a folder the operator can write.
func TestSQLiteCleanWALReadOnlyFolder(t *testing.T) {
	if asNobodyChild(t) {
		path := os.Getenv("MEDIACTL_TEST_SQLITE_DB")
		if f, err := os.OpenFile(filepath.Join(filepath.Dir(path), "probe"), os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.Close()
			t.Fatalf("the folder of %s is writable: the test proves nothing", path)
		}
		readCleanWAL(t, path)
		return
	}
	dir := publicTempDir(t)
	path := filepath.Join(dir, "coffer.db")
	createCleanWAL(t, path)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("writable folder", func(t *testing.T) { readCleanWAL(t, path) })
	runAsNobody(t, "MEDIACTL_TEST_SQLITE_DB="+path)
	checkNoWALFiles(t, path)
}

// TestSQLiteImmutableReadChecked: a read without locks (immutable) that a
// writer may have torn is a problem: the database file changed, or a -wal
// appeared, while it was read.
func TestSQLiteImmutableReadChecked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
		errHas string
	}{
		{"untouched", func(*testing.T, string) {}, ""},
		{"written", func(t *testing.T, path string) {
			// coffer writes and closes: the close checkpoints into the file.
			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`UPDATE chat_messages SET status = 'edited'`); err != nil {
				t.Fatal(err)
			}
		}, "was written while it was read"},
		{"writer opened", func(t *testing.T, path string) {
			writeFile(t, path+"-wal", "")
		}, "a writer opened the database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "coffer.db")
			createCleanWAL(t, path)
			// As if the folder were not writable (TestSQLiteCleanWALReadOnlyFolder
			// takes that path for real).
			sqliteDirWritable = func(string) bool { return false }
			src := openSQLiteSpec(t, "sqlite:"+path, "").(*sqliteSource)
			sqliteDirWritable = dirWritable
			if !src.immutable {
				t.Fatal("not opened immutable")
			}
			var items []Item
			_, err := src.Walk(context.Background(), func(it Item) error {
				if len(items) == 0 {
					tc.change(t, path)
				}
				items = append(items, it)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			last := items[len(items)-1]
			switch {
			case tc.errHas == "" && last.Err != nil:
				t.Errorf("an unchanged database: %v", last.Err)
			case tc.errHas != "" && (last.Err == nil || !strings.Contains(last.Err.Error(), tc.errHas)):
				t.Errorf("last item %+v, want a problem saying %q", last, tc.errHas)
			}
		})
	}
}

// TestSQLiteThroughALinkReadsTheWAL: sqlite:PATH naming a link, in a folder
// the operator cannot write, to a WAL database whose last commits are still in
// its -wal (beside the database, where SQLite keeps it, not beside the link):
// the read finds that -wal and reads the commits. Before, no -wal beside the
// link made it a read without locks (immutable), which skipped them.
func TestSQLiteThroughALinkReadsTheWAL(t *testing.T) {
	real := filepath.Join(t.TempDir(), "coffer.db")
	createCleanWAL(t, real)
	writer, err := sql.Open("sqlite", "file:"+real+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if _, err := writer.Exec(`INSERT INTO chat_messages(id, conversation_id, seq, role, content, status) VALUES('m2', 'c1', 2, 'user', 'only in the WAL', 'done')`); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(real + "-wal"); err != nil {
		t.Fatalf("no -wal beside the database: %v", err)
	}
	linkDir := t.TempDir()
	link := filepath.Join(linkDir, "coffer.db")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	sqliteDirWritable = func(dir string) bool { return dir != linkDir && dirWritable(dir) }
	defer func() { sqliteDirWritable = dirWritable }()
	src := openSQLiteSpec(t, "sqlite:"+link, "").(*sqliteSource)
	defer src.Close()
	if src.immutable {
		t.Fatal("opened without locks (immutable): the -wal beside the database would be skipped")
	}
	items, _ := walkAll(t, src)
	if got, ok := findText(items, "chat_messages", "id=m2", "content"); !ok || got != "only in the WAL" {
		t.Fatalf("the commit in the WAL: %q, %v", got, ok)
	}
}
