package main

import (
	"time"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/report"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/store"
)

// reportSchema versions the JSON document of `report -o json`; see
// docs/report.md. report merge reads it back.
const reportSchema = report.Schema

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "say where the space goes: referenced and orphaned, by owner, age, type and size, growth, and what each gc policy would free",
		UsageText: "mediactl report [--layout forge|coffer --root DIR] [--store DIR|URL]... [--sessions SOURCE]... [--owner-by /POINTER|COLUMN] [--top N] [--html FILE] [--shard K/N] [-o text|json|ndjson]\n   mediactl report merge [--top N] [--html FILE] [-o text|json|ndjson] FILE...",
		Description: `report reads each store and every session once, as gc's plan does, and changes
nothing. It says what the store holds (referenced, orphaned, in the trash, marked,
dangling references; corrupt with --verify), who owns it (forge: the task; coffer: the
conversation; agent-runs: the user; else the file or row; --owner-by overrides), how old
it is by modification time and by last reference, its media types and size classes, its
growth per day and week over 90 days (and, for a local store, the days until its file
system is full at that rate), and what each gc policy would free now.

   mediactl report                                         # in a forge work dir
   mediactl report --layout coffer --top 50
   mediactl report --store 's3://media?prefix=agent-inputs/' --sessions "$PG_URL" -o ndjson
   mediactl report --layout forge --root /srv/agent --html /var/www/media-report.html

-o json is one document (schema ` + reportSchema + `) with every owner; -o ndjson streams
one {"type":"owner"} record per owner, then the summary. --html FILE writes one
self-contained page (no network) with charts and a sortable owner table.

--shard K/N reports on shard K's blobs only (every session is still read); the size cap
policy and the days until full are left out, since no shard can tell them. 'mediactl
report merge' adds the JSON reports of the N shards up to the report of the whole store:

   mediactl report --layout forge --root /srv/agent --shard auto/8 -o json > shard-$JOB_COMPLETION_INDEX.json
   mediactl report merge shard-*.json --html /var/www/media-report.html

` + exitCodesHelp,
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "owner-by", Usage: "attribute session units by this JSON pointer (/user/id) in each document, or this column (user_id, or table.column) of each row, instead of the layout's rule", EnvVars: envVar("owner-by")},
			&cli.IntFlag{Name: "top", Value: 20, Usage: "owners listed in the text summary and the HTML page, largest first (-o json and ndjson list all)", EnvVars: envVar("top")},
			&cli.StringFlag{Name: "html", Usage: "also write a self-contained HTML page with charts to this file", EnvVars: envVar("html")},
			&cli.BoolFlag{Name: "verify", Usage: "hash every blob to count the corrupt ones (reads every byte of the store)", EnvVars: envVar("verify")},
			&cli.StringFlag{Name: "min-age", Usage: "the refcount policy's minimum age, as gc takes it (default 1d; 0 for none)"},
			&cli.StringFlag{Name: "max-size", Usage: "the size cap to evaluate, as gc takes it (default: half of each store)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "documents parsed at once (default: number of CPUs)", EnvVars: envVar("jobs")},
			&cli.IntFlag{Name: "max-listed", Value: 10000, Usage: "list at most this many unattributed units and problems (counts stay exact)", EnvVars: envVar("max-listed")},
			metricsFileFlag(),
			metricsLabelFlag(),
			metricsOwnersFlag(),
			shardFlag(),
		),
		Action:      runReport,
		Subcommands: []*cli.Command{reportMergeCommand()},
	}
}

func runReport(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usageErr("give stores and sources with --store and --sessions", "unexpected argument %q", c.Args().First())
	}
	opts, err := reportOptions(c)
	if err != nil {
		return err
	}
	htmlPath := c.String("html")
	if htmlPath != "" {
		if err := checkOutputFile("--html", htmlPath); err != nil {
			return err
		}
	}
	t, err := openTargets(c, g)
	if err != nil {
		return err
	}
	defer t.Close()
	if len(t.sources) == 0 || len(t.stores) == 0 {
		return usageErr("add --store and --sessions, or --layout", "report needs at least one store and one session source")
	}
	if err := checkMetricsLabels(c, len(t.stores), true); err != nil {
		return err
	}
	if err := checkMetricsOwners(c); err != nil {
		return err
	}
	if t.layout != nil {
		opts.Owners.Layout = t.layout.Name
	}
	if opts.Owners, err = owner.ParseBy(opts.Owners, c.String("owner-by")); err != nil {
		return usageErr("give a JSON pointer such as /user/id, or a column name such as user_id", "%v", err)
	}
	opts.Stores, opts.Sources = t.scanTargets(), t.sources
	opts.Companion = func(s store.Store) func(string) (string, bool) { return t.companion(s) }

	bar := newProgress(g, "reading", -1)
	opts.Progress = bar
	start := time.Now()
	rep, err := report.Run(c.Context, opts)
	bar.Finish()
	if err != nil {
		return usageErr("", "%v", err)
	}
	return finishReport(c, g, rep, htmlPath, start)
}

// reportOptions turns the flags that need parsing into options.
func reportOptions(c *cli.Context) (report.Options, error) {
	opts := report.Options{Jobs: c.Int("jobs"), MaxListed: c.Int("max-listed"), Verify: c.Bool("verify")}
	if s := c.String("min-age"); s != "" {
		d, err := retain.ParseAge(s)
		if err != nil {
			return opts, usageErr("give an age such as 1d, 12h or 0", "--min-age %q: %v", s, err)
		}
		opts.MinAge = d
		if d == 0 {
			opts.MinAge = retain.NoMinAge
		}
	}
	if s := c.String("max-size"); s != "" {
		n, err := humanize.ParseBytes(s)
		if err != nil || n == 0 {
			return opts, usageErr("give a size such as 500GiB or 2TB", "--max-size %q: not a size", s)
		}
		opts.MaxSize = int64(n)
	}
	var err error
	if opts.Shard, err = shardOf(c); err != nil {
		return opts, err
	}
	if opts.MaxSize > 0 && opts.Shard.Sharded() {
		return opts, usageErr("run the size cap on the whole store (without --shard): it decides over all the blobs at once", "--max-size with --shard %s", opts.Shard)
	}
	if c.Int("top") < 0 {
		return opts, usageErr("give --top 0 for all owners, or a positive number", "--top %d", c.Int("top"))
	}
	return opts, nil
}
