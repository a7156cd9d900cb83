package verify_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

var testLocks sync.Map // store.Store → *storelock.Lock

// lockOf is the store's lock, taken on first use in a test and released when
// that test ends.
func lockOf(t testing.TB, st store.Store) *storelock.Lock {
	t.Helper()
	if l, ok := testLocks.Load(st); ok {
		return l.(*storelock.Lock)
	}
	l, err := storelock.Acquire(context.Background(), st, "test")
	if err != nil {
		t.Fatal(err)
	}
	testLocks.Store(st, l)
	t.Cleanup(func() {
		l.Release(context.Background())
		testLocks.Delete(st)
	})
	return l
}
