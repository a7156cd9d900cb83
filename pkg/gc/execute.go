package gc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
)

// TrashDir is the folder, inside the store's internal folder, that holds one
// folder per run of removed blobs.
const TrashDir = "trash"

// ExecOptions configure Execute.
type ExecOptions struct {
	// NoTrash deletes permanently instead of moving into the trash.
	NoTrash bool
	// Jobs is how many blobs are removed at once (buckets gain from it); 0
	// means 8 for buckets and 1 for local stores, where a rename is cheap.
	Jobs int
	// Now names the run; zero means time.Now().
	Now time.Time
	// Progress, when set, is told about each blob removed.
	Progress interface{ Add(int64) }
}

// Result is what Execute did.
type Result struct {
	// Run names the trash folder of this run ("" with NoTrash).
	Run     string `json:"run,omitempty"`
	Trashed int64  `json:"trashed"`
	Deleted int64  `json:"deleted"`
	Bytes   int64  `json:"bytes"`
	// Skipped are candidates left in place because they changed (or vanished)
	// since the plan was made.
	Skipped []Skip `json:"skipped"`
	// Failed are candidates that could not be removed; they are still in the
	// store.
	Failed []Skip `json:"failed"`
}

// ErrUnusableTrash is wrapped by Execute's error when a move met an unsafe
// destination (the trash folder, or a folder in it, is a symbolic link or a
// file; see store.ErrUnsafePath). The run stops there: the candidates not yet
// moved stay in the store. That is a failure of the run, never a fact about a
// blob.
var ErrUnusableTrash = errors.New("the trash cannot be used")

// unusableTrash is Execute's error for a run stopped by an unsafe destination.
func unusableTrash(st string, res *Result, notAttempted int, err error) error {
	return fmt.Errorf("gc: %w in %s: %d blobs moved, %d not attempted, left in the store: %w", ErrUnusableTrash, st, res.Trashed, notAttempted, err)
}

