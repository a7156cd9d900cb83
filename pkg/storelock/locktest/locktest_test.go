package locktest_test

import (
	"context"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
)

func TestOf(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t.Run("takes", func(t *testing.T) {
		l := locktest.Of(t, st)
		if l.Held() != nil || locktest.Of(t, st) != l {
			t.Fatal("not one held lock per store")
		}
	})
	// Released when the test that took it ended.
	if err := storelock.Check(context.Background(), st); err != nil {
		t.Fatalf("the lock outlived its test: %v", err)
	}
}
