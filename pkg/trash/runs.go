package trash

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// Run describes one run in the trash.
type Run struct {
	Run   string    `json:"run"`
	Time  time.Time `json:"time"`
	Blobs int64     `json:"blobs"`
	Bytes int64     `json:"bytes"`
	// Shard is the part of the store the run removed from, "K/N" (empty for a
	// run on the whole store).
	Shard string `json:"shard,omitempty"`
	// Split names the split a shard's run was part of, when it was named
	// (Options.Split).
	Split string `json:"split,omitempty"`
}

// NoRunError is returned by Restore for a run name that is not in the trash
// (or is no run name at all).
type NoRunError struct {
	Store string
	Run   string
	// Malformed says the name cannot be a run's: it is not named as Move
	// names runs (see parseRun).
	Malformed bool
	// DeletedIn, for a mark run whose blobs a later run deleted, names
	// that deleted run (restore that one), where it is recorded.
	DeletedIn string
}

func (e *NoRunError) Error() string {
	if e.Malformed {
		return fmt.Sprintf("trash: %q is not a run name", e.Run)
	}
	return fmt.Sprintf("trash: no run %s in the trash of %s", e.Run, e.Store)
}

// Runs lists the runs in the store's trash, oldest first: the folders named
// as Move names its runs (see parseRun). Reading needs no lock.
func Runs(ctx context.Context, st store.Store) ([]Run, error) {
	in, ok := store.AsInternal(st)
	if !ok {
		return []Run{}, nil
	}
	byRun := map[string]*Run{}
	err := in.ListInternal(ctx, Dir+"/", func(e store.Entry) error {
		rest := strings.TrimPrefix(e.Key, Dir+"/")
		run, name, ok := strings.Cut(rest, "/")
		if !ok {
			return nil
		}
		r := byRun[run]
		if r == nil {
			n, ok := parseRun(run)
			if !ok {
				return nil // not a run of mediactl's: left alone
			}
			r = &Run{Run: run, Time: n.time, Shard: n.shard, Split: n.split}
			byRun[run] = r
		}
		if !reserved(name) {
			r.Blobs++
			r.Bytes += e.Size
		}
		return nil
	})
	out := []Run{}
	for _, r := range byRun {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Run < out[j].Run })
	return out, err
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	Run      string `json:"run"`
	Restored int64  `json:"restored"`
	Bytes    int64  `json:"bytes"`
	Kept     []Skip `json:"kept"` // left in the trash (a blob of that key exists again)
	// NotAttempted counts the blobs still in the trash because the restore
	// was interrupted; running it again puts them back.
	NotAttempted int64 `json:"not_attempted"`
	// Keys are the keys put back, for RestoreKeys.
	Keys []string `json:"-"`
}

// Restore moves every blob of a run back from the trash of the locked store
// to its key. A key that exists again in the store is not overwritten: its
// trashed copy stays in the trash and is reported. On a local store the move
// is a rename, checked like every move of this package, so contents and
// modification times come back as they were.
func Restore(ctx context.Context, l *storelock.Lock, run string) (*RestoreResult, error) {
	return restore(ctx, l, run, nil)
}

// RestoreKeys is Restore for the blobs of run with the given keys only (the
// ones a check of the trash against the sessions found named). A key not in
// the run is not an error: another process restored or purged it.
func RestoreKeys(ctx context.Context, l *storelock.Lock, run string, keys []string) (*RestoreResult, error) {
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	return restore(ctx, l, run, want)
}

