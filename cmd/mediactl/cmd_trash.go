package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// trashDirFlag is --trash-dir, for gc and its subcommands and for migrate
// --delete-source (when says when it applies, or is empty).
func trashDirFlag(when string) cli.Flag {
	return &cli.StringFlag{Name: "trash-dir", Usage: when + "keep the trash in this local directory (on the store's file system, outside it) instead of the store's .mediactl/trash", EnvVars: envVar("trash-dir")}
}

// trashCommands are gc's subcommands, which work on the trash of one store.
func trashCommands() []*cli.Command {
	flags := func(extra ...cli.Flag) []cli.Flag {
		return append(append(append(targetFlags(), extra...), trashDirFlag("")), commonFlags()...)
	}
	return []*cli.Command{
		{
			Name:      "restore",
			Usage:     "put the blobs of a trash run back into the store",
			ArgsUsage: "RUN",
			Flags:     flags(),
			Action:    runGCRestore,
		},
		{
			Name:  "purge",
			Usage: "delete the trash runs that started before --keep-within, for good, after putting back every trashed blob a session names",
			Flags: flags(
				&cli.StringFlag{Name: "keep-within", Value: "7d", Usage: "keep the runs that started within this (e.g. 7d, 36h; 0 purges every run)"},
				&cli.BoolFlag{Name: "runtime-stopped", Usage: "purge without reading the sessions (--sessions, --layout): only when every runtime writing to the store is stopped and no session names a trashed blob"},
			),
			Action: runGCPurge,
		},
		{
			Name:   "runs",
			Usage:  "list the runs in the trash",
			Flags:  flags(),
			Action: runGCRuns,
		},
	}
}

type restoreDocument struct {
	envelope
	*trash.RestoreResult
	// Unmarked counts the blobs of a mark run (on a bucket) that are no
	// longer marked for deletion.
	Unmarked int64  `json:"unmarked,omitempty"`
	Refused  string `json:"refused,omitempty"`
}

func runGCRestore(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() != 1 {
		return usageErr("write it as: mediactl gc restore [--store DIR|URL] RUN (flags before RUN); 'mediactl gc runs' lists the runs", "gc restore takes one RUN, %d arguments given", c.NArg())
	}
	run := c.Args().First()
	doc := restoreDocument{RestoreResult: &trash.RestoreResult{Run: run, Kept: []trash.Skip{}}}
	marks := false
	o, err := withTrashLock(c, g, "mediactl gc restore", func(l *storelock.Lock) (outcome.Outcome, error) {
		if trash.IsMarkRun(c.Context, l.Store(), run) {
			// A bucket's deferred delete: the blobs are in the store; the
			// restore is dropping their marks.
			marks = true
			n, err := trash.Unmark(c.Context, l, run)
			doc.Unmarked = n
			if err != nil {
				return outcome.Incomplete, err
			}
			return outcome.OK, nil
		}
		res, err := trash.Restore(c.Context, l, run)
		var noRun *trash.NoRunError
		switch {
		case errors.As(err, &noRun):
			return outcome.OK, usageErr("'mediactl gc runs' lists the runs", "%v", err)
		case res != nil:
			doc.RestoreResult = res
		}
		switch {
		case err != nil && c.Context.Err() != nil:
			return outcome.Interrupted, nil
		case err != nil:
			return outcome.Incomplete, err
		case len(res.Kept) > 0:
			return outcome.Incomplete, nil
		}
		return outcome.OK, nil
	}, &doc.Refused)
	if err != nil {
		return err
	}
	doc.envelope = g.envelope("mediactl.gc-restore/v1", o)
	if g.output != "text" {
		return errors.Join(g.document(doc), ended(o))
	}
	if doc.Refused != "" {
		fmt.Fprintf(g.stdout, "refused: %s\n", doc.Refused)
		return ended(o)
	}
	if marks {
		fmt.Fprintf(g.stdout, "unmarked %s blobs of run %s: no run will delete them on its marks\n", humanize.Comma(doc.Unmarked), run)
		return ended(o)
	}
	res := doc.RestoreResult
	for _, k := range res.Kept {
		fmt.Fprintf(g.stdout, "kept in trash  %s  %s\n", printable(k.Key), k.Reason)
	}
	if !g.quiet || o != outcome.OK {
		fmt.Fprintf(g.stdout, "restored %s blobs (%s) from run %s\n", humanize.Comma(res.Restored), humanize.IBytes(uint64(res.Bytes)), run)
	}
	if o == outcome.Interrupted {
		g.interrupted(res.Restored, "blobs restored")
	}
	return ended(o)
}

