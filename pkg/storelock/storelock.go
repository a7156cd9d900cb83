// Package storelock keeps mediactl's commands that change a store from
// running at the same time on it: two gc runs sweeping one store, or a gc
// sweeping while a migrate deletes sources, could each act on a plan the other
// has made stale.
//
// The lock is one file, "lock", in the store's internal folder, created only
// if it does not exist (a hard link on a local store and a file:// bucket, a conditional write on a
// bucket), holding who took it: command, process id, host, start time and a
// random token of the run. A
// lock whose process is gone — same host, no such process — is stale and is
// broken; a lock held from another host is never broken automatically, since
// this host cannot tell whether that process still runs.
//
// A sharded run (one shard of N, see package shard) takes "lock.shard-K-of-N"
// instead: shards of one split run side by side, but a shard excludes a
// second run of the same shard, any unsharded mutating run, and the shards of
// a split into another N (whose parts overlap its own). Each run creates its
// own file first and then looks for the files that exclude it, giving up its
// own when it finds one: two runs that start at once may both give up, but
// never both go on.
package storelock

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

// Name is the lock file's name inside the store's internal folder, for a run
// on the whole store.
const Name = "lock"

// shardPrefix starts the name of every shard's lock file.
const shardPrefix = Name + ".shard-"

// fileName is the lock file a run on shard s takes: Name for the whole store.
func fileName(s shard.Spec) string {
	if !s.Sharded() {
		return Name
	}
	return fmt.Sprintf("%s%d-of-%d", shardPrefix, s.K, s.N)
}

// parseFileName is fileName's inverse for a shard's lock file.
func parseFileName(name string) (shard.Spec, bool) {
	rest, ok := strings.CutPrefix(name, shardPrefix)
	if !ok {
		return shard.All, false
	}
	k, n, ok := strings.Cut(rest, "-of-")
	if !ok {
		return shard.All, false
	}
	s, err := shard.Parse(k+"/"+n, nil)
	return s, err == nil && s.Sharded() && fileName(s) == name
}

// releaseTimeout bounds Release: a bucket that does not answer must not keep
// an interrupted run from exiting.
const releaseTimeout = 30 * time.Second

// Holder says who holds a lock.
type Holder struct {
	Command string    `json:"command"`
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	// Token is random, new for each Acquire: two runs whose other fields
	// are the same (pid 1 in two containers of one host name, started in
	// the same second) still write different locks, so a run can tell its
	// own lock from another's.
	Token string `json:"token,omitempty"`
	// PIDNamespace is the process id namespace PID is in (on Linux the
	// link /proc/self/ns/pid, "pid:[4026531836]"; "" where there is none):
	// a container that shares the host's name but not its processes (a
	// pod on the host's network, docker --uts=host) cannot see the holder,
	// and must not take it for gone.
	PIDNamespace string `json:"pid_ns,omitempty"`
}

func (h Holder) String() string {
	return fmt.Sprintf("%s (pid %d on %s, since %s)", h.Command, h.PID, h.Host, h.Started.Format(time.RFC3339))
}

// LockedError is returned by Acquire when another run holds the lock.
type LockedError struct {
	Store  string
	Holder Holder
	// File is the lock file that excludes this run, in the store's internal
	// folder: Name, or a shard's (see FileName).
	File string
	// Shard is the part of the store the holder works on ("" for all of it).
	Shard string
	// Claim, when set, is the file in the internal folder by which Breaker,
	// a run that is gone too, began to break File, a stale lock. Neither is
	// removed automatically (see breakStale).
	Claim   string
	Breaker Holder
}

func (e *LockedError) Error() string {
	if e.Claim != "" {
		return fmt.Sprintf("store %s is locked by %s, which is gone, and %s, which began to break that lock, is gone too", e.Store, e.Holder, e.Breaker)
	}
	if e.Shard != "" {
		return fmt.Sprintf("store %s is locked by %s on shard %s", e.Store, e.Holder, e.Shard)
	}
	return fmt.Sprintf("store %s is locked by %s", e.Store, e.Holder)
}

