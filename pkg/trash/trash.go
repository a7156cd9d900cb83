// Package trash is where mediactl puts the blobs it removes: one folder per
// run inside a store's internal folder (".mediactl/trash/RUN/KEY"), or in a
// local folder of the operator's choosing ([AtDir]), from where [Restore]
// puts a run back and [Purge] deletes old runs for good.
//
// gc's sweep and migrate's --delete-source move blobs with [Move]; it is the
// one place that decides, blob by blob, whether a blob may still go. Each blob
// is stat'ed (or, on a local store, checked by the rename itself) right before
// it moves, and left in place when it is no longer the blob the caller
// described: a writer touched it. On a local store a move is a rename, so a
// blob is at every moment in the store or in the trash, never in neither.
//
// On a bucket, gc defers its deletes with marks ([MarkItems]); where the
// bucket's service keeps deleted objects, its deletes for good — a later
// run's delete of marked blobs, a sweep without the trash, a purge of copy
// trash runs ([Purge] with a keeping store.Recovery) — are recorded as deleted runs
// ([StartDeleted], each batch before its delete), which [RestoreDeleted]
// brings back from the service's versions, a purged blob to its own key.
//
// Every function here that changes a store takes the store's
// [storelock.Lock] instead of the store: a path that changes a store without
// holding its lock does not compile.
package trash

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// Dir is the folder, inside the store's internal folder, that holds one
// folder per run of removed blobs.
const Dir = "trash"

// manifestName is the file, in a run's folder, that lists the run's blobs
// with their sizes and original modification times.
const manifestName = ".manifest.jsonl"

// Item is one blob to remove, as the caller saw it: Move leaves it in place
// when its size or modification time is no longer this.
type Item struct {
	Key     string
	Size    int64
	ModTime time.Time
	// ETag, when set, is the bucket object's tag as the caller saw it: a
	// blob whose tag the check finds different stays (written again, even
	// with the same size and within the same second).
	ETag string
}

// Items is a list of blobs, read one at a time so that a caller holding a
// million of them compactly (gc's plan) need not build them all at once.
type Items interface {
	Len() int
	At(i int) Item
}

// List is an Items held as a slice.
type List []Item

func (l List) Len() int      { return len(l) }
func (l List) At(i int) Item { return l[i] }

// Options configure Move.
type Options struct {
	// NoTrash deletes permanently instead of moving into the trash.
	NoTrash bool
	// Jobs is how many blobs are removed at once (buckets gain from it); 0
	// means 32 for buckets (see bucketJobs) and 1 for local stores, where a
	// rename is cheap.
	Jobs int
	// StoreBlobs, when known, is how many blobs the store held when the items
	// were planned. On a bucket that removes in batches it tells how dense
	// the items are in the store's listing, and so whether to check them
	// again by listing their key range or by a Stat each (see sweepBucket).
	StoreBlobs int64
	// Now names the run; zero means time.Now().
	Now time.Time
	// Cutoff, when not zero, is the newest modification time a blob may have
	// to go: one modified at or after it is a writer's, and stays.
	Cutoff time.Time
	// Progress, when set, is told about each blob removed.
	Progress interface{ Add(int64) }
	// Started, when set, is told the run's name before the first blob is
	// moved into it, and Move moves nothing when it fails: a caller that
	// must find the run again after a kill (migrate's journal) records it
	// first.
	Started func(run string) error
	// Split, for a shard's run, names the split it is a part of (see
	// shard.ValidSplit): the run's name carries it, so that Splits groups
	// the runs of one split by it rather than by their order.
	Split string
	// Command and CopiedTo go into the run's record (RunRecord), written
	// before the first move: a later check of the trash against the
	// sessions reads them. Command "" is "gc".
	Command  string
	CopiedTo []string
	Expired  bool
	// Deferred, with NoTrash, moves the blobs into the run (named as a
	// sweep without the trash names it) and deletes nothing: the caller
	// checks the sessions once more and then deletes the run with
	// PurgeRun, so that no blob is gone for good before that check.
	Deferred bool
	// Log, with NoTrash on a bucket, records each batch of blobs, as its
	// check described them, before the batch's delete is sent (see
	// StartDeleted): a batch whose record cannot be written is not
	// deleted, and its blobs are reported failed.
	Log *DeletedLog
}