// Skip is a candidate left alone, and why.
type Skip struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// manifestLine records one trashed blob.
type manifestLine struct {
	Key     string    `json:"key"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
}

// Execute removes the plan's candidates. It refuses an incomplete plan. Each
// candidate is stat'ed again first and skipped when it changed since the plan
// (size or modification time) or is newer than the plan's cutoff: a writer
// re-created it. By default removal moves the blob into TrashDir/RUN/ of the
// store's internal folder — a rename on a local store, so a blob is at every
// moment either in the store or in the trash — and writes RUN's manifest.
// A move whose destination is unsafe (store.ErrUnsafePath: the trash folder
// is a file or a symbolic link, or one became a link meanwhile) stops the run:
// Execute returns an error wrapping ErrUnusableTrash, with that move among
// Result.Failed and the candidates not attempted left in the store.
func (p *Plan) Execute(ctx context.Context, st store.Store, opts ExecOptions) (*Result, error) {
	if !p.Complete {
		return nil, ErrIncomplete
	}
	if st.Location() != p.Store {
		return nil, fmt.Errorf("gc: the plan is for %s, not %s", p.Store, st.Location())
	}
	in, ok := st.(store.Internal)
	if !ok && !opts.NoTrash {
		return nil, fmt.Errorf("gc: %s cannot keep a trash; use NoTrash", st.Location())
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	res := &Result{Skipped: []Skip{}, Failed: []Skip{}}
	if !opts.NoTrash {
		res.Run = RunID(now)
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = 1
		if _, isBucket := st.(store.Bucket); isBucket {
			jobs = 8
		}
	}

	var mu sync.Mutex
	var manifest bytes.Buffer
	enc := json.NewEncoder(&manifest)
	if bm, ok := st.(batchMover); ok && !opts.NoTrash {
		err := p.sweepBatches(ctx, bm, res, enc, opts.Progress)
		return res, p.finish(ctx, in, res, &manifest, opts.NoTrash, err)
	}
	work := make(chan Candidate)
	var wg sync.WaitGroup
	var unsafe error // the first unsafe destination: the run stops
	attempted := 0
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				mu.Lock()
				stop := unsafe != nil
				if !stop {
					attempted++
				}
				mu.Unlock()
				if stop {
					continue
				}
				skip, err := p.remove(ctx, st, in, c, res.Run, opts.NoTrash)
				mu.Lock()
				switch {
				case err != nil && errors.Is(err, store.ErrUnsafePath):
					res.Failed = append(res.Failed, Skip{c.Key, err.Error()})
					if unsafe == nil {
						unsafe = err
					}
				case err != nil:
					res.Failed = append(res.Failed, Skip{c.Key, err.Error()})
				case skip != "":
					res.Skipped = append(res.Skipped, Skip{c.Key, skip})
				default:
					res.Bytes += c.Size
					if opts.NoTrash {
						res.Deleted++
					} else {
						res.Trashed++
						enc.Encode(manifestLine{c.Key, c.Size, c.ModTime})
					}
					if opts.Progress != nil {
						opts.Progress.Add(1)
					}
				}
				mu.Unlock()
			}
		}()
	}
	var stopErr error
	for c := range p.Candidates.All() {
		if err := ctx.Err(); err != nil {
			stopErr = err
			break
		}
		mu.Lock()
		stop := unsafe != nil
		mu.Unlock()
		if stop {
			break
		}
		work <- c
	}
	close(work)
	wg.Wait()
	if unsafe != nil {
		stopErr = unusableTrash(p.Store, res, p.Candidates.Len()-attempted, unsafe)
	}
	return res, p.finish(ctx, in, res, &manifest, opts.NoTrash, stopErr)
}

// finish sorts the result and writes the run's manifest.
func (p *Plan) finish(ctx context.Context, in store.Internal, res *Result, manifest *bytes.Buffer, noTrash bool, stopErr error) error {
	sortSkips(res.Skipped)
	sortSkips(res.Failed)
	if !noTrash && res.Trashed > 0 {
		// The trash folder itself is the record Restore works from; the
		// manifest adds sizes and original times for people and tools.
		name := res.Run + "/" + manifestName
		if err := in.PutInternal(context.WithoutCancel(ctx), TrashDir+"/"+name, manifest, store.PutOptions{ContentType: "application/x-ndjson"}); err != nil {
			return fmt.Errorf("gc: write manifest %s: %w", name, err)
		}
	}
	return stopErr
}

// batchMover is a local store's bulk move into its internal folder: one
// checked rename per blob and one fsync per directory per batch.
type batchMover interface {
	MoveManyToInternal(ctx context.Context, moves []store.InternalMove) []error
}

// sweepBatches moves the candidates into the trash in batches. The store
// checks each blob against the plan right before its rename.
func (p *Plan) sweepBatches(ctx context.Context, bm batchMover, res *Result, enc *json.Encoder, progress interface{ Add(int64) }) error {
	// Large batches: each ends with an fsync of the directories it touched,
	// which on a directory of a million entries costs tens of milliseconds.
	// Keys are rendered from the plan one batch at a time.
	const batch = 65536
	n := p.Candidates.Len()
	cs := make([]Candidate, 0, min(n, batch))
	moves := make([]store.InternalMove, 0, min(n, batch))
	for start := 0; start < n; start += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		cs, moves = cs[:0], moves[:0]
		for i := start; i < min(start+batch, n); i++ {
			c := p.Candidates.At(i)
			cs = append(cs, c)
			moves = append(moves, store.InternalMove{Key: c.Key, Name: TrashDir + "/" + res.Run + "/" + c.Key, Size: c.Size, ModTime: c.ModTime})
		}
		var unsafe error
		notAttempted := 0
		for i, err := range bm.MoveManyToInternal(ctx, moves) {
			c := cs[i]
			switch {
			case err == nil:
				res.Trashed++
				res.Bytes += c.Size
				enc.Encode(manifestLine{c.Key, c.Size, c.ModTime})
				if progress != nil {
					progress.Add(1)
				}
			// Errors about the destination first: they say nothing of the blob.
			case errors.Is(err, store.ErrUnsafePath):
				res.Failed = append(res.Failed, Skip{c.Key, err.Error()})
				if unsafe == nil {
					unsafe = err
				}
			case errors.Is(err, store.ErrNotAttempted):
				notAttempted++
			case errors.Is(err, store.ErrChanged):
				res.Skipped = append(res.Skipped, Skip{c.Key, "changed since the plan (a writer touched it)"})
			case errors.Is(err, store.ErrNotExist):
				res.Skipped = append(res.Skipped, Skip{c.Key, "gone since the plan"})
			case errors.Is(err, store.ErrNotRegular):
				res.Skipped = append(res.Skipped, Skip{c.Key, "no longer a regular file"})
			default:
				res.Failed = append(res.Failed, Skip{c.Key, err.Error()})
			}
		}
		if unsafe != nil {
			return unusableTrash(p.Store, res, notAttempted+n-min(start+batch, n), unsafe)
		}
	}
	return nil
}

const manifestName = ".manifest.jsonl"

// remove takes one candidate out, after checking it is still the blob planned.
func (p *Plan) remove(ctx context.Context, st store.Store, in store.Internal, c Candidate, run string, noTrash bool) (string, error) {
	now, err := st.Stat(ctx, c.Key)
	switch {
	case errors.Is(err, store.ErrNotExist):
		return "gone since the plan", nil
	case err != nil:
		return "", err
	case !now.Regular():
		return "no longer a regular file", nil
	case now.Size != c.Size || !sameTime(st, now.ModTime, c.ModTime):
		return "changed since the plan (a writer touched it)", nil
	case !now.ModTime.Before(p.Cutoff):
		return "modified after the cutoff", nil
	}
	return "", store.RetryThrottled(ctx, func() error {
		if noTrash {
			return st.Delete(ctx, c.Key)
		}
		return in.MoveToInternal(ctx, c.Key, TrashDir+"/"+run+"/"+c.Key)
	})
}

// sameTime compares modification times as precisely as the store reports them
// everywhere: a bucket's listing has milliseconds, its HEAD whole seconds.
func sameTime(st store.Store, a, b time.Time) bool {
	if _, isBucket := st.(store.Bucket); isBucket {
		return a.Truncate(time.Second).Equal(b.Truncate(time.Second))
	}
	return a.Equal(b)
}

func sortSkips(s []Skip) { sort.Slice(s, func(i, j int) bool { return s[i].Key < s[j].Key }) }

// RunID names a run's trash folder: its UTC start time, sortable, and the
// process id so that two runs in one second differ.
func RunID(t time.Time) string {
	return fmt.Sprintf("%s-%d", t.UTC().Format("20060102T150405Z"), os.Getpid())
}

// runTime reads the time back from a RunID.
func runTime(run string) (time.Time, bool) {
	stamp, _, _ := strings.Cut(run, "-")
	t, err := time.Parse("20060102T150405Z", stamp)
	return t, err == nil
}

// TrashRun describes one run in the trash.
type TrashRun struct {
	Run   string    `json:"run"`
	Time  time.Time `json:"time"`
	Blobs int64     `json:"blobs"`
	Bytes int64     `json:"bytes"`
}

// Runs lists the runs in the store's trash, oldest first.
func Runs(ctx context.Context, st store.Store) ([]TrashRun, error) {
	in, ok := st.(store.Internal)
	if !ok {
		return nil, nil
	}
	byRun := map[string]*TrashRun{}
	err := in.ListInternal(ctx, TrashDir+"/", func(e store.Entry) error {
		rest := strings.TrimPrefix(e.Key, TrashDir+"/")
		run, name, ok := strings.Cut(rest, "/")
		if !ok {
			return nil
		}
		r := byRun[run]
		if r == nil {
			t, _ := runTime(run)
			r = &TrashRun{Run: run, Time: t}
			byRun[run] = r
		}
		if name != manifestName {
			r.Blobs++
			r.Bytes += e.Size
		}
		return nil
	})
	var out []TrashRun
	for _, r := range byRun {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Run < out[j].Run })
	return out, err
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	Restored int64  `json:"restored"`
	Bytes    int64  `json:"bytes"`
	Kept     []Skip `json:"kept"` // left in the trash (a blob of that key exists again)
}

// Restore moves every blob of a run back from the trash to its key. A key that
// exists again in the store is not overwritten: its trashed copy stays in the
// trash and is reported. On a local store the move is a rename, so contents
// and modification times come back as they were.
func Restore(ctx context.Context, st store.Store, run string) (*RestoreResult, error) {
	in, ok := st.(store.Internal)
	if !ok {
		return nil, fmt.Errorf("gc: %s keeps no trash", st.Location())
	}
	if run == "" || strings.ContainsAny(run, "/\\") || run == "." || run == ".." {
		return nil, fmt.Errorf("gc: %q is not a run name (see 'mediactl gc runs')", run)
	}
	prefix := TrashDir + "/" + run + "/"
	var names []store.Entry
	if err := in.ListInternal(ctx, prefix, func(e store.Entry) error {
		names = append(names, e)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("gc: list run %s: %w", run, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("gc: no run %s in the trash of %s", run, st.Location())
	}
	res := &RestoreResult{Kept: []Skip{}}
	for _, e := range names {
		key := strings.TrimPrefix(e.Key, prefix)
		if key == manifestName {
			continue
		}
		err := store.RetryThrottled(ctx, func() error { return in.MoveFromInternal(ctx, e.Key, key) })
		switch {
		case err == nil:
			res.Restored++
			res.Bytes += e.Size
		case errors.Is(err, store.ErrExist):
			res.Kept = append(res.Kept, Skip{key, "a blob with this key exists again; the trashed copy stays in the trash"})
		default:
			return res, fmt.Errorf("gc: restore %s: %w", key, err)
		}
	}
	if len(res.Kept) == 0 {
		if err := store.RetryThrottled(ctx, func() error { return in.DeleteInternal(ctx, prefix+manifestName) }); err != nil && !errors.Is(err, store.ErrNotExist) {
			return res, fmt.Errorf("gc: remove manifest of %s: %w", run, err)
		}
	}
	return res, nil
}

// PurgeResult is what Purge did.
type PurgeResult struct {
	Runs  []string `json:"runs"`
	Blobs int64    `json:"blobs"`
	Bytes int64    `json:"bytes"`
}

// Purge deletes, for good, the trash runs that started before cutoff.
func Purge(ctx context.Context, st store.Store, cutoff time.Time) (*PurgeResult, error) {
	in, ok := st.(store.Internal)
	if !ok {
		return &PurgeResult{Runs: []string{}}, nil
	}
	runs, err := Runs(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("gc: list trash: %w", err)
	}
	res := &PurgeResult{Runs: []string{}}
	for _, r := range runs {
		if r.Time.IsZero() || !r.Time.Before(cutoff) {
			continue
		}
		var names []store.Entry
		if err := in.ListInternal(ctx, TrashDir+"/"+r.Run+"/", func(e store.Entry) error {
			names = append(names, e)
			return nil
		}); err != nil {
			return res, err
		}
		for _, e := range names {
			if err := store.RetryThrottled(ctx, func() error { return in.DeleteInternal(ctx, e.Key) }); err != nil && !errors.Is(err, store.ErrNotExist) {
				return res, fmt.Errorf("gc: purge %s: %w", e.Key, err)
			}
		}
		res.Runs = append(res.Runs, r.Run)
		res.Blobs += r.Blobs
		res.Bytes += r.Bytes
	}
	return res, nil
}