// Is makes errors.Is(err, ErrLocked) true for a LockedError.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// ErrLocked is matched by the error of Acquire when the store is locked.
var ErrLocked = errors.New("store is locked")

// Lock is a held lock. The functions that change a store (gc's sweep, the
// trash's restore and purge, migrate's delete-source, quarantine) take a
// *Lock instead of the store: the store they work on is [Lock.Store], so a
// path that changes a store without holding its lock does not compile.
type Lock struct {
	st       store.Store
	in       store.Internal
	name     string // the lock file
	shard    shard.Spec
	holder   Holder
	body     []byte
	released *atomic.Bool // shared with the views of Through
}

// Holder is who took the lock (this process).
func (l *Lock) Holder() Holder { return l.holder }

// Store is the store the lock is held on.
func (l *Lock) Store() store.Store { return l.st }

// Shard is the part of the store the lock is held for (shard.All for all).
func (l *Lock) Shard() shard.Spec { return l.shard }

// ErrReleased is returned by [Lock.Held] once the lock was released.
var ErrReleased = errors.New("the store lock was released")

// Held returns nil while the lock is held by this process, and an error
// wrapping ErrReleased after Release. Mutating functions call it first.
func (l *Lock) Held() error {
	if l == nil {
		return fmt.Errorf("storelock: no lock: %w", ErrReleased)
	}
	if l.released.Load() {
		return fmt.Errorf("storelock: %s: %w", l.st.Location(), ErrReleased)
	}
	return nil
}

// Acquire takes the store's lock for command, breaking a stale one. The store
// must keep an internal folder (every store of package store does).
func Acquire(ctx context.Context, st store.Store, command string) (*Lock, error) {
	return AcquireShard(ctx, st, command, shard.All)
}

// AcquireShard takes the lock of shard s of st for command (the whole
// store's lock for shard.All): it is refused while a run on the same shard,
// on the whole store, or on a shard of another split holds one.
func AcquireShard(ctx context.Context, st store.Store, command string, s shard.Spec) (*Lock, error) {
	in, ok := store.AsInternal(st)
	if !ok {
		return nil, fmt.Errorf("lock %s: this kind of store cannot hold a lock", st.Location())
	}
	host, _ := os.Hostname()
	h := Holder{Command: command, PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second), Token: rand.Text(), PIDNamespace: ownPIDNamespace}
	body, _ := json.Marshal(h)
	name := fileName(s)
	l := &Lock{st: st, in: in, name: name, shard: s, holder: h, body: body, released: new(atomic.Bool)}
	if err := create(ctx, st, in, name, body, host); err != nil {
		return nil, err
	}
	// Ours exists now; a run that starts later sees it. Then look for the
	// ones that started earlier.
	if err := excluded(ctx, st, in, s, host); err != nil {
		if rerr := l.Release(ctx); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		return nil, err
	}
	return l, nil
}

// create makes the lock file name, breaking a stale one in its way.
func create(ctx context.Context, st store.Store, in store.Internal, name string, body []byte, host string) error {
	for attempt := 0; ; attempt++ {
		err := in.PutInternal(ctx, name, bytes.NewReader(body), store.PutOptions{IfNotExist: true, ContentType: "application/json"})
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrExist) {
			return errors.Join(fmt.Errorf("lock %s: %w", st.Location(), err), dropOwn(ctx, in, name, body))
		}
		held, raw, rerr := read(ctx, in, name)
		if errors.Is(rerr, store.ErrNotExist) && attempt < 3 {
			continue // released meanwhile: try again
		}
		if rerr != nil {
			return fmt.Errorf("lock %s: the lock %s exists but cannot be read: %w", st.Location(), name, rerr)
		}
		if bytes.Equal(raw, body) {
			// Ours: the service wrote an earlier try of this very put and
			// its answer was lost (a reset connection, a timeout), so the
			// SDK's retry found the lock there. Without this the run would
			// refuse itself and leave its lock behind, which on a bucket
			// no other host breaks.
			return nil
		}
		if attempt >= 3 || !stale(held, host) {
			return lockedBy(st, name, held)
		}
		// Stale: its process is gone. Break it, then try to take it again.
		if err := breakStale(ctx, st, in, name, held, raw, body, host); err != nil {
			return err
		}
	}
}