type purgeDocument struct {
	envelope
	*trash.PurgeResult
	// TrashCheck is the check of the trash against the sessions that came
	// before the purge: the blobs put back because a session names them.
	TrashCheck *gc.TrashCheck `json:"trash_check,omitempty"`
	Refused    string         `json:"refused,omitempty"`
}

func runGCPurge(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	age, err := retain.ParseAge(c.String("keep-within"))
	if err != nil || age < 0 {
		return usageErr("write a duration such as 7d or 36h", "bad --keep-within %q", c.String("keep-within"))
	}
	st, t, err := oneStoreTargets(c, g)
	if err != nil {
		return err
	}
	defer t.Close()
	unchecked := c.Bool("runtime-stopped")
	if len(t.sources) == 0 && !unchecked {
		return usageErr("add the sessions the runtime writes (--sessions SOURCE, or --layout and --root), so that a trashed blob a session names is put back instead of deleted; or --runtime-stopped if every runtime is stopped",
			"gc purge reads the sessions before it deletes anything, and none were given")
	}
	doc := purgeDocument{PurgeResult: &trash.PurgeResult{Runs: []string{}}}
	var o outcome.Outcome
	err = storelock.Do(c.Context, st, "mediactl gc purge", func(l *storelock.Lock) error {
		rep, err := gc.Purge(c.Context, l, gc.PurgeOptions{
			Cutoff:    time.Now().Add(-age),
			Sessions:  t.sources,
			Companion: t.companion(st),
			Unchecked: unchecked,
		})
		if rep != nil {
			doc.PurgeResult, doc.TrashCheck = rep.Purged, rep.Trash
		}
		switch {
		case err != nil && c.Context.Err() != nil:
			o = outcome.Interrupted
		case errors.Is(err, gc.ErrTrashCheckIncomplete):
			o = outcome.Incomplete
			doc.Refused = err.Error()
		case err != nil:
			o = outcome.Incomplete
			return err
		}
		return nil
	})
	var le *storelock.LockedError
	if errors.As(err, &le) {
		doc.Refused, o, err = lockedLine(le), outcome.Refused, nil
	}
	if err != nil {
		return err
	}
	doc.envelope = g.envelope("mediactl.gc-purge/v1", o)
	if g.output != "text" {
		return errors.Join(g.document(doc), ended(o))
	}
	if tc := doc.TrashCheck; tc != nil {
		for _, r := range tc.Restored {
			fmt.Fprintf(g.stdout, "restored: %s  %s  (from trash run %s)\n", r.Reason, printable(r.Key), r.Run)
		}
	}
	if doc.Refused != "" {
		fmt.Fprintf(g.stdout, "refused: %s\n", doc.Refused)
	} else if !g.quiet || o != outcome.OK {
		res := doc.PurgeResult
		fmt.Fprintf(g.stdout, "purged %d runs, %s blobs (%s)\n", len(res.Runs), humanize.Comma(res.Blobs), humanize.IBytes(uint64(res.Bytes)))
	}
	return ended(o)
}

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
		return g.document(runsDocument{envelope: g.envelope("mediactl.gc-runs/v1", outcome.OK), Store: st.Location(), Runs: runs, Splits: splits, Marks: marks})
	}
	for _, m := range marks {
		line := fmt.Sprintf("%s  %s blobs  %s  marked (still in the store)", m.Run, humanize.Comma(m.Blobs), humanize.IBytes(uint64(m.Bytes)))
		if m.Shard != "" {
			line += "  (shard " + m.Shard + ")"
		}
		fmt.Fprintln(g.stdout, line)
	}
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

// withTrashLock opens the one store of a trash subcommand, takes its lock
// and calls do with it. A held lock is a refusal (its words in *refused),
// not an error.
func withTrashLock(c *cli.Context, g *global, command string, do func(*storelock.Lock) (outcome.Outcome, error), refused *string) (outcome.Outcome, error) {
	st, closeAll, err := oneStore(c, g)
	if err != nil {
		return outcome.OK, err
	}
	defer closeAll()
	var o outcome.Outcome
	err = storelock.Do(c.Context, st, command, func(l *storelock.Lock) (err error) {
		o, err = do(l)
		return err
	})
	var le *storelock.LockedError
	if errors.As(err, &le) {
		*refused = lockedLine(le)
		return outcome.Refused, nil
	}
	return o, err
}

