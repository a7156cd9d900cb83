package storelock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
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

// TestLockWhoseAnswerWasLost: the service took the lock, its answer was lost,
// and the SDK's retry of the conditional write found the lock there. The run
// knows the lock as its own: it holds it and releases it, instead of refusing
// itself and leaving a lock on a bucket that no other host would break.
func TestLockWhoseAnswerWasLost(t *testing.T) {
	ctx := context.Background()
	lost, wrap := storetest.NewLostAnswer(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+store.InternalDir+"/"+storelock.Name)
	})
	srv := storetest.StartS3(t, wrap)
	st, err := store.Open(ctx, srv.Bucket(t, "lost-answer"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := storelock.Acquire(ctx, st, "gc")
	if err != nil {
		t.Fatalf("Acquire after a lost answer: %v", err)
	}
	if lost.Lost() != 1 {
		t.Fatal("no answer was lost: the case tests nothing")
	}
	if _, err := storelock.Acquire(ctx, st, "gc"); !errors.Is(err, storelock.ErrLocked) {
		t.Fatalf("a second run of the same command in the same process: %v, want locked", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := storelock.Check(ctx, st); err != nil {
		t.Fatalf("after Release: %v", err)
	}
}

// TestLockWrittenBeforeAFailedPut: the service took the lock, its answer
// was lost, and every retry failed. Acquire fails, and leaves no lock: the
// one the service wrote is this run's, and would otherwise refuse every later
// run (on a bucket, no other host breaks it).
func TestLockWrittenBeforeAFailedPut(t *testing.T) {
	ctx := context.Background()
	lockPath := "/" + store.InternalDir + "/" + storelock.Name
	puts := 0
	srv := storetest.StartS3(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, lockPath) {
				if puts++; puts == 1 {
					next.ServeHTTP(httptest.NewRecorder(), r) // written, and the answer lost
				}
				panic(http.ErrAbortHandler) // the retries fail
			}
			next.ServeHTTP(w, r)
		})
	})
	st, err := store.Open(ctx, srv.Bucket(t, "failed-put"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := storelock.Acquire(ctx, st, "gc"); err == nil || errors.Is(err, storelock.ErrLocked) {
		t.Fatalf("Acquire with every put failing: %v, want the put's error", err)
	}
	if puts < 2 {
		t.Fatalf("%d puts: the SDK did not retry, the case tests nothing", puts)
	}
	if err := storelock.Check(ctx, st); err != nil {
		t.Fatalf("the lock written before the error is left: %v", err)
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
			writeLock(t, st, storelock.Holder{Command: "gc", PID: cmd.Process.Pid, Host: host, Started: time.Now(), PIDNamespace: storelock.OwnPIDNamespace})
			l, err := storelock.Acquire(ctx, st, "gc")
			if err != nil {
				t.Fatalf("stale lock not broken: %v", err)
			}
			l.Release(ctx)
		})
	}
}

// TestLockFromAnotherPIDNamespaceIsNeverBroken: a run in a container that
// shares the host's name but not its processes (a pod on the host network,
// docker --uts=host) cannot see the holder's process; its lock is held, not
// stale, however free its pid is here. So is a lock that records no
// namespace, on a system that has them: the run that wrote it may be in
// another. Before, such a run broke the live lock and swept beside it.
func TestLockFromAnotherPIDNamespaceIsNeverBroken(t *testing.T) {
	ctx := context.Background()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no 'true' to spawn:", err)
	}
	host, _ := os.Hostname()
	others := []string{"pid:[4026532999]"}
	if storelock.OwnPIDNamespace != "" {
		others = append(others, "")
	}
	for name, st := range stores(t) {
		for _, ns := range others {
			t.Run(fmt.Sprintf("%s/%q", name, ns), func(t *testing.T) {
				writeLock(t, st, storelock.Holder{Command: "gc", PID: cmd.Process.Pid, Host: host, Started: time.Now(), PIDNamespace: ns})
				_, err := storelock.Acquire(ctx, st, "gc")
				if !errors.Is(err, storelock.ErrLocked) {
					t.Fatalf("Acquire = %v, want the lock of a process in namespace %q held", err, ns)
				}
			})
		}
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

// Shards of one split run side by side; a shard excludes a second run of
// itself, the whole store, and shards of another split, in both orders.
func TestShardLocks(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := func(k, n int) shard.Spec { return shard.Spec{K: k, N: n} }
			a, err := storelock.AcquireShard(ctx, st, "gc", s(0, 4))
			if err != nil {
				t.Fatal(err)
			}
			b, err := storelock.AcquireShard(ctx, st, "gc", s(1, 4))
			if err != nil {
				t.Fatalf("another shard of the same split: %v", err)
			}
			for _, c := range []struct {
				spec shard.Spec
				file string
			}{
				{s(0, 4), "lock.shard-0-of-4"},
				{shard.All, "lock.shard-"},
				{s(0, 8), "lock.shard-"},
			} {
				if err := storelock.CheckShard(ctx, st, c.spec); !isLockedBy(err, c.file) {
					t.Errorf("check %q while 0/4 and 1/4 run: %v, want locked by %s…", c.spec, err, c.file)
				}
				if _, err := storelock.AcquireShard(ctx, st, "gc", c.spec); !isLockedBy(err, c.file) {
					t.Errorf("acquire %q while 0/4 and 1/4 run: %v, want locked by %s…", c.spec, err, c.file)
				}
			}
			// The refused runs left nothing behind: once the shards are
			// done, the whole store can be locked.
			a.Release(ctx)
			b.Release(ctx)
			whole, err := storelock.Acquire(ctx, st, "migrate")
			if err != nil {
				t.Fatalf("after the shards: %v", err)
			}
			if _, err := storelock.AcquireShard(ctx, st, "gc", s(2, 4)); !isLockedBy(err, storelock.Name) {
				t.Errorf("a shard while the whole store is locked: %v", err)
			}
			if err := storelock.CheckShard(ctx, st, s(2, 4)); !isLockedBy(err, storelock.Name) {
				t.Errorf("check a shard while the whole store is locked: %v", err)
			}
			whole.Release(ctx)
			var left []string
			mustInternal(t, st).ListInternal(ctx, "lock", func(e store.Entry) error {
				left = append(left, e.Key)
				return nil
			})
			if len(left) != 0 {
				t.Errorf("lock files left: %v", left)
			}
		})
	}
}

