package trash_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
)

// AtDir as each use needs the folder: a plan of a folder not there yet is the
// store itself; restore, purge and runs need it there; a run that moves
// blobs makes it and claims it, after which every use takes it.
func TestAtDir(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	if err := os.Mkdir(filepath.Join(parent, "inbound"), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(parent, "inbound"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir := filepath.Join(parent, "trash")
	if got, err := trash.AtDir(st, dir, trash.Plan); err != nil || got != st {
		t.Errorf("Plan of a missing folder = %v, %v; want the store itself", got, err)
	}
	if _, err := trash.AtDir(st, dir, trash.Owned); !errors.Is(err, trash.ErrNoTrashFolder) {
		t.Errorf("Owned of a missing folder = %v, want ErrNoTrashFolder", err)
	}
	ts, err := trash.AtDir(st, dir, trash.MoveInto)
	if err != nil || ts == st {
		t.Fatalf("MoveInto = %v, %v; want the trash folder's store", ts, err)
	}
	ts.Close()
	for _, use := range []trash.Use{trash.Plan, trash.Owned} {
		ts, err := trash.AtDir(st, dir, use)
		if err != nil || ts == st {
			t.Errorf("use %d of the claimed folder = %v, %v", use, ts, err)
			continue
		}
		ts.Close()
	}
	var pe *trash.PlaceError
	if _, err := trash.AtDir(st, filepath.Join(parent, "inbound", "inside"), trash.MoveInto); !errors.As(err, &pe) {
		t.Errorf("a folder inside the store = %v, want a *PlaceError", err)
	}
}