// Result is what Move did.
type Result struct {
	// Run names the trash folder of this run ("" with NoTrash).
	Run     string `json:"run,omitempty"`
	Trashed int64  `json:"trashed"`
	Deleted int64  `json:"deleted"`
	Bytes   int64  `json:"bytes"`
	// Skipped are blobs left in place because they changed (or vanished)
	// since the caller described them.
	Skipped []Skip `json:"skipped"`
	// Failed are blobs that could not be removed; they are still in the store.
	Failed []Skip `json:"failed"`
	// NotAttempted counts the blobs left in the store, untouched, because the
	// run stopped first (interrupted, or the trash became unusable).
	NotAttempted int64 `json:"not_attempted"`
}

// Skip is a blob left alone, and why.
type Skip struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// ErrUnusable is wrapped by Move's error when a move met an unsafe
// destination (the trash folder, or a folder in it, is a symbolic link or a
// file; see store.ErrUnsafePath). The run stops there: the blobs not yet
// moved stay in the store. That is a failure of the run, never a fact about
// a blob.
var ErrUnusable = errors.New("the trash cannot be used")

// ErrLeftInRun is wrapped by Move's error when blobs left the store but
// stayed in a trash run against the run's intent: a move whose rename
// happened and whose later step (a folder's sync) failed, or, without the
// trash, a blob moved into the stage run that could not be deleted there.
// Nothing is lost: the result counts them in Result.Run, and gc restore puts
// them back.
var ErrLeftInRun = errors.New("blobs are left in a trash run")

// UnusableError is Move's error for a run stopped by an unsafe destination.
type UnusableError struct {
	Store        string
	Moved        int64
	NotAttempted int64
	Err          error // the move that found the destination unsafe
}

func (e *UnusableError) Error() string {
	return fmt.Sprintf("trash: %v in %s: %d blobs moved, %d not attempted, left in the store: %v", ErrUnusable, e.Store, e.Moved, e.NotAttempted, e.Err)
}

func (e *UnusableError) Is(target error) bool { return target == ErrUnusable }
func (e *UnusableError) Unwrap() error        { return e.Err }

