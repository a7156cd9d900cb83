package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/retain"
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
	// NotRecoverable, for a deleted run, are the blobs whose version the
	// service no longer keeps.
	NotRecoverable []trash.Skip `json:"not_recoverable,omitempty"`
	// PurgedIn names the deleted run that holds the part of the trash run
	// an interrupted gc purge deleted.
	PurgedIn string `json:"purged_in,omitempty"`
}

func runGCRestore(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() != 1 {
		return usageErr("write it as: mediactl gc restore [--store DIR|URL] RUN; 'mediactl gc runs' lists the runs", "gc restore takes one RUN, %d arguments given", c.NArg())
	}
	run := c.Args().First()
	st, closeAll, err := oneStore(c, g)
	if err != nil {
		return err
	}
	defer closeAll()
	rr, err := trash.RunRestore(c.Context, st, "mediactl gc restore", run)
	var noRun *trash.NoRunError
	if errors.As(err, &noRun) && noRun.DeletedIn != "" {
		return usageErr("its blobs were deleted since by run "+noRun.DeletedIn+": restore that one ('mediactl gc runs' lists it)", "%v", err)
	}
	if errors.As(err, &noRun) {
		return usageErr("'mediactl gc runs' lists the runs", "%v", err)
	}
	if err != nil {
		return err
	}
	doc := restoreDocument{RestoreResult: rr.Result, Unmarked: rr.Unmarked, PurgedIn: rr.PurgedIn}
	if rr.Deleted != nil {
		doc.NotRecoverable = rr.Deleted.NotRecoverable
	}
	if rr.Locked != nil {
		doc.Refused = lockedLine(rr.Locked)
	}
	o, marks := rr.Outcome, rr.MarkRun
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
	if rr.Deleted != nil {
		printDeletedRestore(g.stdout, rr.Deleted, run)
		if o == outcome.Interrupted {
			g.interrupted(rr.Deleted.Restored, "blobs restored")
		}
		return ended(o)
	}
	res := doc.RestoreResult
	for _, k := range res.Kept {
		fmt.Fprintf(g.stdout, "kept in trash  %s  %s\n", printable(k.Key), k.Reason)
	}
	if !g.quiet || o != outcome.OK {
		fmt.Fprintf(g.stdout, "restored %s blobs (%s) from run %s\n", humanize.Comma(res.Restored), humanize.IBytes(uint64(res.Bytes)), run)
	}
	if doc.PurgedIn != "" {
		fmt.Fprintf(g.stdout, "the rest of run %s was deleted by gc purge and is recorded as deleted run %s: bring it back with: %s\n", run, doc.PurgedIn, printable(restoreLine(st.Location(), "", doc.PurgedIn)))
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
	// DeleteRecovery is what a bucket's service keeps of the purged blobs.
	DeleteRecovery *gc.Recovery `json:"delete_recovery,omitempty"`
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
	pr, err := gc.RunPurge(c.Context, st, "mediactl gc purge", gc.PurgeOptions{
		Cutoff:    time.Now().Add(-age),
		Sessions:  t.sources,
		Companion: t.companion(st),
		Unchecked: unchecked,
	})
	if err != nil {
		return err
	}
	doc := purgeDocument{PurgeResult: &trash.PurgeResult{Runs: []string{}}, TrashCheck: pr.Trash, Refused: pr.Refused, DeleteRecovery: pr.DeleteRecovery}
	if pr.Purged != nil {
		doc.PurgeResult = pr.Purged
	}
	if pr.Locked != nil {
		doc.Refused = lockedLine(pr.Locked)
	}
	o := pr.Outcome
	doc.envelope = g.envelope("mediactl.gc-purge/v2", o)
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
		if d := doc.DeleteRecovery; d != nil && res.Blobs > 0 {
			note := strings.NewReplacer("a blob gc deletes", "a purged blob", "--no-trash and marked deletes are final", "the purge is final",
				"count --no-trash and marked deletes as final", "count the purge as final").Replace(recoveryNote(d))
			fmt.Fprintln(g.stdout, note)
		}
		if res.DeletedRun != "" {
			// Only a bucket records its purge, and a bucket has no --trash-dir.
			fmt.Fprintf(g.stdout, "recorded them as deleted run %s; while the bucket keeps their versions, bring them back to their keys with: %s\n", res.DeletedRun, printable(restoreLine(st.Location(), "", res.DeletedRun)))
		}
	}
	return ended(o)
}
