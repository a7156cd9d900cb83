package trash

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
)

// recordName is the file, in a run's folder, that says which command made
// the run and what a later check of the run must know about it (RunRecord).
// It is written before the run's first move, so a run killed midway has it.
const recordName = ".run.json"

// reserved reports whether name, a file directly in a run's folder, is one
// of the run's own files rather than a blob.
func reserved(name string) bool { return name == manifestName || name == recordName }

// RunRecord is what a run says about itself, beside its blobs.
type RunRecord struct {
	// Command made the run: "gc" for a sweep (the default of runs made
	// before runs carried a record), "migrate" for --delete-source.
	Command string `json:"command"`
	// CopiedTo are the URL prefixes under which the run's blobs have proven
	// copies (migrate's destination, Options.CopiedTo): text naming a copy
	// there does not name the trashed blob.
	CopiedTo []string `json:"copied_to,omitempty"`
	// Expired says the run removed blobs by age, referenced or not (gc's
	// age policy without --keep-referenced): that sessions name its blobs
	// is no reason to put them back.
	Expired bool `json:"expired,omitempty"`
}

// Trashed is one blob in a trash run.
type Trashed struct {
	Run     string
	Key     string // the blob's key in the store, where a restore puts it
	Size    int64
	ModTime time.Time
}

// RunContents is one run with its record and its blobs.
type RunContents struct {
	Run    string
	Time   time.Time
	Record RunRecord
	Blobs  []Trashed
}

// Contents lists every run in the store's trash with its record and blobs,
// oldest run first, each run's blobs in key order. A run without a record
// (made before runs carried one) reads as a sweep's. Reading needs no lock.
func Contents(ctx context.Context, st store.Store) ([]RunContents, error) {
	in, ok := store.AsInternal(st)
	if !ok {
		return nil, nil
	}
	byRun := map[string]*RunContents{}
	err := in.ListInternal(ctx, Dir+"/", func(e store.Entry) error {
		run, name, ok := strings.Cut(strings.TrimPrefix(e.Key, Dir+"/"), "/")
		if !ok {
			return nil
		}
		r := byRun[run]
		if r == nil {
			n, ok := parseRun(run)
			if !ok {
				return nil // not a run of mediactl's
			}
			r = &RunContents{Run: run, Time: n.time, Record: RunRecord{Command: "gc"}}
			byRun[run] = r
		}
		if !reserved(name) {
			r.Blobs = append(r.Blobs, Trashed{Run: run, Key: name, Size: e.Size, ModTime: e.ModTime})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trash: list %s: %w", st.Location(), err)
	}
	out := make([]RunContents, 0, len(byRun))
	for _, r := range byRun {
		rec, err := readRecord(ctx, in, r.Run)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			r.Record = *rec
		}
		sort.Slice(r.Blobs, func(i, j int) bool { return r.Blobs[i].Key < r.Blobs[j].Key })
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Run < out[j].Run })
	return out, nil
}

// readRecord reads a run's record; nil when the run has none.
func readRecord(ctx context.Context, in store.Internal, run string) (*RunRecord, error) {
	rc, err := in.OpenInternal(ctx, Dir+"/"+run+"/"+recordName)
	if errors.Is(err, store.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trash: read the record of run %s: %w", run, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("trash: read the record of run %s: %w", run, err)
	}
	var rec RunRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		// A record that cannot be read says nothing of the run's copies: the
		// run is checked as a sweep's, which keeps more, never less.
		return &RunRecord{Command: "gc"}, nil
	}
	if rec.Command == "" {
		rec.Command = "gc"
	}
	return &rec, nil
}

// writeRecord writes a run's record before its first move.
func writeRecord(ctx context.Context, in store.Internal, run string, rec RunRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return in.PutInternal(ctx, Dir+"/"+run+"/"+recordName, bytes.NewReader(append(b, '\n')), store.PutOptions{ContentType: "application/json"})
}

// removeRecord removes the record of a run that holds nothing else, and the
// run's folder where the store removes emptied folders (a local store).
func removeRecord(ctx context.Context, in store.Internal, run string) error {
	name := Dir + "/" + run + "/" + recordName
	if bm, ok := in.(store.BatchMover); ok {
		err := bm.DeleteManyInternal(ctx, Dir+"/"+run, []string{name})[0]
		if err != nil && !errors.Is(err, store.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := in.DeleteInternal(ctx, name); err != nil && !errors.Is(err, store.ErrNotExist) {
		return err
	}
	return nil
}
