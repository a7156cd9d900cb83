package trash

// The record of a bucket's deletes for good, where its service keeps what is
// deleted: what gc restore brings back from the service's versions.

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

// DeletedDir is the folder, inside the store's internal folder, of the
// records of deleted runs: DeletedDir/RUN/run.json says what the run was and
// what the service keeps, and DeletedDir/RUN/NNNNNN.jsonl lists the blobs of
// one batch of deletes, a line each, written before that batch's delete is
// sent. A run killed at any point has recorded every blob it deleted (and
// perhaps a few it did not get to: a restore finds their keys still there
// and leaves them).
//
// Three deletes for good make deleted runs: the delete of marked blobs, a
// sweep without the trash (gc --delete --no-trash), and gc purge of copy
// trash runs (Purge). A purged blob's line names its trashed copy
// (Deleted.Trashed), whose versions hold it, and its key, where a restore
// brings it back.
const DeletedDir = "deleted"

// deletedHeader is the name of a deleted run's own record.
const deletedHeader = "run.json"

// DeletedHeader is what a deleted run says about itself.
type DeletedHeader struct {
	// Command made the run ("gc").
	Command string `json:"command"`
	// Time is when its deletes began.
	Time time.Time `json:"time"`
	// Recovery is what the bucket's service said it keeps of a deleted
	// object (store.Recovery's kind and detail), asked before the deletes;
	// KeptUntil, when the service names a retention, is when the last
	// deleted blob stops being kept (zero: until someone or a rule removes it).
	Recovery  string    `json:"recovery"`
	Detail    string    `json:"detail,omitempty"`
	KeptUntil time.Time `json:"kept_until,omitzero"`
	// Marks are the mark runs whose blobs it deleted.
	Marks []string `json:"marks,omitempty"`
	// Trash are the trash runs a purge deleted (Purge): a restore
	// of one of them, gone, names this run instead.
	Trash []string `json:"trash,omitempty"`
}