// A shard's lock whose process is gone does not exclude anyone.
func TestStaleShardLockIsIgnored(t *testing.T) {
	ctx := context.Background()
	st := stores(t)["local"]
	host, _ := os.Hostname()
	body, _ := json.Marshal(storelock.Holder{Command: "gc", PID: 1 << 30, Host: host, PIDNamespace: storelock.OwnPIDNamespace})
	if err := mustInternal(t, st).PutInternal(ctx, "lock.shard-3-of-16", bytes.NewReader(body), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := storelock.Acquire(ctx, st, "gc")
	if err != nil {
		t.Fatalf("whole store beside a stale shard lock: %v", err)
	}
	l.Release(ctx)
	l, err = storelock.AcquireShard(ctx, st, "gc", shard.Spec{K: 3, N: 16})
	if err != nil {
		t.Fatalf("the stale shard itself: %v", err)
	}
	l.Release(ctx)
}

func isLockedBy(err error, filePrefix string) bool {
	var le *storelock.LockedError
	return errors.As(err, &le) && strings.HasPrefix(le.File, filePrefix)
}

// TestBreakingAStaleLockAtOnce: runs that find the same stale lock at the
// same instant never both hold the store. Each reads the stale lock, reads it
// again and deletes it; without one breaker at a time a run could read it
// again just before another deleted it and put its own, then delete that new
// lock and put its own beside it: two sweeps on one store.
func TestBreakingAStaleLockAtOnce(t *testing.T) {
	ctx := context.Background()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no 'true' to spawn:", err)
	}
	host, _ := os.Hostname()
	gone := storelock.Holder{Command: "gc", PID: cmd.Process.Pid, Host: host, Started: time.Now(), PIDNamespace: storelock.OwnPIDNamespace}
	const runs, tries = 6, 60
	for name, st := range stores(t) {
		st := slowDelete{st, mustInternal(t, st)}
		t.Run(name, func(t *testing.T) {
			both, took := 0, 0
			for try := range tries {
				writeLock(t, st, gone)
				var holding atomic.Int32
				var overlap, held atomic.Int32
				start := make(chan struct{})
				var wg sync.WaitGroup
				for range runs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						l, err := storelock.Acquire(ctx, st, "gc")
						if err != nil {
							if !errors.Is(err, storelock.ErrLocked) {
								t.Errorf("try %d: %v", try, err)
							}
							return
						}
						held.Add(1)
						if holding.Add(1) > 1 {
							overlap.Add(1)
						}
						time.Sleep(2 * time.Millisecond)
						holding.Add(-1)
						l.Release(ctx)
					}()
				}
				close(start)
				wg.Wait()
				if overlap.Load() > 0 {
					both++
				}
				took += int(held.Load())
				// Whatever is left (a run's release that found another's
				// lock) goes before the next try.
				mustInternal(t, st).DeleteInternal(ctx, storelock.Name)
			}
			if took == 0 {
				t.Fatal("no run ever broke the stale lock: the case tests nothing")
			}
			if both > 0 {
				t.Fatalf("two runs held the store at once in %d of %d tries", both, tries)
			}
		})
	}
}

