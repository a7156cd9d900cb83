package trash_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync/atomic"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// name is a content-addressed blob name, as forge writes it.
func name(content string) string {
	d := sha256.Sum256([]byte(content))
	return hex.EncodeToString(d[:]) + ".png"
}

// sweepBesideWriter runs a sweep of items while a writer saves blobs again,
// and fails the test for every blob the writer saved that is not in the
// store afterwards: kept reports why key is not there as the writer saved
// it, nil when it is. The writer runs until done is set and then sends the
// keys it saved on saved.
func sweepBesideWriter(t *testing.T, st store.Store, items trash.List, opts trash.Options, done *atomic.Bool, saved <-chan []string, kept func(key string) error) *trash.Result {
	t.Helper()
	res, err := trash.Move(context.Background(), locktest.Of(t, st), items, opts)
	done.Store(true)
	resaved := <-saved
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	lost := 0
	for _, k := range resaved {
		if err := kept(k); err != nil {
			lost++
			if lost <= 5 {
				t.Errorf("%s, saved again during the sweep: %v", k, err)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of the %d blobs saved again during the sweep are lost", lost, len(resaved))
	}
	t.Logf("%d blobs saved again by the writer during the sweep", len(resaved))
	return res
}