// Deleted is one blob a deleted run deleted, as its check before the
// delete described it.
type Deleted struct {
	Key     string    `json:"key"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	// ETag is the object's tag as the check saw it ("" where the check
	// described it without one: then size and time find its version).
	ETag      string    `json:"etag,omitempty"`
	DeletedAt time.Time `json:"deleted_at"`
	// Trashed, for a blob a purge deleted from a copy trash run, is its
	// trashed copy ("trash/RUN/KEY", as the store's internal folder names
	// it), whose versions hold it; Size, ModTime and ETag then describe
	// that copy, as the purge listed it. RestoreDeleted brings it back to
	// Key, not to the trash. "" for a blob deleted from its key.
	Trashed string `json:"trashed,omitempty"`
}

// DeletedRun is a deleted run as Deleteds lists it.
type DeletedRun struct {
	Run    string        `json:"run"`
	Shard  string        `json:"shard,omitempty"`
	Header DeletedHeader `json:"header"`
	Blobs  int64         `json:"blobs"`
	Bytes  int64         `json:"bytes"`
}

// DeletedOptions configure StartDeleted.
type DeletedOptions struct {
	// Now names the run; zero means time.Now().
	Now time.Time
	// Split names the split a shard's run is part of (Options.Split).
	Split    string
	Recovery store.Recovery
	Marks    []string
	// Command is the command the header names; "" is "gc".
	Command string
	// Trash are the trash runs a purge deletes (DeletedHeader.Trash).
	Trash []string
}

// DeletedLog records the deletes of one run: Move writes each batch of a
// bucket's deletes for good into it before it sends the batch (Options.Log).
type DeletedLog struct {
	in  store.Internal
	run string
	mu  sync.Mutex
	seq int
	// kept counts the blobs whose record stays (their delete was sent).
	kept int64
}

// Run is the name of the deleted run, which gc restore takes.
func (d *DeletedLog) Run() string { return d.run }

// Recorded is how many deleted blobs the log lists.
func (d *DeletedLog) Recorded() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.kept
}

// StartDeleted writes the record of a new deleted run of the locked store,
// named as a trash run of the same start and shard would be (a later second
// when a run of any kind holds that name), and returns the log its deletes
// go into. Nothing is deleted.
func StartDeleted(ctx context.Context, l *storelock.Lock, opts DeletedOptions) (*DeletedLog, error) {
	if err := l.Held(); err != nil {
		return nil, err
	}
	st := l.Store()
	in, ok := store.AsInternal(st)
	if !ok {
		return nil, fmt.Errorf("trash: %s cannot keep a record of its deletes", st.Location())
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	suffix, err := runSuffix(l, opts.Split)
	if err != nil {
		return nil, err
	}
	// A name no run of any kind holds: a mark run or a trash run started in
	// the same second is another run (freeRun). The header's time is
	// still when the deletes began.
	run, err := freeRun(ctx, in, now, suffix)
	if err != nil {
		return nil, fmt.Errorf("trash: name a deleted run: %w", err)
	}
	cmd := opts.Command
	if cmd == "" {
		cmd = "gc"
	}
	h := DeletedHeader{Command: cmd, Time: now.UTC(), Recovery: opts.Recovery.Kind, Detail: opts.Recovery.Detail, Marks: opts.Marks, Trash: opts.Trash}
	if opts.Recovery.Retention > 0 {
		h.KeptUntil = now.Add(opts.Recovery.Retention).UTC()
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if err := in.PutInternal(ctx, DeletedDir+"/"+run+"/"+deletedHeader, bytes.NewReader(append(b, '\n')), store.PutOptions{ContentType: "application/json"}); err != nil {
		return nil, fmt.Errorf("trash: write the record of deleted run %s: %w", run, err)
	}
	return &DeletedLog{in: in, run: run}, nil
}

// batchName is the record of batch seq of run.
func batchName(run string, seq int) string {
	return fmt.Sprintf("%s/%s/%06d.jsonl", DeletedDir, run, seq)
}

// record writes the blobs about to be deleted (etags[i], when not "", is
// the tag the check saw of items[i]) as a new batch of the run, and returns
// its number. Nothing of the batch may be deleted when it fails.
func (d *DeletedLog) record(ctx context.Context, items []Item, etags []string) (int, []Deleted, error) {
	now := time.Now().UTC()
	lines := make([]Deleted, len(items))
	for i, it := range items {
		tag := it.ETag
		if i < len(etags) && etags[i] != "" {
			tag = etags[i]
		}
		lines[i] = Deleted{Key: it.Key, Size: it.Size, ModTime: it.ModTime, ETag: tag, DeletedAt: now}
	}
	seq, err := d.recordLines(ctx, lines)
	return seq, lines, err
}

// recordLines writes lines as a new batch of the run and returns its
// number. Nothing of the batch may be deleted when it fails.
func (d *DeletedLog) recordLines(ctx context.Context, lines []Deleted) (int, error) {
	d.mu.Lock()
	d.seq++
	seq := d.seq
	d.mu.Unlock()
	if err := d.write(ctx, seq, lines); err != nil {
		return 0, err
	}
	return seq, nil
}

// settle rewrites batch seq with only the blobs whose delete was sent
// (sent[i]), once the batch's deletes are done; a batch none of whose
// deletes was sent goes. A failure leaves the batch as recorded: more blobs
// than were deleted, which a restore finds still there.
func (d *DeletedLog) settle(ctx context.Context, seq int, lines []Deleted, sent []bool) {
	var keep []Deleted
	for i, l := range lines {
		if sent[i] {
			keep = append(keep, l)
		}
	}
	d.mu.Lock()
	d.kept += int64(len(keep))
	d.mu.Unlock()
	switch {
	case len(keep) == len(lines):
	case len(keep) == 0:
		_ = d.in.DeleteInternal(ctx, batchName(d.run, seq))
	default:
		_ = d.write(ctx, seq, keep)
	}
}

func (d *DeletedLog) write(ctx context.Context, seq int, lines []Deleted) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	err := store.RetryThrottled(ctx, func() error {
		return d.in.PutInternal(ctx, batchName(d.run, seq), bytes.NewReader(buf.Bytes()), store.PutOptions{ContentType: "application/x-ndjson"})
	})
	if err != nil {
		return fmt.Errorf("trash: record the deletes of run %s: %w", d.run, err)
	}
	return nil
}

// Finish settles the record once the run's deletes are done: it returns
// the run's name when the record lists a deleted blob, and drops the
// record, returning "", when it lists none (nothing was deleted). It reads
// no context's end: it runs after an interrupt too. A nil log has no run.
func (d *DeletedLog) Finish(ctx context.Context) (string, error) {
	if d == nil {
		return "", nil
	}
	if d.Recorded() > 0 {
		return d.run, nil
	}
	ctx = context.WithoutCancel(ctx)
	var left bool
	err := d.in.ListInternal(ctx, DeletedDir+"/"+d.run+"/", func(e store.Entry) error {
		if !strings.HasSuffix(e.Key, "/"+deletedHeader) {
			left = true
		}
		return nil
	})
	if err == nil && !left {
		err = d.in.DeleteInternal(ctx, DeletedDir+"/"+d.run+"/"+deletedHeader)
	}
	if err != nil {
		return "", fmt.Errorf("trash: drop the empty record of deleted run %s: %w", d.run, err)
	}
	return "", nil
}

// Deleteds lists the deleted runs of the store, oldest first. Reading needs
// no lock; a record that cannot be read fails the listing.
func Deleteds(ctx context.Context, st store.Store) ([]DeletedRun, error) {
	in, ok := store.AsInternal(st)
	if !ok {
		return nil, nil
	}
	files, err := deletedFiles(ctx, in, "")
	if err != nil {
		return nil, fmt.Errorf("trash: list the deleted runs of %s: %w", st.Location(), err)
	}
	runs := make([]string, 0, len(files))
	for run := range files {
		runs = append(runs, run)
	}
	sort.Strings(runs)
	var out []DeletedRun
	for _, run := range runs {
		n, _ := parseRun(run)
		h, lines, err := readDeleted(ctx, in, run, files[run])
		if err != nil {
			return nil, err
		}
		r := DeletedRun{Run: run, Shard: n.shard, Header: h}
		for _, l := range lines {
			r.Blobs++
			r.Bytes += l.Size
		}
		out = append(out, r)
	}
	return out, nil
}

// deletedBatches are the batch files of deleted run run of st, in order; a
// run with no record is a *NoRunError.
func deletedBatches(ctx context.Context, st store.Store, in store.Internal, run string) ([]string, error) {
	files, err := deletedFiles(ctx, in, run)
	if err != nil {
		return nil, fmt.Errorf("trash: list deleted run %s: %w", run, err)
	}
	batches, ok := files[run]
	if !ok {
		return nil, &NoRunError{Store: st.Location(), Run: run}
	}
	return batches, nil
}

// DeletedBlobs returns the blobs a deleted run of the store lists, in the
// order they were deleted, or a *NoRunError. Reading needs no lock.
func DeletedBlobs(ctx context.Context, st store.Store, run string) ([]Deleted, error) {
	in, ok := store.AsInternal(st)
	if !ok {
		return nil, &NoRunError{Store: st.Location(), Run: run}
	}
	if _, ok := parseRun(run); !ok {
		return nil, &NoRunError{Store: st.Location(), Run: run, Malformed: true}
	}
	batches, err := deletedBatches(ctx, st, in, run)
	if err != nil {
		return nil, err
	}
	_, lines, err := readDeleted(ctx, in, run, batches)
	return lines, err
}

// deletedFiles lists the batch files of the deleted runs (of run alone, when
// not ""), by run; a run with only its header is listed with none.
func deletedFiles(ctx context.Context, in store.Internal, run string) (map[string][]string, error) {
	prefix := DeletedDir + "/"
	if run != "" {
		prefix += run + "/"
	}
	out := map[string][]string{}
	err := in.ListInternal(ctx, prefix, func(e store.Entry) error {
		r, name, ok := strings.Cut(strings.TrimPrefix(e.Key, DeletedDir+"/"), "/")
		if !ok || strings.Contains(name, "/") {
			return nil
		}
		if _, ok := parseRun(r); !ok {
			return nil // not mediactl's
		}
		if _, seen := out[r]; !seen {
			out[r] = nil
		}
		if name != deletedHeader && strings.HasSuffix(name, ".jsonl") {
			out[r] = append(out[r], name)
		}
		return nil
	})
	for r := range out {
		sort.Strings(out[r])
	}
	return out, err
}

// readDeleted reads a deleted run's header and the blobs its batches list,
// in the order they were deleted. A run without a header (its write failed,
// or it was removed by hand) reads as an empty header.
func readDeleted(ctx context.Context, in store.Internal, run string, batches []string) (DeletedHeader, []Deleted, error) {
	var h DeletedHeader
	if rc, err := in.OpenInternal(ctx, DeletedDir+"/"+run+"/"+deletedHeader); err == nil {
		err = json.NewDecoder(rc).Decode(&h)
		rc.Close()
		if err != nil {
			return h, nil, fmt.Errorf("trash: the record of deleted run %s: %w", run, err)
		}
	} else if !errors.Is(err, store.ErrNotExist) {
		return h, nil, fmt.Errorf("trash: read the record of deleted run %s: %w", run, err)
	}
	var out []Deleted
	for _, name := range batches {
		lines, err := readBatch(ctx, in, run, name)
		if err != nil {
			return h, nil, err
		}
		out = append(out, lines...)
	}
	return h, out, nil
}

func readBatch(ctx context.Context, in store.Internal, run, name string) ([]Deleted, error) {
	return readRecords(ctx, in, DeletedDir+"/"+run+"/"+name, "the deletes of run "+run, "a deleted blob", func(d Deleted) bool { return d.Key != "" })
}

// isDeletedRun reports whether run names a deleted run of the store.
func isDeletedRun(ctx context.Context, st store.Store, run string) bool {
	in, ok := store.AsInternal(st)
	if !ok {
		return false
	}
	if _, ok := parseRun(run); !ok {
		return false
	}
	files, err := deletedFiles(ctx, in, run)
	return err == nil && len(files) > 0
}

// DeletedRestore is what RestoreDeleted did.
type DeletedRestore struct {
	Run      string `json:"run"`
	Restored int64  `json:"restored"`
	Bytes    int64  `json:"bytes"`
	// Kept are blobs whose key holds a blob again (a runtime uploaded it
	// since the delete): not overwritten.
	Kept []Skip `json:"kept"`
	// NotRecoverable are blobs the service keeps no version of (expired or
	// removed since).
	NotRecoverable []Skip `json:"not_recoverable"`
	NotAttempted   int64  `json:"not_attempted"`
}

// trashedRun is the trash run whose copy of d's key d.Trashed names, or ""
// when it names no such copy (another key's, or no run's).
func trashedRun(d Deleted) string {
	run, key, ok := strings.Cut(strings.TrimPrefix(d.Trashed, Dir+"/"), "/")
	if !ok || key != d.Key || !strings.HasPrefix(d.Trashed, Dir+"/") {
		return ""
	}
	return run
}

// RestoreDeleted brings the blobs of a deleted run of the locked store back
// from the versions its service keeps (store.VersionRestorer), a blob at a
// time. A key that holds a blob again is kept, never overwritten; a blob
// whose version is gone is not recoverable. The run's record then lists
// only the blobs not restored, and goes when none is left. A run that does
// not exist is a *NoRunError; a service on which restoring versions is not
// implemented, a *store.VersionRestoreUnsupportedError, with nothing done.
func RestoreDeleted(ctx context.Context, l *storelock.Lock, run string) (*DeletedRestore, error) {
	st, in, err := lockedRun(l, run)
	if err != nil {
		return nil, err
	}
	batches, err := deletedBatches(ctx, st, in, run)
	if err != nil {
		return nil, err
	}
	res := &DeletedRestore{Run: run, Kept: []Skip{}, NotRecoverable: []Skip{}}
	vr, ok := store.AsVersionRestorer(st)
	if !ok {
		return res, fmt.Errorf("trash: %s cannot restore from versions", st.Location())
	}
	h, _, err := readDeleted(ctx, in, run, nil)
	if err != nil {
		return res, err
	}
	if h.Recovery != "" && !store.RestoresKind(h.Recovery) {
		// What the service keeps is there, but not where versions are.
		return res, &store.VersionRestoreUnsupportedError{Store: st.Location(), Kind: h.Recovery}
	}
	// A key deleted twice in one run is restored once. A purge's line is
	// told apart by its trashed copy too: two runs' copies of one key are
	// two blobs. A purge records its runs oldest first, a batch holding
	// one run's blobs: its batches are restored newest first, so that a key
	// gets back what it held last, and an older copy finds it taken (kept).
	if len(h.Trash) > 0 {
		batches = slices.Clone(batches)
		slices.Reverse(batches)
	}
	copies := map[string]bool{} // the trashed copies the purge's header names
	for _, r := range h.Trash {
		copies[r] = true
	}
	done := map[[2]string]bool{}
	for bi, name := range batches {
		lines, err := readBatch(ctx, in, run, name)
		if err != nil {
			return res, err
		}
		var left []Deleted
		for i, d := range lines {
			id := [2]string{d.Key, d.Trashed}
			if done[id] {
				continue
			}
			if ctx.Err() != nil {
				left = append(left, lines[i:]...)
				res.NotAttempted += int64(len(lines) - i)
				for _, rest := range batches[bi+1:] {
					more, _ := readBatch(context.WithoutCancel(ctx), in, run, rest)
					res.NotAttempted += int64(len(more))
				}
				if err := rewriteBatch(context.WithoutCancel(ctx), in, run, name, left); err != nil {
					return res, err
				}
				return res, ctx.Err()
			}
			if d.Trashed != "" && !copies[trashedRun(d)] {
				// The line must name the copy of its own key in a run the
				// purge deleted: anything else would put another file's
				// bytes under the key.
				res.NotRecoverable = append(res.NotRecoverable, Skip{d.Key, fmt.Sprintf("the record names %s, no copy of this key in the trash runs the purge deleted", d.Trashed)})
				left = append(left, d)
				continue
			}
			_, err := vr.RestoreVersion(ctx, d.Key, store.Version{Size: d.Size, ModTime: d.ModTime, ETag: d.ETag, From: d.Trashed})
			var unsupported *store.VersionRestoreUnsupportedError
			switch {
			case err == nil:
				done[id] = true
				res.Restored++
				res.Bytes += d.Size
			case errors.As(err, &unsupported):
				return res, err
			case errors.Is(err, store.ErrExist):
				done[id] = true
				res.Kept = append(res.Kept, Skip{d.Key, "a blob with this key exists again; not overwritten"})
				left = append(left, d)
			case errors.Is(err, store.ErrInvalidKey):
				res.NotRecoverable = append(res.NotRecoverable, Skip{d.Key, fmt.Sprintf("not a key of the store: %v", err)})
				left = append(left, d)
			case errors.Is(err, store.ErrNoVersion):
				res.NotRecoverable = append(res.NotRecoverable, Skip{d.Key, "the service no longer keeps its version (expired or removed)"})
				left = append(left, d)
			case interrupted(ctx, err):
				left = append(left, lines[i:]...)
				res.NotAttempted += int64(len(lines) - i)
				_ = rewriteBatch(context.WithoutCancel(ctx), in, run, name, left)
				return res, err
			default:
				left = append(left, lines[i:]...)
				_ = rewriteBatch(context.WithoutCancel(ctx), in, run, name, left)
				return res, fmt.Errorf("trash: restore %s from its version: %w", d.Key, err)
			}
		}
		if err := rewriteBatch(ctx, in, run, name, left); err != nil {
			return res, err
		}
	}
	if len(res.Kept) == 0 && len(res.NotRecoverable) == 0 {
		if err := in.DeleteInternal(ctx, DeletedDir+"/"+run+"/"+deletedHeader); err != nil && !errors.Is(err, store.ErrNotExist) {
			return res, fmt.Errorf("trash: remove the record of deleted run %s: %w", run, err)
		}
	}
	return res, nil
}

// rewriteBatch replaces a batch's record with the blobs left in it, or
// removes it when none is.
func rewriteBatch(ctx context.Context, in store.Internal, run, name string, left []Deleted) error {
	key := DeletedDir + "/" + run + "/" + name
	if len(left) == 0 {
		if err := in.DeleteInternal(ctx, key); err != nil && !errors.Is(err, store.ErrNotExist) {
			return fmt.Errorf("trash: update deleted run %s: %w", run, err)
		}
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, d := range left {
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	if err := in.PutInternal(ctx, key, &buf, store.PutOptions{ContentType: "application/x-ndjson"}); err != nil {
		return fmt.Errorf("trash: update deleted run %s: %w", run, err)
	}
	return nil
}

// DropDeleted removes the record of a deleted run (gc purge): the blobs are
// deleted already; what the service keeps of them is untouched. It returns
// how many blobs the record listed, or a *NoRunError.
func DropDeleted(ctx context.Context, l *storelock.Lock, run string) (int64, error) {
	st, in, err := lockedRun(l, run)
	if err != nil {
		return 0, err
	}
	files, err := deletedFiles(ctx, in, run)
	if err != nil {
		return 0, fmt.Errorf("trash: list deleted run %s: %w", run, err)
	}
	batches, ok := files[run]
	if !ok {
		return 0, &NoRunError{Store: st.Location(), Run: run}
	}
	var n int64
	for _, name := range batches {
		lines, err := readBatch(ctx, in, run, name)
		if err != nil {
			return n, err
		}
		if err := in.DeleteInternal(ctx, DeletedDir+"/"+run+"/"+name); err != nil && !errors.Is(err, store.ErrNotExist) {
			return n, fmt.Errorf("trash: drop deleted run %s: %w", run, err)
		}
		n += int64(len(lines))
	}
	if err := in.DeleteInternal(ctx, DeletedDir+"/"+run+"/"+deletedHeader); err != nil && !errors.Is(err, store.ErrNotExist) {
		return n, fmt.Errorf("trash: drop deleted run %s: %w", run, err)
	}
	return n, nil
}