func restore(ctx context.Context, l *storelock.Lock, run string, only map[string]bool) (*RestoreResult, error) {
	st, in, err := lockedRun(l, run)
	if err != nil {
		return nil, err
	}
	prefix := Dir + "/" + run + "/"
	var names []store.Entry
	if err := in.ListInternal(ctx, prefix, func(e store.Entry) error {
		if key := strings.TrimPrefix(e.Key, prefix); only == nil || only[key] {
			names = append(names, e)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("trash: list run %s: %w", run, err)
	}
	res := &RestoreResult{Run: run, Kept: []Skip{}}
	if len(names) == 0 {
		if only != nil {
			return res, nil
		}
		return nil, &NoRunError{Store: st.Location(), Run: run}
	}
	for i, e := range names {
		key := strings.TrimPrefix(e.Key, prefix)
		if reserved(key) {
			continue
		}
		if err := ctx.Err(); err != nil {
			res.NotAttempted = int64(countBlobs(names[i:]))
			return res, err
		}
		err := store.RetryThrottled(ctx, func() error { return in.MoveFromInternal(ctx, e.Key, key) })
		switch {
		case err == nil:
			res.Restored++
			res.Bytes += e.Size
			if only != nil {
				res.Keys = append(res.Keys, key)
			}
		case errors.Is(err, store.ErrExist):
			res.Kept = append(res.Kept, Skip{key, "a blob with this key exists again; the trashed copy stays in the trash"})
		case errors.Is(err, store.ErrNotExist) && only != nil:
			// Restored or purged by another process since it was listed.
		case interrupted(ctx, err):
			res.NotAttempted = int64(countBlobs(names[i:]))
			return res, err
		default:
			return res, fmt.Errorf("trash: restore %s: %w", key, err)
		}
	}
	if only != nil && len(res.Kept) == 0 && res.Restored > 0 {
		// The run may hold nothing else now: then it goes, as after a
		// whole restore.
		left := false
		if err := in.ListInternal(ctx, prefix, func(e store.Entry) error {
			if !reserved(strings.TrimPrefix(e.Key, prefix)) {
				left = true
				return errFound
			}
			return nil
		}); err != nil && !errors.Is(err, errFound) {
			return res, fmt.Errorf("trash: list run %s: %w", run, err)
		}
		if !left {
			only = nil
		}
	}
	if only == nil && len(res.Kept) == 0 {
		for _, name := range []string{manifestName, recordName} {
			if err := store.RetryThrottled(ctx, func() error { return in.DeleteInternal(ctx, prefix+name) }); err != nil && !errors.Is(err, store.ErrNotExist) {
				return res, fmt.Errorf("trash: remove %s of %s: %w", name, run, err)
			}
		}
	}
	return res, nil
}

// countBlobs counts the entries of a run that are blobs (not its manifest).
func countBlobs(es []store.Entry) int {
	n := 0
	for _, e := range es {
		if _, name, _ := strings.Cut(e.Key[len(Dir)+1:], "/"); !reserved(name) {
			n++
		}
	}
	return n
}

// PurgeResult is what Purge did.
type PurgeResult struct {
	// Runs are the runs purged whole.
	Runs []string `json:"runs"`
	// Blobs and Bytes count the trashed blobs deleted: those of Runs, and
	// those of the run an interrupted purge stopped in (which stays, with
	// the rest of its blobs).
	Blobs int64 `json:"blobs"`
	Bytes int64 `json:"bytes"`
	// DeletedRun names the record of the trashed blobs the purge deleted,
	// kept where the bucket's service keeps deleted objects
	// (Purge's rec): gc restore of it brings them back to their keys
	// from the versions of their trashed copies. "" when none was kept.
	DeletedRun string `json:"deleted_run,omitempty"`
}

// Purge deletes, for good, the trash runs of the locked store that started
// before cutoff, and drops the records of its deleted runs (DeletedDir)
// that did: their blobs were deleted already, so they count in neither
// Blobs nor Bytes, and what the service keeps of them is untouched. An
// interrupted purge leaves the rest of its run in the trash (Blobs and
// Bytes count what it deleted of it); running it again finishes it.
//
// rec is what the store's service keeps of a deleted object. On a bucket
// that keeps it (store.Recovery.Keeps), before the first trashed blob is
// deleted a deleted run starts (StartDeleted, command "gc purge", naming
// the trash runs purged), and each batch of trashed blobs is recorded there
// before its deletes are sent — the trashed copy, as the purge listed it,
// and the key it was trashed from — so that RestoreDeleted brings each back
// to its key from the versions of its copy. The result names the run
// (DeletedRun), also when the purge stopped midway. The zero Recovery keeps
// nothing: a local store's.
func Purge(ctx context.Context, l *storelock.Lock, cutoff time.Time, rec store.Recovery) (_ *PurgeResult, err error) {
	if err := l.Held(); err != nil {
		return nil, err
	}
	st := l.Store()
	res := &PurgeResult{Runs: []string{}}
	in, ok := store.AsInternal(st)
	if !ok {
		return res, nil
	}
	runs, err := Runs(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("trash: list: %w", err)
	}
	var due []Run
	var withBlobs []string
	for _, r := range runs {
		if r.Time.IsZero() || !r.Time.Before(cutoff) {
			continue
		}
		due = append(due, r)
		if r.Blobs > 0 {
			withBlobs = append(withBlobs, r.Run)
		}
	}
	var log *DeletedLog
	_, local := in.(store.BatchMover)
	_, bucket := store.AsBatchRemover(st)
	if rec.Keeps() && bucket && !local && len(withBlobs) > 0 {
		// The record first: no trashed blob is deleted that it does not list.
		if log, err = StartDeleted(ctx, l, DeletedOptions{Recovery: rec, Command: "gc purge", Trash: withBlobs}); err != nil {
			return res, err
		}
		defer func() {
			var ferr error
			res.DeletedRun, ferr = log.Finish(ctx)
			err = errors.Join(err, ferr)
		}()
	}
	for _, r := range due {
		if n, b, err := purgeRun(ctx, in, r.Run, log); err != nil {
			res.Blobs += n
			res.Bytes += b
			return res, err
		}
		res.Runs = append(res.Runs, r.Run)
		res.Blobs += r.Blobs
		res.Bytes += r.Bytes
	}
	deleted, err := Deleteds(ctx, st)
	if err != nil {
		return res, err
	}
	for _, d := range deleted {
		n, _ := parseRun(d.Run)
		if !n.time.Before(cutoff) || log != nil && d.Run == log.Run() {
			// The record this purge just made is named to the second, and
			// so may read as older than a cutoff of now: it stays.
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if _, err := DropDeleted(ctx, l, d.Run); err != nil {
			return res, err
		}
		res.Runs = append(res.Runs, d.Run)
	}
	return res, nil
}

// PurgeRun deletes one run of the locked store's trash for good: what a
// sweep without the trash (Options.Deferred) does once the sessions were
// checked again. It returns what it deleted.
func PurgeRun(ctx context.Context, l *storelock.Lock, run string) (*PurgeResult, error) {
	st, in, err := lockedRun(l, run)
	if err != nil {
		return nil, err
	}
	res := &PurgeResult{Runs: []string{}}
	runs, err := Runs(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("trash: list: %w", err)
	}
	for _, r := range runs {
		if r.Run != run {
			continue
		}
		if _, _, err := purgeRun(ctx, in, run, nil); err != nil {
			return res, err
		}
		res.Runs = append(res.Runs, run)
		res.Blobs, res.Bytes = r.Blobs, r.Bytes
	}
	return res, nil
}

// purgeRun deletes every file of a run; with log (a bucket's, see
// Purge with a keeping Recovery) each batch of its blobs is recorded before it is deleted.
// It returns how many of the run's blobs it deleted, and their size, also
// when it stopped midway (with log, the blobs whose delete was sent: those
// the record lists).
func purgeRun(ctx context.Context, in store.Internal, run string, log *DeletedLog) (n, size int64, err error) {
	var names []store.Entry
	if err := in.ListInternal(ctx, Dir+"/"+run+"/", func(e store.Entry) error {
		names = append(names, e)
		return nil
	}); err != nil {
		return 0, 0, err
	}
	// The run's own files last: a purge stopped midway leaves a run that
	// still says what it is.
	sort.SliceStable(names, func(i, j int) bool {
		_, a, _ := strings.Cut(names[i].Key[len(Dir)+1:], "/")
		_, b, _ := strings.Cut(names[j].Key[len(Dir)+1:], "/")
		return !reserved(a) && reserved(b)
	})
	if bm, ok := in.(store.BatchMover); ok {
		// A local store: the files, then the folders they leave empty, so
		// that nothing of the run is left.
		blobs := 0
		for blobs < len(names) && !strings.HasSuffix(names[blobs].Key, "/"+manifestName) && !strings.HasSuffix(names[blobs].Key, "/"+recordName) {
			blobs++
		}
		for p, part := range [][]store.Entry{names[:blobs], names[blobs:]} {
			if err := ctx.Err(); err != nil {
				return n, size, err
			}
			keys := make([]string, len(part))
			for i, e := range part {
				keys[i] = e.Key
			}
			var stop error
			for i, err := range bm.DeleteManyInternal(ctx, Dir+"/"+run, keys) {
				switch {
				case err == nil && p == 0:
					n++
					size += part[i].Size
				case err != nil && !errors.Is(err, store.ErrNotExist) && stop == nil:
					stop = fmt.Errorf("trash: purge %s: %w", keys[i], err)
				}
			}
			if stop != nil {
				return n, size, stop
			}
		}
		return n, size, nil
	}
	if log != nil {
		blobs := 0
		for blobs < len(names) && !reserved(strings.TrimPrefix(names[blobs].Key, Dir+"/"+run+"/")) {
			blobs++
		}
		n, size, err = purgeRecorded(ctx, in, run, names[:blobs], log)
		if err != nil {
			return n, size, err
		}
		names = names[blobs:]
	}
	for _, e := range names {
		if err := ctx.Err(); err != nil {
			return n, size, err
		}
		if err := store.RetryThrottled(ctx, func() error { return in.DeleteInternal(ctx, e.Key) }); err != nil && !errors.Is(err, store.ErrNotExist) {
			return n, size, fmt.Errorf("trash: purge %s: %w", e.Key, err)
		} else if err == nil && !reserved(strings.TrimPrefix(e.Key, Dir+"/"+run+"/")) {
			n++
			size += e.Size
		}
	}
	return n, size, nil
}

// purgeRecorded deletes the trashed blobs of run (entries of its listing) in
// batches of bucketBatch, each recorded in log before the first of its
// deletes is sent: the line names the trashed copy and the key it came
// from. Once a batch's deletes are done, its record keeps the blobs whose
// delete was sent (a failed delete's blob may be gone all the same; a
// restore finds it, or its copy, still there), and drops those the purge
// did not get to. It returns how many blobs it sent a delete of, and their
// bytes: those the record keeps.
func purgeRecorded(ctx context.Context, in store.Internal, run string, blobs []store.Entry, log *DeletedLog) (n, size int64, err error) {
	prefix := Dir + "/" + run + "/"
	for start := 0; start < len(blobs); start += bucketBatch {
		if err := ctx.Err(); err != nil {
			return n, size, err
		}
		batch := blobs[start:min(start+bucketBatch, len(blobs))]
		now := time.Now().UTC()
		lines := make([]Deleted, len(batch))
		for i, e := range batch {
			lines[i] = Deleted{Key: strings.TrimPrefix(e.Key, prefix), Size: e.Size, ModTime: e.ModTime, ETag: e.ETag, DeletedAt: now, Trashed: e.Key}
		}
		seq, err := log.recordLines(ctx, lines)
		if err != nil {
			return n, size, fmt.Errorf("trash: purge %s: nothing of the batch deleted: %w", run, err)
		}
		sent := make([]bool, len(batch))
		var stop error
		for i, e := range batch {
			if err := ctx.Err(); err != nil {
				stop = err
				break
			}
			sent[i] = true
			err := store.RetryThrottled(ctx, func() error { return in.DeleteInternal(ctx, e.Key) })
			if err == nil || interrupted(ctx, err) {
				// Counted as the record keeps it: a delete cut short by
				// the interrupt may have been done by the service.
				n++
				size += e.Size
			}
			if err != nil && !errors.Is(err, store.ErrNotExist) {
				stop = fmt.Errorf("trash: purge %s: %w", e.Key, err)
				break
			}
		}
		log.settle(context.WithoutCancel(ctx), seq, lines, sent)
		if stop != nil {
			return n, size, stop
		}
	}
	return n, size, nil
}

// Split is the runs of one sharded gc: the shards of a split into N, in the
// order they ran.
type Split struct {
	N int `json:"n"`
	// ID is the split's name, when its runs carry one (Options.Split): then
	// the split is exactly the runs of that name, a shard run again in it
	// (a pod retried) included.
	ID   string `json:"split,omitempty"`
	Runs []Run  `json:"runs"`
	// Blobs and Bytes are the runs' together.
	Blobs int64 `json:"blobs"`
	Bytes int64 `json:"bytes"`
	// Missing are the shards with no run in the split: they removed nothing
	// (nothing to remove, or they failed: their reports say which).
	Missing []int `json:"missing_shards"`
}

// Splits groups sharded runs (runs in time order, as Runs returns them)
// into the runs of one split each. Runs that name their split belong to the
// split of that name and N. Others are grouped by their order alone: runs of
// one N, a new split starting where a shard comes again. A shard that removed
// nothing leaves no run, so by order alone the next split's run of that shard
// may be counted in this one; named splits have no such doubt. Runs on the
// whole store belong to none.
func Splits(runs []Run) []Split {
	var out []Split
	open := map[int]int{} // N → index in out of the unnamed split being filled
	type named struct {
		n  int
		id string
	}
	byID := map[named]int{} // a named split → its index in out
	for _, r := range runs {
		s, err := shard.Parse(r.Shard, nil)
		if err != nil || !s.Sharded() || strings.Contains(r.Run, noTrashSuffix) {
			// A run that a shard's sweep without the trash left blobs in
			// is no part of a split of trash runs.
			continue
		}
		var i int
		if r.Split != "" {
			var ok bool
			if i, ok = byID[named{s.N, r.Split}]; !ok {
				out = append(out, Split{N: s.N, ID: r.Split})
				i = len(out) - 1
				byID[named{s.N, r.Split}] = i
			}
		} else {
			var ok bool
			i, ok = open[s.N]
			if ok && slices.ContainsFunc(out[i].Runs, func(o Run) bool { return o.Shard == r.Shard }) {
				ok = false
			}
			if !ok {
				out = append(out, Split{N: s.N})
				i = len(out) - 1
				open[s.N] = i
			}
		}
		out[i].Runs = append(out[i].Runs, r)
		out[i].Blobs += r.Blobs
		out[i].Bytes += r.Bytes
	}
	for i := range out {
		have := map[string]bool{}
		for _, r := range out[i].Runs {
			have[r.Shard] = true
		}
		out[i].Missing = []int{}
		for k := range out[i].N {
			if !have[(shard.Spec{K: k, N: out[i].N}).String()] {
				out[i].Missing = append(out[i].Missing, k)
			}
		}
	}
	return out
}

// lockedRun checks what every operation on one trash run starts with: the
// store's lock still held, a store that keeps a trash, a run name that is
// one. It returns the store and its internal folder.
func lockedRun(l *storelock.Lock, run string) (store.Store, store.Internal, error) {
	if err := l.Held(); err != nil {
		return nil, nil, err
	}
	st := l.Store()
	in, ok := store.AsInternal(st)
	if !ok {
		return nil, nil, fmt.Errorf("trash: %s keeps no trash", st.Location())
	}
	if _, ok := parseRun(run); !ok {
		return nil, nil, &NoRunError{Store: st.Location(), Run: run, Malformed: true}
	}
	return st, in, nil
}
