package main

import (
	"errors"
	"os"
	"runtime/debug"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
)

// gcSchema versions the JSON document of `gc -o json`; see docs/gc.md.
const gcSchema = "mediactl.gc/v2"

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:      "gc",
		Usage:     "reclaim unreferenced or expired blobs, reversibly, without ever removing one in use",
		UsageText: "mediactl gc [--layout forge|coffer --root DIR] [--store DIR|URL] [--sessions SOURCE]... [--policy refcount|age] [--delete]",
		Description: `gc plans which blobs can go and, with --delete, moves them into the store's trash
(.mediactl/trash/RUN/), from where 'mediactl gc restore RUN' puts them back and
'mediactl gc purge --sessions SRC --keep-within 7d' empties the older runs. On a bucket
--delete marks the blobs instead, and a later --delete deletes those still unreferenced and
unchanged past --grace (24h). Without --delete nothing changes.

   mediactl gc --layout forge --root /srv/agent                    # plan only (dry run)
   mediactl gc --layout forge --root /srv/agent --delete            # do it
   mediactl gc --store DIR --sessions SRC --policy refcount --min-age 24h --delete
   mediactl gc --store DIR --policy age --max-age 30d --delete      # coffer's 30-day prune
   mediactl gc --store DIR --policy age --max-age 30d --keep-referenced --sessions SRC --delete
   mediactl gc --store DIR --sessions SRC --max-size 50GiB --delete # size cap, oldest first

Policies: refcount (default) removes blobs no session refers to that are older than
--min-age (a blob is written before the session naming it is saved). age removes blobs
older than --max-age, referenced or not, unless --keep-referenced. --max-size removes
unreferenced blobs, oldest first, until the store fits.

Safety: nothing is removed when any session could not be read in full (exit 3); when the
sessions hold no reference to any of a store's blobs while it has some, or when the plan
exceeds --max-delete (exit 4, the message names the override); or when another run holds
the store's lock (exit 4, also for a dry run). A store that contains another store's
.mediactl folder is refused (exit 2). Each blob is checked again right before it is moved.
Runtimes keep writing while gc runs: after its moves gc reads again the sessions that
changed and puts back every blob one of them names ('restored: named during the run'), and
every --delete and purge first puts back trashed blobs that sessions began to name.

` + exitCodesHelp,
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "policy", Value: "refcount", Usage: "refcount (unreferenced and older than --min-age) or age (older than --max-age)"},
			&cli.StringFlag{Name: "min-age", Value: "24h", Usage: "never remove a blob modified more recently than this (refcount, size cap): 36h, 2d, 1w; 0 for none"},
			&cli.StringFlag{Name: "max-age", Usage: "age policy: remove blobs older than this, e.g. 30d"},
			&cli.BoolFlag{Name: "keep-referenced", Usage: "age policy: keep blobs that sessions refer to (needs --sessions)", EnvVars: envVar("keep-referenced")},
			&cli.StringFlag{Name: "max-size", Usage: "cap the store at this size (e.g. 50GiB), removing unreferenced blobs oldest first"},
			&cli.BoolFlag{Name: "delete", Usage: "remove the planned blobs (without it, only the plan is shown)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "show the plan and change nothing: the default, said explicitly (contradicts --delete)"},
			trashDirFlag(""),
			&cli.BoolFlag{Name: "no-trash", Usage: "delete permanently instead of moving into the trash (not reversible)"},
			&cli.StringFlag{Name: "grace", Value: "24h", Usage: "on a bucket, --delete marks the planned blobs and a later --delete deletes those still unreferenced and unchanged this long after they were marked (e.g. 24h, 2d)"},
			&cli.BoolFlag{Name: "copy-to-trash", Usage: "on a bucket, copy the planned blobs into the trash and delete them now instead of marking them (out of sight at once; a copy per blob)"},
			&cli.StringFlag{Name: "max-delete", Value: "50%", Usage: "refuse a plan that removes more than this many blobs, or this percentage of the store"},
			&cli.BoolFlag{Name: "allow-no-references", Usage: "proceed although the sessions refer to none of a store's blobs (usually a wrong --sessions path)"},
			&cli.StringFlag{Name: "plan-out", Usage: "write the plan as JSON to this file", EnvVars: envVar("plan-out")},
			shardFlag(),
			&cli.StringFlag{Name: "split", Usage: "with --shard: name the split this shard is part of (lower-case letters, digits, '-'), so that gc runs groups its runs by it; in a pod of a Kubernetes Indexed Job it is the Job's name by default", EnvVars: envVar("split")},
			metricsFileFlag(),
			metricsLabelFlag(),
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "removals at once (default: 32 requests on buckets, 1 on local stores)", EnvVars: envVar("jobs")},
		),
		Action:      runGC,
		Subcommands: trashCommands(),
	}
}