// slowDelete is a store whose internal deletes take a while, as a bucket's
// round trip does: the time between a breaker's second read and its delete
// in which another breaker reads the same stale lock.
type slowDelete struct {
	store.Store
	store.Internal
}

func (s slowDelete) DeleteInternal(ctx context.Context, name string) error {
	time.Sleep(time.Millisecond)
	return s.Internal.DeleteInternal(ctx, name)
}

// TestStaleClaimKeepsBoth: a run died while breaking a stale lock, leaving
// its claim. The next run removes neither file (breaking the claim would race
// as breaking the lock does) and names both, locked.
func TestStaleClaimKeepsBoth(t *testing.T) {
	ctx := context.Background()
	host, _ := os.Hostname()
	gone := goneHolder(t, host, "gc")
	breaker := goneHolder(t, host, "migrate")
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			in := mustInternal(t, st)
			writeLock(t, st, gone)
			lockRaw := readInternal(t, in, storelock.Name)
			claim := storelock.ClaimName(storelock.Name, lockRaw)
			claimRaw, _ := json.Marshal(breaker)
			if err := in.PutInternal(ctx, claim, bytes.NewReader(claimRaw), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := storelock.Check(ctx, st); !errors.Is(err, storelock.ErrLocked) {
				t.Fatalf("Check = %v, want locked: a dry run refuses where the run would", err)
			}
			_, err := storelock.Acquire(ctx, st, "gc")
			var le *storelock.LockedError
			if !errors.As(err, &le) || !errors.Is(err, storelock.ErrLocked) {
				t.Fatalf("Acquire = %v, want a LockedError", err)
			}
			if le.File != storelock.Name || le.Claim != claim || le.Breaker.PID != breaker.PID || le.Holder.PID != gone.PID {
				t.Fatalf("error names %+v", le)
			}
			if got := readInternal(t, in, storelock.Name); !bytes.Equal(got, lockRaw) {
				t.Fatalf("stale lock changed: %s", got)
			}
			if got := readInternal(t, in, claim); !bytes.Equal(got, claimRaw) {
				t.Fatalf("claim changed: %s", got)
			}
		})
	}
}

// TestStaleClaimOnALockGoneMeanwhile: the claim's run died after it removed
// the stale lock. A run that finds the lock gone takes it, and the claim,
// which guards nothing now, goes.
func TestStaleClaimOnALockGoneMeanwhile(t *testing.T) {
	ctx := context.Background()
	host, _ := os.Hostname()
	gone := goneHolder(t, host, "gc")
	breaker := goneHolder(t, host, "migrate")
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			in := mustInternal(t, st)
			writeLock(t, st, gone)
			claim := storelock.ClaimName(storelock.Name, readInternal(t, in, storelock.Name))
			claimRaw, _ := json.Marshal(breaker)
			if err := in.PutInternal(ctx, claim, bytes.NewReader(claimRaw), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			// The lock goes the moment the run reads the claim: the dead
			// breaker's delete landing just then.
			wrapped := deleteOnOpen{st, in, claim, storelock.Name}
			l, err := storelock.Acquire(ctx, wrapped, "gc")
			if err != nil {
				t.Fatalf("Acquire = %v, want the lock", err)
			}
			defer l.Release(ctx)
			if _, err := in.OpenInternal(ctx, claim); !errors.Is(err, store.ErrNotExist) {
				t.Fatalf("claim still there (%v)", err)
			}
			var h storelock.Holder
			if err := json.Unmarshal(readInternal(t, in, storelock.Name), &h); err != nil || h.PID != os.Getpid() {
				t.Fatalf("lock holds %+v (%v), want this run", h, err)
			}
		})
	}
}

// goneHolder is a holder whose process has exited.
func goneHolder(t *testing.T, host, command string) storelock.Holder {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no 'true' to spawn:", err)
	}
	return storelock.Holder{Command: command, PID: cmd.Process.Pid, Host: host, Started: time.Now().Add(-time.Hour).UTC().Truncate(time.Second), PIDNamespace: storelock.OwnPIDNamespace}
}

func readInternal(t *testing.T, in store.Internal, name string) []byte {
	t.Helper()
	rc, err := in.OpenInternal(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	raw, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// deleteOnOpen deletes the internal file gone when file is opened.
type deleteOnOpen struct {
	store.Store
	store.Internal
	file, gone string
}

func (d deleteOnOpen) OpenInternal(ctx context.Context, name string) (io.ReadCloser, error) {
	if name == d.file {
		_ = d.Internal.DeleteInternal(ctx, d.gone)
	}
	return d.Internal.OpenInternal(ctx, name)
}
