package realworld

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestForge(t *testing.T) {
	root, truth := Forge(t)
	if truth["work_dir"] != root {
		t.Errorf("truth work_dir = %v, want %s", truth["work_dir"], root)
	}
	sess, err := os.ReadDir(filepath.Join(root, ".forge", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if want := len(truth["session_files"].([]any)) + len(truth["stale_tmp_files"].([]any)); len(sess) != want {
		t.Errorf("%d session files, want %d", len(sess), want)
	}
	named := 0
	for _, e := range sess {
		b, err := os.ReadFile(filepath.Join(root, ".forge", "sessions", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(Placeholder)) {
			t.Errorf("%s still holds the placeholder", e.Name())
		}
		if bytes.Contains(b, []byte(root+"/.forge/files/")) {
			named++
		}
	}
	if named == 0 {
		t.Error("no session names the root")
	}
	checkAges(t, root, truth)
}

// checkAges: every blob the truth calls older than 24 h is, and no other is.
func checkAges(t *testing.T, root string, truth map[string]any) {
	t.Helper()
	for _, b := range truth["blobs"].([]any) {
		b := b.(map[string]any)
		fi, err := os.Stat(filepath.Join(root, ".forge", "files", b["store"].(string), b["key"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		if old := time.Since(fi.ModTime()) > 24*time.Hour; old != b["older_than_24h"].(bool) {
			t.Errorf("%s/%s: older than 24 h = %v, truth says %v", b["store"], b["key"], old, b["older_than_24h"])
		}
	}
}

func TestForgeInSpaceAndAmpersand(t *testing.T) {
	root, truth := ForgeIn(t, filepath.Join(t.TempDir(), "My Agent & Co"))
	if !strings.HasSuffix(root, "/My Agent & Co/work") {
		t.Fatalf("root %s", root)
	}
	// forge writes JSON with Go's HTML escapes: & is \u0026 in the session files.
	esc := strings.ReplaceAll(root, "&", `\u0026`) + "/.forge/files/"
	found := false
	sessDir := filepath.Join(root, ".forge", "sessions")
	sess, _ := os.ReadDir(sessDir)
	for _, e := range sess {
		b, _ := os.ReadFile(filepath.Join(sessDir, e.Name()))
		if bytes.Contains(b, []byte(root+"/")) {
			t.Errorf("%s holds the root with a raw &", e.Name())
		}
		found = found || bytes.Contains(b, []byte(esc))
	}
	if !found {
		t.Errorf("no session names %s", esc)
	}
	checkAges(t, root, truth)
}

func TestCoffer(t *testing.T) {
	home, truth := Coffer(t)
	legacy := truth["legacy"].(map[string]any)
	if legacy["home"] != home {
		t.Errorf("truth home = %v, want %s", legacy["home"], home)
	}
	db := filepath.Join(home, ".coffer", "coffer.db")
	for _, s := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(db + s); err == nil {
			t.Errorf("%s%s left behind", db, s)
		}
	}
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var left, named int
	if err := conn.QueryRow(`select count(*) from chat_messages where content like '%__ROOT__%'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(`select count(*) from chat_messages where instr(content, ?) > 0`, home+"/.coffer/channel-media/").Scan(&named); err != nil {
		t.Fatal(err)
	}
	if left != 0 || named == 0 {
		t.Errorf("%d rows still hold the placeholder, %d name the home", left, named)
	}
	// The truth's files keep their ages: each file's mtime is its truth mtime, shifted.
	for p, f := range legacy["files"].(map[string]any) {
		f := f.(map[string]any)
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("truth file %s: %v", p, err)
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, f["mtime"].(string))
		if err != nil {
			t.Fatal(err)
		}
		gen, _ := time.Parse(time.RFC3339Nano, truth["generated_at"].(string))
		if d := fi.ModTime().Sub(at) - time.Since(gen); d < -time.Minute || d > time.Minute {
			t.Errorf("%s: mtime %s is not truth's %s shifted (off by %s)", p, fi.ModTime(), at, d)
		}
	}
}

func TestCofferUpgraded(t *testing.T) {
	home, truth := CofferUpgraded(t)
	up := truth["upgraded"].(map[string]any)
	dot := filepath.Join(home, ".coffer")
	for _, gone := range []string{"coffer.db", "channel-media"} {
		if _, err := os.Stat(filepath.Join(dot, gone)); err == nil {
			t.Errorf("%s still there after the upgrade", gone)
		}
	}
	files, err := os.ReadDir(filepath.Join(dot, "content", "channel-media"))
	if err != nil {
		t.Fatal(err)
	}
	perStore := truth["legacy"].(map[string]any)["per_store"].(map[string]any)
	if want := len(perStore[filepath.Join(dot, "channel-media")].(map[string]any)["files"].([]any)); len(files) != want {
		t.Errorf("%d files moved, want %d", len(files), want)
	}
	conn, err := sql.Open("sqlite", "file:"+up["db"].(string)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var old int
	if err := conn.QueryRow(`select count(*) from chat_messages where instr(content, ?) > 0`, dot+"/channel-media/").Scan(&old); err != nil {
		t.Fatal(err)
	}
	if old == 0 {
		t.Error("the rows were rewritten: none names the pre-upgrade path")
	}
	for _, u := range up["uploads"].([]Upload) {
		var n int
		if err := conn.QueryRow(`select count(*) from chat_messages where instr(content, ?) > 0`, `"path": "`+u.Path+`"`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if (n == 1) != u.Referenced {
			t.Errorf("upload %s: %d rows name it, referenced = %v", u.Key, n, u.Referenced)
		}
		for _, f := range []string{u.Key, u.Sidecar} {
			if _, err := os.Stat(filepath.Join(dot, "content", "chat-media", f)); err != nil {
				t.Error(err)
			}
		}
	}
}
