package trash_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// TestRunKindsNeverShareAName: a trash run (Move), a mark run (MarkItems)
// and a deleted run (StartDeleted) of one bucket, started in one second
// (the same Now), get three names, whichever starts first: gc restore of a
// name finds one run. Each name is a later second than the one it skipped,
// and each run is listed as what it is.
func TestRunKindsNeverShareAName(t *testing.T) {
	now := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	kinds := []string{"trash", "mark", "deleted"}
	for _, order := range [][]string{
		{"trash", "mark", "deleted"},
		{"trash", "deleted", "mark"},
		{"mark", "trash", "deleted"},
		{"mark", "deleted", "trash"},
		{"deleted", "trash", "mark"},
		{"deleted", "mark", "trash"},
	} {
		t.Run(strings.Join(order, "-"), func(t *testing.T) {
			ctx := context.Background()
			st, err := store.Open(ctx, "mem://")
			must(t, err)
			defer st.Close()
			put := func(k string) trash.Item {
				must(t, st.Put(ctx, k, strings.NewReader("the bytes of "+k), store.PutOptions{}))
				e, err := st.Stat(ctx, k)
				must(t, err)
				return trash.Item{Key: k, Size: e.Size, ModTime: e.ModTime, ETag: e.ETag}
			}
			l := locktest.Of(t, st)
			names := map[string]string{} // kind → run
			for i, kind := range order {
				switch kind {
				case "trash":
					res, err := trash.Move(ctx, l, trash.List{put(fmt.Sprintf("trashed-%d.png", i))}, trash.Options{Now: now})
					must(t, err)
					if res.Trashed != 1 {
						t.Fatalf("trash run %+v", res)
					}
					names[kind] = res.Run
				case "mark":
					res, err := trash.MarkItems(ctx, l, trash.List{put(fmt.Sprintf("marked-%d.png", i))}, now, "")
					must(t, err)
					names[kind] = res.Run
				case "deleted":
					log, err := trash.StartDeleted(ctx, l, trash.DeletedOptions{Now: now, Recovery: store.Recovery{Kind: store.RecoveryS3Versioning}})
					must(t, err)
					names[kind] = log.Run()
				}
			}
			// The first run takes now's name; each later one the next free second.
			for i, kind := range order {
				if want := trash.RunID(now.Add(time.Duration(i) * time.Second)); names[kind] != want {
					t.Errorf("%s run (started %d of 3) named %s, want %s", kind, i+1, names[kind], want)
				}
			}
			for _, a := range kinds {
				for _, b := range kinds {
					if a < b && names[a] == names[b] {
						t.Errorf("the %s run and the %s run are both %s", a, b, names[a])
					}
				}
			}
			runs, err := trash.Runs(ctx, st)
			must(t, err)
			if len(runs) != 1 || runs[0].Run != names["trash"] {
				t.Errorf("trash runs %+v, want %s", runs, names["trash"])
			}
			marks, err := trash.Marks(ctx, st)
			must(t, err)
			if len(marks) != 1 || marks[0].Run != names["mark"] {
				t.Errorf("mark runs %+v, want %s", marks, names["mark"])
			}
			deleted, err := trash.Deleteds(ctx, st)
			must(t, err)
			if len(deleted) != 1 || deleted[0].Run != names["deleted"] {
				t.Errorf("deleted runs %+v, want %s", deleted, names["deleted"])
			}
		})
	}
}
