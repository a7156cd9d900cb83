package trash

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// EachTrashed calls fn for every blob of every run in the store's trash,
// with its run's record, run by run in the order of their names, without
// holding them all: a trash may hold millions. A run without a record (made
// before runs carried one) reads as a sweep's. Reading needs no lock.
func EachTrashed(ctx context.Context, st store.Store, fn func(rec RunRecord, b Trashed) error) error {
	in, ok := store.AsInternal(st)
	if !ok {
		return nil
	}
	runs, err := Runs(ctx, st)
	if err != nil {
		return fmt.Errorf("trash: list %s: %w", st.Location(), err)
	}
	for _, r := range runs {
		rec := RunRecord{Command: "gc"}
		if got, err := readRecord(ctx, in, r.Run); err != nil {
			return err
		} else if got != nil {
			rec = *got
		}
		prefix := Dir + "/" + r.Run + "/"
		err := in.ListInternal(ctx, prefix, func(e store.Entry) error {
			name := strings.TrimPrefix(e.Key, prefix)
			if reserved(name) {
				return nil
			}
			return fn(rec, Trashed{Run: r.Run, Key: name, Size: e.Size, ModTime: e.ModTime})
		})
		if err != nil {
			return fmt.Errorf("trash: list run %s of %s: %w", r.Run, st.Location(), err)
		}
	}
	return nil
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