func runGC(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usageErr("the subcommands are restore, purge and runs", "unexpected argument %q", c.Args().First())
	}
	opts, err := gcOptions(c)
	if err != nil {
		return err
	}
	if opts.MinAge == retain.NoMinAge && opts.Policy == gc.Refcount {
		g.note("--min-age 0: no minimum age, so a blob whose session is not saved yet may be a candidate; use it only with every agent stopped")
	}
	if os.Getenv("GOGC") == "" { // gc.PlanGCPercent says why
		defer debug.SetGCPercent(debug.SetGCPercent(gc.PlanGCPercent))
	}
	t, err := openTargets(c, g)
	if err != nil {
		return err
	}
	defer t.Close()
	if len(t.stores) == 0 {
		return usageErr("add --store DIR|URL, or --layout", "gc needs a store")
	}
	if err := checkMetricsLabels(c, len(t.stores), true); err != nil {
		return err
	}
	if err := checkOutputFile("--plan-out", c.String("plan-out")); err != nil {
		return err
	}
	needSessions := opts.Policy == gc.Refcount || opts.KeepReferenced || opts.MaxSize > 0
	if needSessions && len(t.sources) == 0 {
		return usageErr("add --sessions SOURCE (or --layout), or use --policy age without --keep-referenced", "the %s policy needs the sessions, to know which blobs are referenced", opts.Policy)
	}
	if c.String("trash-dir") != "" {
		if opts.NoTrash {
			return usageErr("drop one of them", "--trash-dir and --no-trash contradict each other")
		}
		use := trash.Plan
		if opts.Delete {
			use = trash.MoveInto
		}
		if t.stores, err = withTrashDir(c, t.stores, use); err != nil {
			return err
		}
	}
	// Given sessions, the age policy reads them too: it cannot keep referenced
	// blobs then, but it can say how many references its plan leaves dangling.
	opts.Stores, opts.Sessions, opts.Bases, opts.CompanionOf = t.stores, t.sources, t.bases, t.companion
	opts.Progress = func(st store.Store, total int64) gc.Progress {
		if bar := newProgress(g, "removing", total); bar != nil {
			return bar
		}
		return nil
	}
	start := time.Now()
	rep, err := gc.Run(c.Context, opts)
	if err != nil {
		gerr := gcError(err)
		if rep == nil || rep.Done() == 0 {
			return gerr
		}
		// The stores before this one were changed: their report (what was
		// moved, and how to undo it) comes first, and the run is not a
		// usage error that changed nothing.
		_ = renderGC(c, g, rep, opts, time.Since(start))
		var ee *exitError
		if errors.As(gerr, &ee) {
			ee.code = exitIncomplete
		}
		return gerr
	}
	for _, s := range rep.Stores {
		n := 0
		if s.Plan != nil {
			n = s.Plan.Candidates.Len()
		}
		g.log.Info("gc finished", "store", s.Store, "candidates", n, "outcome", s.Outcome.String())
	}
	return renderGC(c, g, rep, opts, time.Since(start))
}