// manifestLine records one trashed blob.
type manifestLine struct {
	Key     string    `json:"key"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
}

// Move removes items from the locked store: into a new trash run, or, with
// NoTrash, for good. It stops when ctx is cancelled, finishing the move in
// flight; the blobs not attempted stay in the store and are counted in
// NotAttempted, not listed. A move whose destination is unsafe stops the run
// with an *UnusableError (wrapping ErrUnusable).
func Move(ctx context.Context, l *storelock.Lock, items Items, opts Options) (*Result, error) {
	if err := l.Held(); err != nil {
		return nil, err
	}
	st := l.Store()
	in, ok := store.AsInternal(st)
	if !ok && !opts.NoTrash {
		return nil, fmt.Errorf("trash: %s cannot keep a trash; delete without one", st.Location())
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	_, batchMoves := store.AsBatchMover(st)
	if _, removes := store.AsBatchRemover(st); opts.Log != nil && (!opts.NoTrash || opts.Deferred || batchMoves || !removes) {
		// Only a bucket's deletes for good go through the log.
		return nil, fmt.Errorf("trash: %s: a record of deletes is kept only of a bucket's deletes without the trash", st.Location())
	}
	res := &Result{Skipped: []Skip{}, Failed: []Skip{}}
	m := &mover{st: st, in: in, opts: opts, res: res}
	suffix, err := runSuffix(l, opts.Split)
	if err != nil {
		return nil, err
	}
	if opts.NoTrash {
		suffix = noTrashSuffix + suffix
	}
	run := unusedRun(ctx, in, now, suffix)
	if opts.Started != nil && !opts.NoTrash {
		if err := opts.Started(run); err != nil {
			return nil, fmt.Errorf("trash: run %s not started: %w", run, err)
		}
	}
	if opts.NoTrash && opts.Deferred {
		// Moved aside like a trash run's blobs; the caller deletes them.
		m.opts.NoTrash = false
	}
	if m.opts.NoTrash {
		m.stage = run
	} else {
		res.Run = run
	}
	if in != nil {
		rec := RunRecord{Command: opts.Command, CopiedTo: opts.CopiedTo, Expired: opts.Expired}
		if rec.Command == "" {
			rec.Command = "gc"
		}
		if err := writeRecord(ctx, in, run, rec); err != nil {
			res.NotAttempted = int64(items.Len())
			if errors.Is(err, store.ErrNotRegular) || errors.Is(err, store.ErrUnsafePath) || errors.Is(err, store.ErrNotExist) {
				// A folder on the way is a link or a file: no place for
				// blobs. That is the trash's fault, no fact about a blob.
				return res, &UnusableError{Store: st.Location(), NotAttempted: res.NotAttempted, Err: fmt.Errorf("write the record of run %s: %v: %w", run, err, store.ErrUnsafePath)}
			}
			return res, fmt.Errorf("trash: run %s not started: write its record: %w", run, err)
		}
	}
	m.enc = json.NewEncoder(&m.manifest)
	items = withoutReservedNames(items, res)
	if bm, ok := store.AsBatchMover(st); ok {
		// Without the trash too: a blob is moved (which checks the very file
		// it renames) and only then deleted; a writer's file saved over it
		// after its check is never what is deleted.
		err = m.sweepBatches(ctx, bm, items)
	} else if br, ok := store.AsBatchRemover(st); ok {
		err = m.sweepBucket(ctx, br, items)
	} else {
		err = m.sweep(ctx, items)
	}
	err = m.finish(ctx, err)
	if res.Trashed == 0 && in != nil {
		// Nothing is left in the run: no run is left, not even its record.
		// Best effort: a record that stays (its folder swapped for a link
		// or moved away by another process meanwhile) is a run of no blob,
		// which restores and purges nothing.
		_ = removeRecord(context.WithoutCancel(ctx), in, run)
	}
	return res, err
}

// withoutReservedNames is items without a blob at the store's top named as
// a run's manifest or record: in the run it would be overwritten by them, and
// a restore would not bring it back. Such a blob stays, and res says why.
func withoutReservedNames(items Items, res *Result) Items {
	var keep []int
	for i := range items.Len() {
		if key := items.At(i).Key; reserved(key) {
			if keep == nil {
				keep = make([]int, 0, items.Len())
				for j := range i {
					keep = append(keep, j)
				}
			}
			res.Skipped = append(res.Skipped, Skip{key, "its name is one a trash run gives its own files: kept (rename it to let it go)"})
			continue
		}
		if keep != nil {
			keep = append(keep, i)
		}
	}
	if keep == nil {
		return items
	}
	return subItems{items, keep}
}

// subItems are the items of all at the positions keep.
type subItems struct {
	all  Items
	keep []int
}

func (s subItems) Len() int      { return len(s.keep) }
func (s subItems) At(i int) Item { return s.all.At(s.keep[i]) }

// noTrashSuffix marks the run folder through which a sweep without the trash
// deletes a local store's blobs. Killed between a move and its deletion, such
// a sweep leaves its blobs there, listed, restorable and purged like any
// run's.
const noTrashSuffix = "-no-trash"

// mover is one Move.
type mover struct {
	st       store.Store
	in       store.Internal
	opts     Options
	mu       sync.Mutex
	res      *Result
	manifest bytes.Buffer
	enc      *json.Encoder
	// stage is the run folder that a sweep without the trash moves a local
	// store's blobs through, "" otherwise.
	stage string
	// staging is set once a batch was moved into stage.
	staging bool
	// afterRename is the first error of a move into the trash that failed
	// after its rename: the blob is in the run.
	afterRename error
	// undeleted is why the first blob moved into stage could not be
	// deleted there.
	undeleted error
}

// moved records a removed blob.
func (m *mover) moved(it Item) {
	m.res.Bytes += it.Size
	if m.opts.NoTrash {
		m.res.Deleted++
	} else {
		m.trashed(it)
	}
	if m.opts.Progress != nil {
		m.opts.Progress.Add(1)
	}
}

// trashed records a blob now in the run's trash folder.
func (m *mover) trashed(it Item) {
	m.res.Trashed++
	m.enc.Encode(manifestLine{it.Key, it.Size, it.ModTime})
}

// staged records a blob that a sweep without the trash moved out of the
// store and then could not delete: it stays in the stage run, which the
// result then names.
func (m *mover) staged(it Item, err error) {
	m.res.Bytes += it.Size
	m.trashed(it)
	m.res.Run = m.stage
	if m.undeleted == nil {
		m.undeleted = err
	}
	if m.opts.Progress != nil {
		m.opts.Progress.Add(1)
	}
}

// interrupted reports whether err is ctx's own cancellation: the blob was
// not touched, and is no failure.
func interrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// BesidesInterruption is what Move's error says besides that ctxErr (the
// run's context's error) stopped it: nil when that is all, else the other
// errors Move joined to it (blobs left in a run, a manifest not written).
// A report whose outcome already says the run was interrupted shows these.
func BesidesInterruption(err, ctxErr error) error {
	if err == nil || ctxErr == nil {
		return err
	}
	parts := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts = j.Unwrap()
	}
	var kept []error
	for _, e := range parts {
		if !errors.Is(e, ctxErr) || errors.Is(e, ErrLeftInRun) {
			kept = append(kept, e)
		}
	}
	switch {
	case len(kept) == 0:
		return nil
	case len(kept) == len(parts):
		return err
	}
	return errors.Join(kept...)
}

func (m *mover) sweep(ctx context.Context, items Items) error {
	jobs := m.opts.Jobs
	if jobs <= 0 {
		jobs = 1
		if _, isBucket := m.st.(store.Bucket); isBucket {
			jobs = bucketJobs
		}
	}
	work := make(chan Item)
	var wg sync.WaitGroup
	var unsafe error // the first unsafe destination: the run stops
	attempted := 0
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				m.mu.Lock()
				stop := unsafe != nil
				if !stop {
					attempted++
				}
				m.mu.Unlock()
				if stop {
					continue
				}
				skip, err := m.remove(ctx, it)
				m.mu.Lock()
				switch {
				case err != nil && interrupted(ctx, err):
					attempted--
				case err != nil && errors.Is(err, store.ErrUnsafePath):
					m.res.Failed = append(m.res.Failed, Skip{it.Key, err.Error()})
					if unsafe == nil {
						unsafe = err
					}
				case err != nil:
					m.res.Failed = append(m.res.Failed, Skip{it.Key, err.Error()})
				case skip != "":
					m.res.Skipped = append(m.res.Skipped, Skip{it.Key, skip})
				default:
					m.moved(it)
				}
				m.mu.Unlock()
			}
		}()
	}
	var stopErr error
	n := items.Len()
	for i := range n {
		if err := ctx.Err(); err != nil {
			stopErr = err
			break
		}
		m.mu.Lock()
		stop := unsafe != nil
		m.mu.Unlock()
		if stop {
			break
		}
		work <- items.At(i)
	}
	close(work)
	wg.Wait()
	m.res.NotAttempted = int64(n - attempted)
	if unsafe != nil {
		return &UnusableError{Store: m.st.Location(), Moved: m.res.Trashed + m.res.Deleted, NotAttempted: m.res.NotAttempted, Err: unsafe}
	}
	if stopErr == nil && m.res.NotAttempted > 0 {
		stopErr = ctx.Err()
	}
	return stopErr
}

// sweepBatches moves the items into the trash in batches. The store checks
// each blob against its description right before its rename. Without the
// trash, the batch is moved into the stage run and deleted from there.
func (m *mover) sweepBatches(ctx context.Context, bm store.BatchMover, items Items) error {
	run := m.res.Run
	if m.opts.NoTrash {
		run = m.stage
	}
	// Large batches: each ends with an fsync of the directories it touched,
	// which on a directory of a million entries costs tens of milliseconds.
	// Keys are rendered one batch at a time.
	const batch = 65536
	n := items.Len()
	its := make([]Item, 0, min(n, batch))
	moves := make([]store.InternalMove, 0, min(n, batch))
	res := m.res
	for start := 0; start < n; start += batch {
		if err := ctx.Err(); err != nil {
			res.NotAttempted += int64(n - start)
			return err
		}
		its, moves = its[:0], moves[:0]
		for i := start; i < min(start+batch, n); i++ {
			it := items.At(i)
			if !m.opts.Cutoff.IsZero() && !it.ModTime.Before(m.opts.Cutoff) {
				res.Skipped = append(res.Skipped, Skip{it.Key, "modified after the cutoff"})
				continue
			}
			its = append(its, it)
			moves = append(moves, store.InternalMove{Key: it.Key, Name: Dir + "/" + run + "/" + it.Key, Size: it.Size, ModTime: it.ModTime})
		}
		var unsafe error
		moveErrs := bm.MoveManyToInternal(ctx, moves)
		inRun := m.movedAnyway(ctx, moves, moveErrs)
		if m.opts.NoTrash {
			m.staging = true
			m.deleteStaged(ctx, bm, its, moves, moveErrs)
		}
		for i, err := range moveErrs {
			it := its[i]
			switch {
			case err == nil && m.opts.NoTrash:
				// Counted by deleteStaged.
			case err == nil:
				m.moved(it)
			// Errors about the destination first: they say nothing of the blob.
			case errors.Is(err, store.ErrUnsafePath):
				res.Failed = append(res.Failed, Skip{it.Key, err.Error()})
				if unsafe == nil {
					unsafe = err
				}
			case inRun[i]:
				m.inRunAnyway(it, err)
			case errors.Is(err, store.ErrNotAttempted), interrupted(ctx, err):
				res.NotAttempted++
			case errors.Is(err, store.ErrChanged):
				res.Skipped = append(res.Skipped, Skip{it.Key, reasonChanged})
			case errors.Is(err, store.ErrNotExist):
				res.Skipped = append(res.Skipped, Skip{it.Key, "gone since the plan"})
			case errors.Is(err, store.ErrNotRegular):
				res.Skipped = append(res.Skipped, Skip{it.Key, "no longer a regular file"})
			default:
				res.Failed = append(res.Failed, Skip{it.Key, err.Error()})
			}
		}
		if unsafe != nil {
			res.NotAttempted += int64(n - min(start+batch, n))
			return &UnusableError{Store: m.st.Location(), Moved: res.Trashed + res.Deleted, NotAttempted: res.NotAttempted, Err: unsafe}
		}
		if err := ctx.Err(); err != nil {
			res.NotAttempted += int64(n - min(start+batch, n))
			return err
		}
	}
	return nil
}

// movedAnyway reports, for each move that failed, whether its file is in the
// run all the same: the rename happened and what failed came after it (the
// sync of a folder, a folder emptied by the move and removed by another
// process before its sync, a writer's file moved in place of the blob and
// not put back). Such a file is out of the store; counting it as kept or
// failed would say it is still there. nil when every move succeeded.
func (m *mover) movedAnyway(ctx context.Context, moves []store.InternalMove, errs []error) []bool {
	var in []bool
	for i, err := range errs {
		if err == nil || errors.Is(err, store.ErrNotAttempted) || errors.Is(err, store.ErrUnsafePath) || interrupted(ctx, err) {
			continue
		}
		if errors.Is(err, store.ErrExist) {
			// A move never replaces: something else is at its place in
			// the run (put there by another process), and the blob is
			// still in the store.
			continue
		}
		rc, oerr := m.in.OpenInternal(context.WithoutCancel(ctx), moves[i].Name)
		if oerr != nil {
			continue
		}
		rc.Close()
		if in == nil {
			in = make([]bool, len(errs))
		}
		in[i] = true
	}
	if in == nil {
		return make([]bool, len(errs))
	}
	return in
}

// inRunAnyway records a blob whose move failed after its rename (see
// movedAnyway): it is in the run, kept there (a sweep without the trash does
// not delete it), and the sweep fails saying why.
func (m *mover) inRunAnyway(it Item, err error) {
	if m.opts.NoTrash {
		m.staged(it, err)
		return
	}
	m.res.Bytes += it.Size
	m.trashed(it)
	if m.afterRename == nil {
		m.afterRename = fmt.Errorf("%s: %w", it.Key, err)
	}
	if m.opts.Progress != nil {
		m.opts.Progress.Add(1)
	}
}

// deleteStaged deletes the blobs of a batch that were moved into the stage
// run, even once ctx is cancelled: they are out of the store already, and
// the deletions take no longer than the moves did.
func (m *mover) deleteStaged(ctx context.Context, bm store.BatchMover, its []Item, moves []store.InternalMove, moveErrs []error) {
	var moved []int
	var names []string
	for i, err := range moveErrs {
		if err == nil {
			moved = append(moved, i)
			names = append(names, moves[i].Name)
		}
	}
	if len(names) == 0 {
		return
	}
	for j, err := range bm.DeleteManyInternal(context.WithoutCancel(ctx), Dir+"/"+m.stage, names) {
		it := its[moved[j]]
		if err != nil {
			m.staged(it, err)
		} else {
			m.moved(it)
		}
	}
}

// remove takes one blob out, after checking it is still the blob described.
func (m *mover) remove(ctx context.Context, it Item) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	now, err := m.st.Stat(ctx, it.Key)
	if skip, err := m.stillGoes(it, now, err); skip != "" || err != nil {
		return skip, err
	}
	if cm, ok := m.in.(store.CheckedInternalMover); ok && !m.opts.NoTrash && !it.ModTime.IsZero() {
		// The check above is a moment old; the move checks the file it takes.
		err := cm.MoveToInternalIf(ctx, store.InternalMove{Key: it.Key, Name: Dir + "/" + m.res.Run + "/" + it.Key, Size: it.Size, ModTime: it.ModTime})
		if errors.Is(err, store.ErrChanged) {
			return reasonChanged, nil
		}
		return "", err
	}
	return "", store.RetryThrottled(ctx, func() error {
		if m.opts.NoTrash {
			return m.st.Delete(ctx, it.Key)
		}
		return m.in.MoveToInternal(ctx, it.Key, Dir+"/"+m.res.Run+"/"+it.Key)
	})
}

// reasonChanged is why a blob that a writer touched since the plan stays.
const reasonChanged = "changed since the plan (a writer touched it)"

// stillGoes is the check every blob passes right before it goes: now (or
// err) is how the store describes it at this moment. It returns why the blob
// stays ("" when it may go), or the error that kept it from being described.
func (m *mover) stillGoes(it Item, now store.Entry, err error) (string, error) {
	switch {
	case errors.Is(err, store.ErrNotExist):
		return "gone since the plan", nil
	case err != nil:
		return "", err
	case !now.Regular():
		return "no longer a regular file", nil
	case now.Size != it.Size || !sameTime(m.st, now.ModTime, it.ModTime):
		return reasonChanged, nil
	case it.ETag != "" && now.ETag != "" && now.ETag != it.ETag:
		return reasonChanged, nil
	case !m.opts.Cutoff.IsZero() && !now.ModTime.Before(m.opts.Cutoff):
		return "modified after the cutoff", nil
	}
	return "", nil
}

// finish sorts the result and writes the run's manifest, on a context of its
// own: an interrupted run still records what it moved.
func (m *mover) finish(ctx context.Context, stopErr error) error {
	res := m.res
	// One flat list, so that a caller can tell the interruption (stopErr,
	// when ctx ended) from the rest.
	errs := []error{stopErr}
	if m.stage != "" && m.staging {
		errs = append(errs, m.leftInStage(ctx))
	}
	sortSkips(res.Skipped)
	sortSkips(res.Failed)
	if res.Trashed > 0 {
		// The trash folder itself is the record Restore works from; the
		// manifest adds sizes and original times for people and tools.
		name := res.Run + "/" + manifestName
		if err := m.in.PutInternal(context.WithoutCancel(ctx), Dir+"/"+name, &m.manifest, store.PutOptions{ContentType: "application/x-ndjson"}); err != nil {
			errs = append(errs, fmt.Errorf("trash: write manifest %s: %w", name, err))
		}
	}
	if m.afterRename != nil {
		errs = append(errs, fmt.Errorf("trash: moves into trash run %s failed after the blobs were moved, and they are counted there (%w); first: %w", res.Run, ErrLeftInRun, m.afterRename))
	}
	if m.undeleted != nil {
		errs = append(errs, fmt.Errorf("trash: %d blobs taken out of %s could not be deleted; they are in trash run %s (%w): %w", res.Trashed, m.st.Location(), res.Run, ErrLeftInRun, m.undeleted))
	}
	errs = slices.DeleteFunc(errs, func(e error) bool { return e == nil })
	if len(errs) == 1 {
		return errs[0] // as it is: a caller may compare it with ctx.Err()
	}
	return errors.Join(errs...)
}

// leftInStage finds what a sweep without the trash left in its stage run
// beyond the blobs staged() recorded: a file whose move failed after its
// rename (the folder's sync failed, or a folder emptied by the move was
// removed by someone else before its sync), or a writer's file that was moved
// in place of the blob and could not be put back. Each such file is out of
// the store and in the run, so it is counted there, not as kept or failed:
// the result names the run, and the sweep fails with the first reason.
func (m *mover) leftInStage(ctx context.Context) error {
	res := m.res
	prefix := Dir + "/" + m.stage + "/"
	recorded := map[string]bool{}
	if res.Run == m.stage {
		for line := range bytes.Lines(m.manifest.Bytes()) {
			var l manifestLine
			if json.Unmarshal(line, &l) == nil {
				recorded[l.Key] = true
			}
		}
	}
	var left []store.Entry
	err := m.in.ListInternal(context.WithoutCancel(ctx), prefix, func(e store.Entry) error {
		if key := strings.TrimPrefix(e.Key, prefix); !reserved(key) && !recorded[key] {
			left = append(left, store.Entry{Key: key, Size: e.Size, ModTime: e.ModTime})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("trash: list the run %s, through which blobs were deleted, for what is left in it: %w", m.stage, err)
	}
	if len(left) == 0 {
		return nil
	}
	reasons := map[string]string{}
	take := func(list []Skip) []Skip {
		kept := list[:0]
		for _, s := range list {
			if i, ok := slices.BinarySearchFunc(left, s.Key, func(e store.Entry, k string) int { return strings.Compare(e.Key, k) }); ok && left[i].Key == s.Key {
				reasons[s.Key] = s.Reason
				continue
			}
			kept = append(kept, s)
		}
		return kept
	}
	slices.SortFunc(left, func(a, b store.Entry) int { return strings.Compare(a.Key, b.Key) })
	res.Skipped = take(res.Skipped)
	res.Failed = take(res.Failed)
	for _, e := range left {
		m.res.Trashed++
		m.res.Bytes += e.Size
		m.enc.Encode(manifestLine{e.Key, e.Size, e.ModTime})
	}
	res.Run = m.stage
	why := reasons[left[0].Key]
	if why == "" {
		why = "not moved by this run's own record"
	}
	if m.undeleted == nil {
		m.undeleted = fmt.Errorf("%s: %s", left[0].Key, why)
	}
	return nil
}

// sameTime compares modification times as precisely as the store reports them
// everywhere: a bucket's listing has milliseconds, its HEAD whole seconds.
// For a bucket the two agree within a second, not by truncation: a service
// may take the HEAD's time from another moment of the same write than the
// listing's (gofakes3 does, a few microseconds apart), and truncation then
// splits a write that straddles a second into two. The tolerance is the same
// as truncation's (under a second); the size is compared besides.
func sameTime(st store.Store, a, b time.Time) bool {
	if _, isBucket := st.(store.Bucket); isBucket {
		d := a.Sub(b)
		return d > -time.Second && d < time.Second
	}
	return a.Equal(b)
}

func sortSkips(s []Skip) { sort.Slice(s, func(i, j int) bool { return s[i].Key < s[j].Key }) }