// breakStale removes the stale lock name of held, which held raw when it was
// read, if it still does. Runs that find one stale lock at once take turns:
// each first writes a claim (claimName) only if none exists, and only the run
// that wrote it reads the lock again and deletes it, then removes the claim.
// Without the claim a run could read the stale lock again just before another
// deleted it and put its own, then delete that new lock and put its own beside
// it: two runs on one store.
//
// A run that finds the claim waits until the stale lock is gone or replaced
// (the lock it finds next is the breaker's, or none). A claim whose run is
// gone while the stale lock stays is never broken: breaking it would race in
// the same way. Both stay, and the LockedError names both files for the
// operator to remove.
func breakStale(ctx context.Context, st store.Store, in store.Internal, name string, held Holder, raw, body []byte, host string) error {
	claim := claimName(name, raw)
	for wait, tries := time.Duration(0), 0; ; {
		err := in.PutInternal(ctx, claim, bytes.NewReader(body), store.PutOptions{IfNotExist: true, ContentType: "application/json"})
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrExist) {
			return errors.Join(fmt.Errorf("lock %s: break stale lock of %s: %w", st.Location(), held, err), dropOwn(ctx, in, claim, body))
		}
		breaker, braw, rerr := read(ctx, in, claim)
		if errors.Is(rerr, store.ErrNotExist) {
			continue // done meanwhile: claim it in turn
		}
		if rerr != nil {
			return fmt.Errorf("lock %s: the claim %s on a stale lock exists but cannot be read: %w", st.Location(), claim, rerr)
		}
		if bytes.Equal(braw, body) {
			break // ours, written by a try whose answer was lost (see create)
		}
		// Once the stale lock is gone or replaced, the breaker is past its
		// delete: try to take the lock in turn (create) without waiting for
		// the claim to go. A claim left by a breaker that died then guards
		// nothing (it names the bytes of a lock that no longer exists) and
		// goes, if it still holds what was read.
		if _, again, err := read(ctx, in, name); errors.Is(err, store.ErrNotExist) || (err == nil && !bytes.Equal(again, raw)) {
			if stale(breaker, host) {
				_, _ = removeIfOurs(ctx, in, claim, braw)
			}
			return nil
		}
		switch {
		case stale(breaker, host):
			e := lockedBy(st, name, held)
			e.Claim, e.Breaker = claim, breaker
			return e
		case wait >= claimWait:
			return lockedBy(st, claim, breaker)
		}
		// A breaker needs a few round trips: look again soon, then less
		// often.
		poll := min(claimPoll<<min(tries, 5), claimPollMax)
		tries++
		if err := sleep(ctx, poll); err != nil {
			return fmt.Errorf("lock %s: wait for %s to break a stale lock: %w", st.Location(), breaker, err)
		}
		wait += poll
	}
	_, again, rerr := read(ctx, in, name)
	var derr error
	if rerr == nil && bytes.Equal(again, raw) {
		if err := in.DeleteInternal(ctx, name); err != nil && !errors.Is(err, store.ErrNotExist) {
			derr = fmt.Errorf("lock %s: break stale lock of %s: %w", st.Location(), held, err)
		}
	}
	if _, err := removeIfOurs(ctx, in, claim, body); err != nil {
		derr = errors.Join(derr, fmt.Errorf("lock %s: remove the claim %s on a stale lock: %w", st.Location(), claim, err))
	}
	return derr
}

// claimName is the name of the claim on breaking the stale lock name that
// holds raw: one per stale lock, so a claim left behind never stands in the
// way of breaking another.
func claimName(name string, raw []byte) string {
	sum := sha256.Sum256(raw)
	return claimPrefix + name + "-" + hex.EncodeToString(sum[:8])
}

