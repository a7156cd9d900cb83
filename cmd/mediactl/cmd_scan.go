package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/scan"
)

// scanSchema versions the JSON document of `scan -o json`; see docs/scan.md.
const scanSchema = "mediactl.scan/v1"

func scanCommand() *cli.Command {
	return &cli.Command{
		Name:      "scan",
		Usage:     "find every reference to a blob in the session stores, and the dangling ones",
		UsageText: "mediactl scan [--layout forge|coffer --root DIR] [--store DIR|URL]... [--sessions SOURCE]... [-o text|json|ndjson]",
		Description: `scan reads every session source, extracts every reference to a blob (absolute and
relative paths, file:// URIs, bucket URLs, {bucket, path} pairs, also inside JSON held in
strings such as tool-call arguments) and reports per source what it read. Given a store, it
reports the references whose blob is missing (dangling) and those that point outside the
store, each with its exact place (file + JSON pointer, or table + key + column).

   mediactl scan                                              # in a forge work dir
   mediactl scan --layout forge --root /srv/agent
   mediactl scan --store ~/.coffer/channel-media --sessions sqlite:$HOME/.coffer/runs.db -o json
   mediactl scan --store 's3://media?region=eu-west-1&prefix=agent-inputs/' \
       --sessions 'postgres://app@db/app?sslmode=require' \
       --sessions-query 'select id::text, metadata::text from messages'

References are untrusted: they are resolved lexically and never followed out of the store.
-o ndjson streams one reference per line, then a summary line.

` + exitCodesHelp,
		Flags: append(targetFlags(),
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "documents parsed at once (default: number of CPUs)", EnvVars: envVar("jobs")},
			&cli.IntFlag{Name: "max-listed", Value: 10000, Usage: "list at most this many dangling references, outside references and problems (counts stay exact; -o ndjson streams all)", EnvVars: envVar("max-listed")},
			shardFlag(),
			metricsFileFlag(),
			metricsLabelFlag(),
		),
		Action: runScan,
	}
}

func runScan(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usageErr("give stores and sources with --store and --sessions", "unexpected argument %q", c.Args().First())
	}
	t, err := openTargets(c, g)
	if err != nil {
		return err
	}
	defer t.Close()
	if len(t.sources) == 0 {
		return usageErr("add --sessions SOURCE, or --layout", "scan needs at least one session source")
	}
	if err := checkMetricsLabels(c, len(t.stores), false); err != nil {
		return err
	}
	sh, err := shardOf(c)
	if err != nil {
		return err
	}

	bar := newProgress(g, "scanning", -1)
	opts := scan.Options{
		Sources:   t.sources,
		Stores:    t.scanTargets(),
		Jobs:      c.Int("jobs"),
		MaxListed: c.Int("max-listed"),
		Progress:  bar,
		Shard:     sh,
	}
	if g.output == "ndjson" {
		opts.OnReference = func(f scan.Found) { g.record("reference", f) }
	}
	start := time.Now()
	g.log.Debug("scan starting", "sources", len(t.sources), "stores", len(t.stores), "jobs", opts.Jobs)
	rep, err := scan.Run(c.Context, opts)
	bar.Finish()
	if err != nil {
		return usageErr("", "%v", err)
	}
	o := rep.Outcome()
	for _, sr := range rep.Sources {
		g.log.Debug("source read", "source", sr.Source, "documents", sr.Documents, "rows", sr.Rows, "bytes", sr.Bytes,
			"references", sr.References, "excluded", sr.Excluded, "leftovers", sr.Leftovers, "unread", sr.Unread,
			"problems", sr.Problems, "complete", sr.Complete)
	}
	g.log.Info("scan finished", "references", rep.References, "distinct_blobs", rep.DistinctBlobs,
		"dangling", rep.DanglingReferences, "problems", len(rep.Problems), "complete", rep.Complete,
		"seconds", time.Since(start).Seconds(), "exit_code", exitFor(o))
	switch g.output {
	case "json", "ndjson":
		err = g.document(scanDocument(g, rep, o))
	default:
		if !g.quiet || o != outcome.OK {
			printScan(g.stdout, rep, g.quiet)
		}
	}
	if err != nil {
		return err
	}
	if o == outcome.Interrupted {
		g.interrupted(rep.References, "references read")
	}
	if err := writeMetrics(c, scanMetrics(c, rep, o, time.Since(start))); err != nil {
		return err
	}
	return ended(o)
}

type scanJSON struct {
	envelope
	*scan.Report
}

func scanDocument(g *global, rep *scan.Report, o outcome.Outcome) *scanJSON {
	if rep.Dangling == nil {
		rep.Dangling = []scan.Found{}
	}
	if rep.Outside == nil {
		rep.Outside = []scan.Found{}
	}
	if rep.Problems == nil {
		rep.Problems = []scan.Problem{}
	}
	return &scanJSON{envelope: g.envelope(scanSchema, o), Report: rep}
}

func printScan(w io.Writer, rep *scan.Report, quiet bool) {
	if !quiet {
		for _, s := range rep.Sources {
			what := fmt.Sprintf("%s documents", humanize.Comma(s.Documents))
			if s.Rows > 0 || s.Documents == 0 {
				what = fmt.Sprintf("%s rows", humanize.Comma(s.Rows))
			}
			var extra []string
			for _, n := range []struct {
				count int64
				what  string
			}{{s.Leftovers, "leftover"}, {s.Excluded, "excluded"}, {s.Unread, "unread"}, {s.Skipped, "skipped"}} {
				if n.count > 0 {
					if n.what == "leftover" && n.count > 1 {
						n.what += "s"
					}
					extra = append(extra, humanize.Comma(n.count)+" "+n.what)
				}
			}
			if len(extra) > 0 {
				what += " (" + strings.Join(extra, ", ") + ")"
			}
			fmt.Fprintf(w, "%s: %s, %s, %s references to %s blobs\n", s.Source, what, humanize.IBytes(uint64(s.Bytes)),
				humanize.Comma(s.References), humanize.Comma(s.DistinctBlobs))
		}
	}
	for _, f := range rep.Dangling {
		fmt.Fprintf(w, "dangling  %s  %s (missing from %s)\n", printable(f.Place.String()), printable(f.Ref.Raw), f.Store)
	}
	for _, f := range rep.Outside {
		fmt.Fprintf(w, "outside   %s  %s (not inside any store; never acted on)\n", printable(f.Place.String()), printable(f.Ref.Raw))
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "problem   %s: %s\n", printable(p.Place.String()), printable(p.Err))
	}
	if rep.Truncated {
		fmt.Fprintln(w, "(lists cut at --max-listed; the counts below are complete; -o ndjson streams every reference)")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "scan%s: %s references to %s blobs", shardNote(rep.Shard), humanize.Comma(rep.References), humanize.Comma(rep.DistinctBlobs))
	if len(rep.Stores) > 0 {
		fmt.Fprintf(&b, "; %s dangling (%s blobs missing), %s outside the store",
			humanize.Comma(rep.DanglingReferences), humanize.Comma(rep.DanglingBlobs), humanize.Comma(rep.ByStatus["outside"]))
	}
	switch {
	case rep.Interrupted:
		b.WriteString("; INTERRUPTED: counts are partial")
	case !rep.Complete:
		fmt.Fprintf(&b, "; INCOMPLETE: %d problems, counts are partial", len(rep.Problems))
	}
	fmt.Fprintln(w, b.String())
}
