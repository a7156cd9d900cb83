package trash_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// TestDeletedRunOfAKindNotRestored: a bucket's deletes for good with a log
// are recorded batch by batch (every blob deleted, with its size); gc
// restore of a run whose service keeps its blobs by soft delete, which it
// does not restore, is refused with the kind, changes nothing and keeps the
// record; DropDeleted removes it.
func TestDeletedRunOfAKindNotRestored(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "mem://")
	must(t, err)
	defer st.Close()
	var items trash.List
	for _, k := range []string{"a.png", "b/c.png"} {
		must(t, st.Put(ctx, k, strings.NewReader(k), store.PutOptions{}))
		e, err := st.Stat(ctx, k)
		must(t, err)
		items = append(items, trash.Item{Key: k, Size: e.Size, ModTime: e.ModTime})
	}
	l := locktest.Of(t, st)
	log, err := trash.StartDeleted(ctx, l, trash.DeletedOptions{Recovery: store.Recovery{Kind: store.RecoveryGCSSoftDelete, Retention: 7 * 24 * time.Hour}})
	must(t, err)
	res, err := trash.Move(ctx, l, items, trash.Options{NoTrash: true, Log: log})
	must(t, err)
	if res.Deleted != 2 || log.Recorded() != 2 {
		t.Fatalf("deleted %d, recorded %d; want 2 and 2", res.Deleted, log.Recorded())
	}
	runs, err := trash.Deleteds(ctx, st)
	must(t, err)
	if len(runs) != 1 || runs[0].Run != log.Run() || runs[0].Blobs != 2 || runs[0].Bytes != int64(len("a.png")+len("b/c.png")) ||
		runs[0].Header.Recovery != store.RecoveryGCSSoftDelete || runs[0].Header.KeptUntil.IsZero() {
		t.Fatalf("deleted runs %+v", runs)
	}
	// Listed nowhere else: no trash run, no mark run.
	if tr, _ := trash.Runs(ctx, st); len(tr) != 0 {
		t.Errorf("trash runs %+v", tr)
	}

	must(t, l.Release(ctx)) // RunRestore takes the lock itself
	rr, err := trash.RunRestore(ctx, st, "test", log.Run())
	var unsupported *store.VersionRestoreUnsupportedError
	if !errors.As(err, &unsupported) || unsupported.Kind != store.RecoveryGCSSoftDelete || rr.Outcome != outcome.Incomplete {
		t.Fatalf("restore: %v, %v; want not implemented for gcs-soft-delete, incomplete", err, rr.Outcome)
	}
	if lines, err := trash.DeletedBlobs(ctx, st, log.Run()); err != nil || len(lines) != 2 {
		t.Fatalf("the record after a refused restore: %+v, %v", lines, err)
	}
	var n int64
	err = storelock.Do(ctx, st, "test", func(l *storelock.Lock) (err error) {
		n, err = trash.DropDeleted(ctx, l, log.Run())
		return err
	})
	if err != nil || n != 2 {
		t.Fatalf("DropDeleted = %d, %v", n, err)
	}
	if runs, _ := trash.Deleteds(ctx, st); len(runs) != 0 {
		t.Errorf("after the drop: %+v", runs)
	}
}
