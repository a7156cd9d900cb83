package trash

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// MarksDir is the folder, inside the store's internal folder, of the marks
// of deferred deletes: one file per run, MarksDir/RUN.jsonl, a line per blob.
//
// On a bucket a trash run copies every blob it removes (a copy cannot be
// faster than the service copies), and a blob is out of the store from its
// move on. A mark removes nothing: the blob stays where it is, readable by
// every runtime, and a later run deletes it only if it is still
// unreferenced then, older than a grace period since it was marked, and
// unchanged since (see package gc). Undoing it is deleting the mark.
const MarksDir = "marks"

// Mark is one marked blob, as the run that marked it saw it.
type Mark struct {
	Key     string    `json:"key"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	ETag    string    `json:"etag,omitempty"`
}

// MarkRun is the marks of one run.
type MarkRun struct {
	Run   string
	Time  time.Time
	Shard string // "K/N", "" for the whole store
	Marks []Mark
}

// Marks lists the mark runs of the store, oldest first. Reading needs no
// lock. A mark file that cannot be read fails the listing: a run that does
// not know every mark could mark a blob twice, never delete one unasked,
// but it says so rather than guess.
func Marks(ctx context.Context, st store.Store) ([]MarkRun, error) {
	in, ok := store.AsInternal(st)
	if !ok {
		return nil, nil
	}
	var names []string
	err := in.ListInternal(ctx, MarksDir+"/", func(e store.Entry) error {
		if name := strings.TrimPrefix(e.Key, MarksDir+"/"); strings.HasSuffix(name, ".jsonl") && !strings.Contains(name, "/") {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trash: list the marks of %s: %w", st.Location(), err)
	}
	sort.Strings(names)
	var out []MarkRun
	for _, name := range names {
		run := strings.TrimSuffix(name, ".jsonl")
		n, ok := parseRun(run)
		if !ok {
			continue // not mediactl's
		}
		marks, err := readMarks(ctx, in, run)
		if err != nil {
			return nil, err
		}
		out = append(out, MarkRun{Run: run, Time: n.time, Shard: n.shard, Marks: marks})
	}
	return out, nil
}

func readMarks(ctx context.Context, in store.Internal, run string) ([]Mark, error) {
	return readRecords(ctx, in, MarksDir+"/"+run+".jsonl", "the marks of run "+run, "a mark", func(m Mark) bool { return m.Key != "" })
}

// readRecords reads a JSON Lines record of the store's internal folder
// (marks, deletes): what names it in errors, a line names each record, and
// valid says whether a line decoded to one.
func readRecords[T any](ctx context.Context, in store.Internal, name, what, line string, valid func(T) bool) ([]T, error) {
	rc, err := in.OpenInternal(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("trash: read %s: %w", what, err)
	}
	defer rc.Close()
	var out []T
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r T
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || !valid(r) {
			return nil, fmt.Errorf("trash: %s: a line that is not %s: %q", what, line, sc.Text())
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("trash: read %s: %w", what, err)
	}
	return out, nil
}

// MarkResult is what MarkItems did.
type MarkResult struct {
	Run    string `json:"run"`
	Marked int64  `json:"marked"`
	Bytes  int64  `json:"bytes"`
}

// MarkItems marks items for a deferred delete in a new mark run of the
// locked store, named as a trash run of the same start and shard would be
// (Options.Now, Options.Split; a later second when a run of any kind holds
// that name). Nothing is copied, moved or deleted.
func MarkItems(ctx context.Context, l *storelock.Lock, items Items, now time.Time, split string) (*MarkResult, error) {
	if err := l.Held(); err != nil {
		return nil, err
	}
	st := l.Store()
	in, ok := store.AsInternal(st)
	if !ok {
		return nil, fmt.Errorf("trash: %s cannot keep marks", st.Location())
	}
	if now.IsZero() {
		now = time.Now()
	}
	suffix, err := runSuffix(l, split)
	if err != nil {
		return nil, err
	}
	// A name no run of any kind holds: the deleted run of the same pass,
	// started in the same second, is another run (freeRun).
	run, err := freeRun(ctx, in, now, suffix)
	if err != nil {
		return nil, fmt.Errorf("trash: name a mark run: %w", err)
	}
	res := &MarkResult{Run: run}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range items.Len() {
		it := items.At(i)
		if err := enc.Encode(Mark(it)); err != nil {
			return nil, err
		}
		res.Marked++
		res.Bytes += it.Size
	}
	if res.Marked == 0 {
		return res, nil
	}
	if err := in.PutInternal(ctx, MarksDir+"/"+run+".jsonl", &buf, store.PutOptions{ContentType: "application/x-ndjson"}); err != nil {
		return nil, fmt.Errorf("trash: write the marks of run %s: %w", run, err)
	}
	return res, nil
}

// Unmark deletes a mark run: its blobs are no longer marked. It returns how
// many were, or a *NoRunError.
func Unmark(ctx context.Context, l *storelock.Lock, run string) (int64, error) {
	if err := l.Held(); err != nil {
		return 0, err
	}
	st := l.Store()
	in, ok := store.AsInternal(st)
	if !ok {
		return 0, &NoRunError{Store: st.Location(), Run: run}
	}
	if _, ok := parseRun(run); !ok {
		return 0, &NoRunError{Store: st.Location(), Run: run, Malformed: true}
	}
	marks, err := readMarks(ctx, in, run)
	if errors.Is(err, store.ErrNotExist) {
		return 0, &NoRunError{Store: st.Location(), Run: run}
	}
	if err != nil {
		return 0, err
	}
	if err := in.DeleteInternal(ctx, MarksDir+"/"+run+".jsonl"); err != nil && !errors.Is(err, store.ErrNotExist) {
		return 0, fmt.Errorf("trash: unmark run %s: %w", run, err)
	}
	return int64(len(marks)), nil
}

// isMarkRun reports whether run names a mark run of the store.
func isMarkRun(ctx context.Context, st store.Store, run string) bool {
	in, ok := store.AsInternal(st)
	if !ok {
		return false
	}
	rc, err := in.OpenInternal(ctx, MarksDir+"/"+run+".jsonl")
	if err != nil {
		return false
	}
	rc.Close()
	return true
}
