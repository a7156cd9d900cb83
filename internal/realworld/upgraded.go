package realworld

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Upload is one web upload CofferUpgraded adds to content/chat-media.
type Upload struct {
	Key        string // the upload's file name, "<id>.<ext>"
	Sidecar    string // its metadata file beside it, "<id>.json"
	Path       string // the upload's absolute path
	Referenced bool   // whether a row names it
}

// CofferUpgraded is the Coffer home after coffer's own upgrade:
// .coffer/channel-media moved to .coffer/content/channel-media and coffer.db
// (with its -wal and -shm, when present) renamed to runs.db, the rows not
// rewritten, so they still name the pre-upgrade paths. It adds what the
// upgraded coffer writes for web uploads: content/chat-media with two uploads
// and their <id>.json sidecars, one of them named by a message row written the
// way coffer writes rows.
//
// The truth is Coffer's, plus truth["upgraded"]: "db" (runs.db), "stores" (the
// two store directories), "moved_from" (store → its pre-upgrade directory)
// and "uploads" ([]Upload).
func CofferUpgraded(t testing.TB) (home string, truth map[string]any) {
	t.Helper()
	home, truth = Coffer(t)
	up, err := upgradeCoffer(home)
	if err != nil {
		t.Fatalf("realworld: upgrading the coffer home: %v", err)
	}
	truth["upgraded"] = up
	return home, truth
}

func upgradeCoffer(home string) (map[string]any, error) {
	dot := filepath.Join(home, ".coffer")
	content := filepath.Join(dot, "content")
	channel := filepath.Join(content, "channel-media")
	chat := filepath.Join(content, "chat-media")
	if err := os.MkdirAll(content, 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(filepath.Join(dot, "channel-media"), channel); err != nil {
		return nil, err
	}
	db := filepath.Join(dot, "runs.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		err := os.Rename(filepath.Join(dot, "coffer.db"+suffix), db+suffix)
		if err != nil && !(suffix != "" && os.IsNotExist(err)) {
			return nil, err
		}
	}
	if err := os.MkdirAll(chat, 0o755); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	uploads := []struct {
		id, ext, filename, mime string
		body                    []byte
		referenced              bool
	}{
		{"3f1c9a7e5b2d4e8f9a0b1c2d3e4f5a6b", ".png", "whiteboard.png", "image/png", []byte("\x89PNG\r\n\x1a\nwhiteboard"), true},
		{"8e7d6c5b4a3948271605f4e3d2c1b0a9", ".pdf", "draft (old).pdf", "application/pdf", []byte("%PDF-1.4\nnever sent\n"), false},
	}
	var out []Upload
	for _, u := range uploads {
		key := u.id + u.ext
		p := filepath.Join(chat, key)
		if err := os.WriteFile(p, u.body, 0o644); err != nil {
			return nil, err
		}
		meta := pyDumps([][2]any{
			{"id", u.id}, {"filename", u.filename}, {"mime", u.mime},
			{"size", len(u.body)}, {"created_at", now.Format("2006-01-02T15:04:05.000000+00:00")},
		})
		if err := os.WriteFile(filepath.Join(chat, u.id+".json"), []byte(meta), 0o644); err != nil {
			return nil, err
		}
		out = append(out, Upload{Key: key, Sidecar: u.id + ".json", Path: p, Referenced: u.referenced})
		if u.referenced {
			if err := addAttachmentRow(db, "c0ffee00aa5e4d1b9c3f2a1b0c9d8e7f", p, u.mime, u.filename, now); err != nil {
				return nil, fmt.Errorf("%s: %w", db, err)
			}
		}
	}
	return map[string]any{
		"db":         db,
		"stores":     []string{channel, chat},
		"moved_from": map[string]string{channel: filepath.Join(dot, "channel-media")},
		"uploads":    out,
	}, nil
}

// AddCofferDownload adds to a coffer home what coffer's media download does
// for a user's file: its bytes under .coffer/channel-media as
// uuid4().hex + the file's suffix, whatever it is (file mode 0600, modified
// age ago), and a user message (id) whose attachment block names it. It
// returns the file's path.
func AddCofferDownload(home, id, hexName, suffix, filename string, content []byte, age time.Duration) (string, error) {
	p := filepath.Join(home, ".coffer", "channel-media", hexName+suffix)
	if err := os.WriteFile(p, content, 0o600); err != nil {
		return "", err
	}
	now := time.Now()
	if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
		return "", err
	}
	return p, addAttachmentRow(filepath.Join(home, ".coffer", "coffer.db"), id, p, "application/octet-stream", filename, now)
}

// addAttachmentRow appends a user message with an attachment block to the most
// recently updated conversation, as coffer's web chat does when a user sends
// an upload.
func addAttachmentRow(db, id, path, mime, filename string, now time.Time) error {
	conn, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	var conv string
	var seq int
	err = conn.QueryRow(`select c.id, coalesce(max(m.seq), -1) + 1 from conversations c
		left join chat_messages m on m.conversation_id = c.id
		group by c.id order by c.updated_at desc, c.id limit 1`).Scan(&conv, &seq)
	if err != nil {
		return err
	}
	blocks := "[" + pyDumps([][2]any{{"type", "text"}, {"text", "what is on this whiteboard?"}}) + ", " +
		pyDumps([][2]any{{"type", "attachment"}, {"path", path}, {"mime", mime}, {"filename", filename}}) + "]"
	stamp := now.Format("2006-01-02 15:04:05.000000")
	if _, err := conn.Exec(`insert into chat_messages (id, conversation_id, seq, role, content, status, created_at)
		values (?, ?, ?, 'user', ?, 'complete', ?)`, id, conv, seq, blocks, stamp); err != nil {
		return err
	}
	if _, err := conn.Exec(`update conversations set updated_at = ? where id = ?`, stamp, conv); err != nil {
		return err
	}
	if _, err := conn.Exec(`pragma wal_checkpoint(TRUNCATE)`); err != nil {
		return err
	}
	return conn.Close()
}

// pyDumps writes an object the way Python's json.dumps does with its defaults:
// members in the given order, separators ", " and ": ", ensure_ascii.
func pyDumps(members [][2]any) string {
	var b strings.Builder
	b.WriteString("{")
	for i, m := range members {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"` + pyJSONContent(m[0].(string)) + `": `)
		switch v := m[1].(type) {
		case string:
			b.WriteString(`"` + pyJSONContent(v) + `"`)
		default:
			j, _ := json.Marshal(v)
			b.Write(j)
		}
	}
	b.WriteString("}")
	return b.String()
}
