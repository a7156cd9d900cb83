// Command tosqlite copies the sessions of a forge work directory that
// bench/gensessions wrote into a SQLite database laid out as coffer's
// (conversations, chat_messages with a JSON array of blocks in content, WAL
// mode), spelled as Python's json.dumps writes it (", " and ": ", non-ASCII
// as \uXXXX: retaintest.Quote with PythonASCII), so that the scale benchmark
// reads the same references from JSON files and from SQLite.
//
//	go run ./bench/tosqlite -sessions DIR/.forge/sessions -db DIR/coffer.db
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite"

	"github.com/mediactl/mediactl/pkg/retain/retaintest"
)

type session struct {
	TaskID    string `json:"task_id"`
	CreatedAt string `json:"created_at"`
	Messages  []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Parts   []struct {
			Type  string `json:"type"`
			Text  string `json:"text"`
			Media *struct {
				MIMEType string `json:"mimeType"`
				URI      string `json:"uri"`
			} `json:"media"`
		} `json:"parts"`
	} `json:"messages"`
}

func main() {
	dir := flag.String("sessions", "", "forge sessions folder to read")
	db := flag.String("db", "", "SQLite database to create")
	flag.Parse()
	if *dir == "" || *db == "" {
		log.Fatal("tosqlite: give -sessions and -db")
	}
	os.Remove(*db)
	conn, err := sql.Open("sqlite", *db)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	for _, q := range []string{
		"PRAGMA journal_mode=WAL",
		"CREATE TABLE conversations (id TEXT PRIMARY KEY, agent_key TEXT, title TEXT, model_id TEXT, created_at TEXT, updated_at TEXT)",
		"CREATE TABLE chat_messages (id TEXT PRIMARY KEY, conversation_id TEXT, seq INTEGER, role TEXT, content TEXT, status TEXT, model_id TEXT, prompt_tokens INT, completion_tokens INT, created_at TEXT)",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			log.Fatal(err)
		}
	}
	names, err := filepath.Glob(filepath.Join(*dir, "*.json"))
	if err != nil {
		log.Fatal(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	conv, _ := tx.PrepareContext(ctx, "INSERT INTO conversations VALUES (?, 'default', ?, 'gpt-4o', ?, ?)")
	msg, _ := tx.PrepareContext(ctx, "INSERT INTO chat_messages VALUES (?, ?, ?, ?, ?, 'complete', 'gpt-4o', 0, 0, ?)")
	rows := 0
	for i, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			log.Fatal(err)
		}
		var s session
		if err := json.Unmarshal(raw, &s); err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		id := strings.TrimSuffix(filepath.Base(name), ".json")
		if _, err := conv.ExecContext(ctx, id, "conversation "+id, s.CreatedAt, s.CreatedAt); err != nil {
			log.Fatal(err)
		}
		for seq, m := range s.Messages {
			var blocks []string
			blocks = append(blocks, `{"type": "text", "text": `+retaintest.Quote(m.Content, retaintest.PythonASCII)+`}`)
			for _, p := range m.Parts {
				if p.Media == nil {
					continue
				}
				blocks = append(blocks, `{"type": "attachment", "path": `+retaintest.Quote(p.Media.URI, retaintest.PythonASCII)+`, "mime": `+retaintest.Quote(p.Media.MIMEType, retaintest.PythonASCII)+`, "filename": `+retaintest.Quote(fmt.Sprintf("IMG_%04d.png", len(blocks)), retaintest.PythonASCII)+`}`)
			}
			if _, err := msg.ExecContext(ctx, fmt.Sprintf("%s-%d", id, seq), id, seq, m.Role, "["+strings.Join(blocks, ", ")+"]", s.CreatedAt); err != nil {
				log.Fatal(err)
			}
			rows++
		}
		if i%500 == 499 {
			if err := tx.Commit(); err != nil {
				log.Fatal(err)
			}
			if tx, err = conn.BeginTx(ctx, nil); err != nil {
				log.Fatal(err)
			}
			conv, _ = tx.PrepareContext(ctx, "INSERT INTO conversations VALUES (?, 'default', ?, 'gpt-4o', ?, ?)")
			msg, _ = tx.PrepareContext(ctx, "INSERT INTO chat_messages VALUES (?, ?, ?, ?, ?, 'complete', 'gpt-4o', 0, 0, ?)")
		}
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote %d conversations, %d messages to %s\n", len(names), rows, *db)
}
