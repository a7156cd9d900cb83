package main

// gc runs: the trash runs, mark runs and deleted runs of one store.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/trash"
)

// markRunJSON is a mark run (a bucket's deferred deletes) in gc runs.
type markRunJSON struct {
	Run   string    `json:"run"`
	Time  time.Time `json:"time"`
	Blobs int64     `json:"blobs"`
	Bytes int64     `json:"bytes"`
	Shard string    `json:"shard,omitempty"`
}

type runsDocument struct {
	envelope
	Store string      `json:"store"`
	Runs  []trash.Run `json:"runs"`
	// Marks are the mark runs of a bucket: blobs still in the store, marked
	// for a later gc --delete.
	Marks []markRunJSON `json:"marks,omitempty"`
	// Deleted are the deleted runs of a bucket whose service keeps deleted
	// objects: blobs deleted for good, recorded for gc restore.
	Deleted []deletedRunJSON `json:"deleted,omitempty"`
	// Splits are the sharded runs, grouped by the split they belong to.
	Splits []trash.Split `json:"splits"`
}

func runGCRuns(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	st, closeAll, err := oneStore(c, g)
	if err != nil {
		return err
	}
	defer closeAll()
	runs, err := trash.Runs(c.Context, st)
	if err != nil {
		return err
	}
	markRuns, err := trash.Marks(c.Context, st)
	if err != nil {
		return err
	}
	deletedRuns, err := trash.Deleteds(c.Context, st)
	if err != nil {
		return err
	}
	deleted := deletedRunsJSON(deletedRuns)
	var marks []markRunJSON
	for _, m := range markRuns {
		mj := markRunJSON{Run: m.Run, Time: m.Time, Blobs: int64(len(m.Marks)), Shard: m.Shard}
		for _, b := range m.Marks {
			mj.Bytes += b.Size
		}
		marks = append(marks, mj)
	}
	if g.output != "text" {
		splits := trash.Splits(runs)
		if splits == nil {
			splits = []trash.Split{}
		}
		return g.document(runsDocument{envelope: g.envelope("mediactl.gc-runs/v1", outcome.OK), Store: st.Location(), Runs: runs, Splits: splits, Marks: marks, Deleted: deleted})
	}
	for _, m := range marks {
		line := fmt.Sprintf("%s  %s blobs  %s  marked (still in the store)", m.Run, humanize.Comma(m.Blobs), humanize.IBytes(uint64(m.Bytes)))
		if m.Shard != "" {
			line += "  (shard " + m.Shard + ")"
		}
		fmt.Fprintln(g.stdout, line)
	}
	printDeletedRuns(g.stdout, deleted)
	for _, r := range runs {
		line := fmt.Sprintf("%s  %s blobs  %s", r.Run, humanize.Comma(r.Blobs), humanize.IBytes(uint64(r.Bytes)))
		if r.Shard != "" {
			line += "  (shard " + r.Shard + ")"
		}
		fmt.Fprintln(g.stdout, line)
	}
	for _, s := range trash.Splits(runs) {
		missing := "all shards ran"
		if len(s.Missing) > 0 {
			which := "shards " + joinInts(s.Missing)
			if len(s.Missing) == 1 {
				which = "shard " + joinInts(s.Missing)
			}
			missing = fmt.Sprintf("no run of %s (nothing removed there, or they failed)", which)
		}
		name := "split"
		if s.ID != "" {
			name = "split " + s.ID
		}
		fmt.Fprintf(g.stdout, "%s into %d, from %s to %s: %d runs, %s blobs, %s; %s\n", name, s.N, s.Runs[0].Run, s.Runs[len(s.Runs)-1].Run,
			len(s.Runs), humanize.Comma(s.Blobs), humanize.IBytes(uint64(s.Bytes)), missing)
	}
	return nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
