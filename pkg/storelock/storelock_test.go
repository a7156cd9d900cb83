package storelock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

func stores(t *testing.T) map[string]store.Store {
	ctx := context.Background()
	local, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mem, err := store.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close(); mem.Close() })
	return map[string]store.Store{"local": local, "mem": mem}
}

func TestOneHolderAtATime(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			l, err := storelock.Acquire(ctx, st, "gc")
			if err != nil {
				t.Fatal(err)
			}
			_, err = storelock.Acquire(ctx, st, "migrate")
			var le *storelock.LockedError
			if !errors.As(err, &le) || !errors.Is(err, storelock.ErrLocked) {
				t.Fatalf("second Acquire = %v, want LockedError", err)
			}
			if le.Holder.PID != os.Getpid() || le.Holder.Command != "gc" || !strings.Contains(err.Error(), "locked by gc (pid ") {
				t.Fatalf("holder %+v: %v", le.Holder, err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
			l2, err := storelock.Acquire(ctx, st, "migrate")
			if err != nil {
				t.Fatalf("Acquire after Release: %v", err)
			}
			l2.Release(ctx)
			// The lock file never shows up as a blob.
			st.List(ctx, "", func(e store.Entry) error { t.Errorf("listed %s", e.Key); return nil })
		})
	}
}

// writeLock plants a lock file as another run would have left it.
func writeLock(t *testing.T, st store.Store, h storelock.Holder) {
	body, _ := json.Marshal(h)
	if err := mustInternal(t, st).PutInternal(context.Background(), storelock.Name, strings.NewReader(string(body)), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestStaleLockOfAGoneProcessIsBroken(t *testing.T) {
	ctx := context.Background()
	// A real process that has exited: its pid is free.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no 'true' to spawn:", err)
	}
	host, _ := os.Hostname()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			writeLock(t, st, storelock.Holder{Command: "gc", PID: cmd.Process.Pid, Host: host, Started: time.Now()})
			l, err := storelock.Acquire(ctx, st, "gc")
			if err != nil {
				t.Fatalf("stale lock not broken: %v", err)
			}
			l.Release(ctx)
		})
	}
}

func TestLockFromAnotherHostIsNeverBroken(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			writeLock(t, st, storelock.Holder{Command: "gc", PID: 1, Host: "elsewhere.example", Started: time.Now()})
			_, err := storelock.Acquire(ctx, st, "gc")
			if !errors.Is(err, storelock.ErrLocked) || !strings.Contains(err.Error(), "on elsewhere.example") {
				t.Fatalf("Acquire = %v, want locked by elsewhere.example", err)
			}
		})
	}
}

func TestReleaseLeavesSomeoneElsesLock(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			l, err := storelock.Acquire(ctx, st, "gc")
			if err != nil {
				t.Fatal(err)
			}
			// Another run broke it and took it (say, an operator removed it by hand).
			mustInternal(t, st).DeleteInternal(ctx, storelock.Name)
			writeLock(t, st, storelock.Holder{Command: "other", PID: 1, Host: "elsewhere.example"})
			if err := l.Release(ctx); err == nil {
				t.Fatal("Release removed a lock that is not ours")
			}
			if _, err := storelock.Acquire(ctx, st, "gc"); !errors.Is(err, storelock.ErrLocked) {
				t.Fatalf("the other run's lock is gone: %v", err)
			}
		})
	}
}

func ExampleAcquire() {
	ctx := context.Background()
	st, _ := store.Open(ctx, "mem://")
	defer st.Close()
	l, err := storelock.Acquire(ctx, st, "gc")
	if err != nil {
		return
	}
	defer l.Release(ctx)
	_, err = storelock.Acquire(ctx, st, "gc")
	fmt.Println(errors.Is(err, storelock.ErrLocked))
	// Output: true
}

func TestHeldCheckAndReleaseAfterCancel(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if err := storelock.Check(ctx, st); err != nil {
				t.Fatalf("Check on a free store = %v", err)
			}
			l, err := storelock.Acquire(ctx, st, "gc")
			if err != nil {
				t.Fatal(err)
			}
			if l.Store() != st || l.Held() != nil {
				t.Fatalf("Store() = %v, Held() = %v", l.Store(), l.Held())
			}
			var le *storelock.LockedError
			if err := storelock.Check(ctx, st); !errors.As(err, &le) || le.Holder.Command != "gc" {
				t.Fatalf("Check on a held store = %v, want LockedError by gc", err)
			}
			// A signal cancels the run's context; the lock must still go.
			cancel()
			if err := l.Release(ctx); err != nil {
				t.Fatalf("Release with a cancelled context: %v", err)
			}
			if !errors.Is(l.Held(), storelock.ErrReleased) {
				t.Fatalf("Held() after Release = %v", l.Held())
			}
			if err := storelock.Check(context.Background(), st); err != nil {
				t.Fatalf("the lock file is left behind: %v", err)
			}
		})
	}
}

// mustInternal returns st's internal folder, where the lock lives.
func mustInternal(t *testing.T, st store.Store) store.Internal {
	t.Helper()
	in, ok := store.AsInternal(st)
	if !ok {
		t.Fatalf("%s keeps no internal folder", st.Location())
	}
	return in
}

func TestDo(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			err := storelock.Do(ctx, st, "restore", func(l *storelock.Lock) error {
				if l.Held() != nil || l.Store() != st {
					t.Fatal("fn got no held lock on the store")
				}
				// A second run meanwhile is refused with the holder.
				var le *storelock.LockedError
				if err := storelock.Do(context.Background(), st, "purge", func(*storelock.Lock) error {
					t.Fatal("fn ran while another run held the lock")
					return nil
				}); !errors.As(err, &le) || le.Holder.Command != "restore" {
					t.Fatalf("second Do = %v", err)
				}
				cancel() // interrupted while holding it
				return ctx.Err()
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Do = %v, want fn's error", err)
			}
			if err := storelock.Check(context.Background(), st); err != nil {
				t.Fatalf("the lock stayed: %v", err)
			}
		})
	}
}