// oneStoreTargets is oneStore with the targets it opened: their sessions.
// The caller closes them.
func oneStoreTargets(c *cli.Context, g *global) (store.Store, *targets, error) {
	t, err := openTargets(c, g)
	if err != nil {
		return nil, nil, err
	}
	if len(t.stores) != 1 {
		t.Close()
		return nil, nil, usageErr("give exactly one --store", "this command works on one store, %d given", len(t.stores))
	}
	if c.String("trash-dir") != "" {
		wrapped, err := withTrashDir(c, t.stores, trashOwned)
		if err != nil {
			t.Close()
			return nil, nil, err
		}
		return wrapped[0], t, nil
	}
	return t.stores[0], t, nil
}

// oneStore opens the targets of a trash subcommand, which works on one store.
func oneStore(c *cli.Context, g *global) (store.Store, func(), error) {
	st, t, err := oneStoreTargets(c, g)
	if err != nil {
		return nil, nil, err
	}
	return st, t.Close, nil
}

// trashUse is what a command does with --trash-dir.
type trashUse int

const (
	// trashMoveInto: gc --delete, whose run moves blobs into the folder:
	// it creates the folder and claims it for its store.
	trashMoveInto trashUse = iota
	// trashPlan: a dry run checks the folder but neither creates nor claims
	// it; one that is not there yet, or not claimed yet, changes no plan.
	trashPlan
	// trashOwned: runs, restore and purge make no run: the folder must hold
	// this store's trash already. Anything else in it is not mediactl's.
	trashOwned
)

// withTrashDir puts the trash of the one local store given into --trash-dir.
// One store only: two stores sharing a trash folder could have their runs
// mixed, and a restore would then put blobs into the wrong store. Only a run
// that moves blobs into the folder creates and claims it.
func withTrashDir(c *cli.Context, stores []store.Store, use trashUse) ([]store.Store, error) {
	dir := c.String("trash-dir")
	if len(stores) != 1 {
		return nil, usageErr("run gc once per store, each with its own --trash-dir", "--trash-dir works with exactly one store, %d given", len(stores))
	}
	open := trash.PeekDirStore
	if use == trashMoveInto {
		open = trash.DirStore
	}
	st, err := open(stores[0], absOr(dir))
	var unclaimed *trash.UnclaimedError
	switch {
	case use == trashPlan && (errors.Is(err, fs.ErrNotExist) || errors.As(err, &unclaimed)):
		return stores, nil // nothing of the store's there yet: its plan is the same
	case use == trashOwned && errors.Is(err, fs.ErrNotExist):
		return nil, usageErr("give the folder the runs were moved into", "no trash folder at %s", absOr(dir))
	case err != nil:
		return nil, trashDirError("--trash-dir", err)
	}
	return []store.Store{st}, nil
}

// trashDirError words the errors of a folder given for removed blobs.
func trashDirError(flag string, err error) error {
	var pe *trash.PlaceError
	var oe *trash.OwnerError
	var ue *trash.UnclaimedError
	switch {
	case errors.As(err, &ue):
		return usageErr("give the folder this store's blobs were moved into; if "+ue.Dir+" holds its runs from before mediactl recorded the store, write "+ue.Store+" into "+ue.Record+" first",
			"%s %v", flag, err)
	case errors.As(err, &oe):
		return usageErr("give each store a trash directory of its own; if "+oe.Owner+" moved to "+oe.Store+", delete "+oe.Record+" first",
			"%s %v: its runs would be restored into, or purged from, the wrong store", flag, err)
	case errors.As(err, &pe):
		return usageErr("choose a directory outside the store, on the same file system, that does not contain it", "%s %v", flag, err)
	case errors.Is(err, trash.ErrNeedsLocal):
		return usageErr("on a bucket the trash is the key prefix .mediactl/trash/; drop "+flag, "%s needs a local store", flag)
	}
	return fmt.Errorf("%s: %w", flag, err)
}
