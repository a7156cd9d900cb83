package storelock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// Refused turns a lock another run holds into a refusal with that run
// named, and leaves every other error to the caller.
func TestRefused(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	held, err := storelock.Acquire(ctx, st, "mediactl gc")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	_, err = storelock.Acquire(ctx, st, "mediactl migrate")
	var locked *storelock.LockedError
	o := outcome.Found
	if !storelock.Refused(err, &locked, &o) || locked == nil || o != outcome.Refused {
		t.Errorf("Refused(%v) = locked %v, outcome %s; want the holder and refused", err, locked, o)
	}
	locked, o = nil, outcome.OK
	if storelock.Refused(errors.New("disk on fire"), &locked, &o) || locked != nil || o != outcome.OK {
		t.Error("another error was taken for a held lock")
	}
	if storelock.Refused(nil, &locked, &o) || o != outcome.OK {
		t.Error("no error was taken for a held lock")
	}
}
