package trash_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
