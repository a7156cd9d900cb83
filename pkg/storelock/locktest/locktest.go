// Package locktest gives tests the store lock that the functions changing a
// store take: one per store, taken on first use and released when the test
// that took it ends.
package locktest

import (
	"context"
	"sync"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

var held sync.Map // store.Store → *storelock.Lock

// Of is st's lock for the test t, taken on first use (by t or a test before
// it that has not ended) and released when the test that took it ends.
func Of(t testing.TB, st store.Store) *storelock.Lock {
	t.Helper()
	if l, ok := held.Load(st); ok {
		return l.(*storelock.Lock)
	}
	l, err := storelock.Acquire(context.Background(), st, "test")
	if err != nil {
		t.Fatal(err)
	}
	held.Store(st, l)
	t.Cleanup(func() {
		l.Release(context.Background())
		held.Delete(st)
	})
	return l
}
