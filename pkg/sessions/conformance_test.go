package sessions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest/conformance"
)

// Every session source kind runs the session conformance suite
// (package sessionstest) unchanged. This file: folders of session files,
// as forge keeps them (JSON) and as a runtime appends its transcripts
// (JSON Lines).

func TestConformanceFiles(t *testing.T) {
	conformance.Run(t, filesFixture(".json"))
}

func TestConformanceJSONL(t *testing.T) {
	conformance.Run(t, filesFixture(".jsonl"))
}

// archived is how many units, the last ones, a folder fixture keeps in its
// archive subfolder.
const archived = 3

// unitName is where a folder or a bucket keeps unit i: the last ones below
// "archive/".
func unitName(i, n int, units []conformance.Unit, ext string) string {
	name := units[i].ID + ext
	if i >= n-archived {
		name = "archive/" + name
	}
	return name
}

// unitBytes is unit u in the shape a file named ext keeps it.
func unitBytes(u conformance.Unit, ext string) string {
	if ext == ".jsonl" {
		return u.JSONL
	}
	return u.JSON
}

// folderExclusion leaves out one top-level unit by its name and the
// archive folder, which is not entered: two entries excluded.
func folderExclusion(fx *conformance.Fixture, units []conformance.Unit, ext string) {
	fx.Exclude = []string{units[1].ID + ext, "archive"}
	fx.Excluded = []int{1}
	for i := len(units) - archived; i < len(units); i++ {
		fx.Excluded = append(fx.Excluded, i)
	}
	fx.ExcludedCount = 2
}

func filesFixture(ext string) conformance.Factory {
	return func(t *testing.T, units []conformance.Unit) *conformance.Fixture {
		dir := t.TempDir()
		fx := &conformance.Fixture{
			Spec:       dir,
			Counts:     sessions.Counts{Documents: int64(len(units))},
			Rewritable: true,
			Read: func(t testing.TB, p ref.Place) []byte {
				b, err := os.ReadFile(p.Document)
				if err != nil {
					return nil
				}
				return b
			},
			Write: func(t testing.TB, units map[ref.Place][]byte) {
				for p, b := range units {
					writeAsForge(t, p.Document, b)
				}
			},
		}
		for i, u := range units {
			path := filepath.Join(dir, filepath.FromSlash(unitName(i, len(units), units, ext)))
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			writeAsForge(t, path, []byte(unitBytes(u, ext)))
			fx.Places = append(fx.Places, ref.Place{Source: dir, Document: path})
		}
		folderExclusion(fx, units, ext)
		return fx
	}
}

// writeAsForge replaces path as forge saves a session: a temporary file
// beside it, renamed over it.
func writeAsForge(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