// claimPrefix starts the name of every claim on a stale lock.
const claimPrefix = "break-"

// claimWait bounds how long a run waits for another to break a stale lock,
// polling first every claimPoll, then up to every claimPollMax.
const (
	claimWait    = 10 * time.Second
	claimPoll    = 2 * time.Millisecond
	claimPollMax = 64 * time.Millisecond
)

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// dropOwn removes the lock name if it holds body, this run's own bytes,
// after a put that failed: the service may have written an earlier try of it
// whose answer was lost, and the tries after failed. Left in place, the lock
// would refuse every later run, and on a bucket no other host breaks it.
func dropOwn(ctx context.Context, in store.Internal, name string, body []byte) error {
	if _, err := removeIfOurs(ctx, in, name, body); err != nil {
		return fmt.Errorf("the lock %s may be this run's, written before the error: %w", name, err)
	}
	return nil
}

// removeIfOurs deletes the lock name if it holds body, on a context of its
// own bounded by releaseTimeout. It reports whether the lock is there
// holding something else: another run's.
func removeIfOurs(ctx context.Context, in store.Internal, name string, body []byte) (others bool, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	_, raw, err := read(ctx, in, name)
	switch {
	case errors.Is(err, store.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !bytes.Equal(raw, body):
		return true, nil
	}
	if err := in.DeleteInternal(ctx, name); err != nil && !errors.Is(err, store.ErrNotExist) {
		return false, err
	}
	return false, nil
}

func lockedBy(st store.Store, name string, h Holder) *LockedError {
	e := &LockedError{Store: st.Location(), Holder: h, File: name}
	if s, ok := parseFileName(name); ok {
		e.Shard = s.String()
	}
	return e
}

// excluded returns a *LockedError for a live lock, other than shard s's own,
// that excludes a run on s: for the whole store, any shard's; for a shard,
// the whole store's or a shard's of another split.
func excluded(ctx context.Context, st store.Store, in store.Internal, s shard.Spec, host string) error {
	var names []string
	if s.Sharded() {
		names = append(names, Name)
	}
	err := in.ListInternal(ctx, shardPrefix, func(e store.Entry) error {
		other, ok := parseFileName(e.Key)
		if ok && other != s && (!s.Sharded() || other.N != s.N) {
			names = append(names, e.Key)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("lock %s: list the shards' locks: %w", st.Location(), err)
	}
	for _, name := range names {
		held, _, err := read(ctx, in, name)
		switch {
		case errors.Is(err, store.ErrNotExist):
			continue
		case err != nil:
			return fmt.Errorf("lock %s: the lock %s exists but cannot be read: %w", st.Location(), name, err)
		case stale(held, host):
			continue
		}
		return lockedBy(st, name, held)
	}
	return nil
}

// Through is the held lock as a lock on st, a wrapper of the locked store
// (same Location: the store with its trash kept elsewhere, say), for the
// functions that should work through the wrapper. It is the same lock:
// releasing either releases both.
func (l *Lock) Through(st store.Store) (*Lock, error) {
	if err := l.Held(); err != nil {
		return nil, err
	}
	if st.Location() != l.st.Location() {
		return nil, fmt.Errorf("storelock: the lock is on %s, not %s", l.st.Location(), st.Location())
	}
	v := *l
	v.st = st
	return &v, nil
}

// Release gives the lock up. It only removes the lock file if it is still
// this lock's. It works on a context of its own (ctx's values, not its
// cancellation): a run stopped by a signal must still release its lock.
func (l *Lock) Release(ctx context.Context) error {
	l.released.Store(true)
	others, err := removeIfOurs(ctx, l.in, l.name, l.body)
	switch {
	case err != nil:
		return fmt.Errorf("release lock: %w", err)
	case others:
		return fmt.Errorf("release lock: the lock is no longer ours (held by another run), left in place")
	}
	return nil
}

func read(ctx context.Context, in store.Internal, name string) (Holder, []byte, error) {
	rc, err := in.OpenInternal(ctx, name)
	// Runs that break a stale lock at once remove and put it and its claim
	// while others read them: a local file replaced between the store's
	// lstat and open is refused, though what is there now is a lock like any
	// other. Read it again; a file that stays irregular (a symlink planted
	// there) keeps failing and is reported.
	for tries := 0; errors.Is(err, store.ErrReplaced) && tries < 8; tries++ {
		rc, err = in.OpenInternal(ctx, name)
	}
	if err != nil {
		return Holder{}, nil, err
	}
	defer rc.Close()
	raw, err := io.ReadAll(io.LimitReader(rc, 64<<10))
	if err != nil {
		return Holder{}, nil, err
	}
	var h Holder
	if err := json.Unmarshal(raw, &h); err != nil {
		// Unreadable content: treat as held by an unknown process; never broken.
		return Holder{Command: "unknown (unreadable lock file)", Host: "?"}, raw, nil
	}
	return h, raw, nil
}

// stale reports whether the holder's process is known to be gone: it ran on
// this host, in this process id namespace, and no process has its id any
// more. A lock written without a namespace (by a release before it was
// recorded) on a system that has them is never taken for stale: the run
// that wrote it may be in another.
func stale(h Holder, host string) bool {
	return h.Host == host && h.PIDNamespace == ownPIDNamespace && h.PID > 0 && processGone(h.PID)
}

// ownPIDNamespace is this process's process id namespace (see
// Holder.PIDNamespace). A variable for the tests.
var ownPIDNamespace = pidNamespace()

// Check reports, without taking it, whether Acquire would find the lock held:
// it returns a *LockedError when another live run holds it, nil when it is
// free or stale. A dry run calls it so that it refuses where the real run
// would.
func Check(ctx context.Context, st store.Store) error { return CheckShard(ctx, st, shard.All) }

// CheckShard is Check for a run on shard s (see AcquireShard).
func CheckShard(ctx context.Context, st store.Store, s shard.Spec) error {
	in, ok := store.AsInternal(st)
	if !ok {
		return fmt.Errorf("lock %s: this kind of store cannot hold a lock", st.Location())
	}
	host, _ := os.Hostname()
	name := fileName(s)
	held, raw, err := read(ctx, in, name)
	switch {
	case errors.Is(err, store.ErrNotExist):
	case err != nil:
		return fmt.Errorf("lock %s: the lock %s exists but cannot be read: %w", st.Location(), name, err)
	case !stale(held, host):
		return lockedBy(st, name, held)
	default:
		// Stale, and Acquire would break it unless a claim on breaking it
		// stands (see breakStale): a live breaker takes the lock next, a
		// gone one leaves it locked.
		claim := claimName(name, raw)
		breaker, _, err := read(ctx, in, claim)
		switch {
		case errors.Is(err, store.ErrNotExist):
		case err != nil:
			return fmt.Errorf("lock %s: the claim %s on a stale lock exists but cannot be read: %w", st.Location(), claim, err)
		case stale(breaker, host):
			e := lockedBy(st, name, held)
			e.Claim, e.Breaker = claim, breaker
			return e
		default:
			return lockedBy(st, claim, breaker)
		}
	}
	return excluded(ctx, st, in, s, host)
}

// Do takes st's lock for command, calls fn with it and releases it, also
// when fn fails or ctx was cancelled meanwhile. A lock another run holds is
// returned as its *LockedError, without calling fn. An error of the release
// is returned when fn succeeded.
func Do(ctx context.Context, st store.Store, command string, fn func(*Lock) error) (err error) {
	return DoShard(ctx, st, command, shard.All, fn)
}

// DoShard is Do with the lock of shard s (see AcquireShard).
func DoShard(ctx context.Context, st store.Store, command string, s shard.Spec, fn func(*Lock) error) (err error) {
	l, err := AcquireShard(ctx, st, command, s)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := l.Release(ctx); rerr != nil && err == nil {
			err = rerr
		}
	}()
	return fn(l)
}
