package migrate_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
)

// A temporary-looking name is copied once it has been left alone for
// TemporaryQuiet: coffer keeps a user's "notes.tmp" as "<uuid>.tmp", and a
// session names it. One modified more recently may be a write in progress
// and waits for a later run.
func TestCopyTemporaryLookingNames(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "9df6e7510c12409b9d0a061bc2b1b79a.tmp")
	must(t, os.WriteFile(old, []byte("the user's notes.tmp"), 0o600))
	long := time.Now().Add(-migrate.TemporaryQuiet - time.Minute)
	must(t, os.Chtimes(old, long, long))
	must(t, os.WriteFile(filepath.Join(dir, "upload.png.part"), []byte("half an upl"), 0o600))

	dst := openStore(t, "file://"+t.TempDir())
	rep := copyAll(t, migrate.Options{From: openStore(t, dir), To: dst, Journal: journal(t, filepath.Join(t.TempDir(), "j.jsonl"))})
	if rep.Copied != 1 || rep.Skipped != 1 || rep.SkippedList[0].Key != "upload.png.part" {
		t.Fatalf("copied %d, skipped %d %+v; want the quiet .tmp copied and the fresh .part skipped", rep.Copied, rep.Skipped, rep.SkippedList)
	}
	if got := string(readObject(t, dst, filepath.Base(old))); got != "the user's notes.tmp" {
		t.Errorf("the copy holds %q", got)
	}
}
