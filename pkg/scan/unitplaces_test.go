package scan_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
)

// With UnitPlaces, OnReference gets every reference it gets without, each
// at the same document or row, only without the place inside it: what an
// attribution to session units reads (report, forget) must not change.
func TestUnitPlacesKeepTheUnit(t *testing.T) {
	ctx := context.Background()
	root, names := forgeDir(t, "a", "b", "c")
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	writeSession(t, root, "t-1.json", fmt.Sprintf(`{"task_id": "t-1", "messages": [{"role": "user", "parts": [{"media": {"uri": %q}}, {"text": "see .forge/files/inbound/%s"}]},
		{"role": "tool", "tool_calls": [{"function": {"arguments": "{\"path\": \"%s\"}"}}]}]}`, filepath.Join(inbound, names[0]), names[1], filepath.Join(inbound, names[2])))
	writeSession(t, root, "t-2.json", fmt.Sprintf(`{"task_id": "t-2", "messages": [{"role": "user", "parts": [{"media": {"uri": %q}}]}]}`, filepath.Join(inbound, names[1])))
	dbPath := filepath.Join(t.TempDir(), "coffer.db")
	db, err := sql.Open("sqlite", "file:"+dbPath)
	must(t, err)
	_, err = db.Exec(`CREATE TABLE chat_messages (id TEXT PRIMARY KEY, seq INTEGER, content TEXT)`)
	must(t, err)
	_, err = db.Exec(`INSERT INTO chat_messages VALUES ('m-1', 1, ?), ('m-2', 2, ?)`,
		fmt.Sprintf(`[{"type": "attachment", "path": %q}]`, filepath.Join(inbound, names[2])),
		fmt.Sprintf(`[{"type": "text", "text": "x"}, {"type": "attachment", "path": %q}]`, filepath.Join(inbound, names[0])))
	must(t, err)
	must(t, db.Close())

	files, err := sessions.Open(ctx, filepath.Join(root, ".forge", "sessions"), sessions.Options{})
	must(t, err)
	defer files.Close()
	rows, err := sessions.Open(ctx, "sqlite:"+dbPath, sessions.Options{})
	must(t, err)
	defer rows.Close()

	found := func(units bool) []string {
		var got []string
		rep, err := scan.Run(ctx, scan.Options{
			Sources: []sessions.Source{files, rows}, CountOnly: true, UnitPlaces: units,
			OnReference: func(f scan.Found) {
				p := f.Place
				if units {
					if p.Pointer != "" || p.Offset != -1 {
						t.Errorf("%s: unit place %+v has a place inside", f.Ref.Raw, p)
					}
				} else {
					if p.Pointer == "" {
						t.Errorf("%s: full place %+v has no pointer", f.Ref.Raw, p)
					}
					p.Pointer, p.Offset = "", -1
				}
				got = append(got, fmt.Sprintf("%s|%s|%s|%s|%s|%s", p.Source, p.Document, p.Table, p.Key, p.Column, f.Ref.Raw))
			},
		})
		must(t, err)
		if !rep.Complete {
			t.Fatalf("incomplete: %+v", rep.Problems)
		}
		slices.Sort(got)
		return got
	}
	full, units := found(false), found(true)
	if len(full) != 6 {
		t.Fatalf("the fixture names 6 references, the scan found %d: %q", len(full), full)
	}
	if !slices.Equal(full, units) {
		t.Errorf("units differ:\nfull  %q\nunits %q", full, units)
	}
}
