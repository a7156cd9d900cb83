package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/report"
)

func reportMergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "add the JSON reports of the shards of one split (report --shard K/N -o json) up to the report of the whole store",
		ArgsUsage: "FILE...",
		Description: `merge reads the JSON reports that 'mediactl report --shard K/N -o json' wrote, one per
shard of a split, and writes the report of the whole store as report does (text, -o json,
-o ndjson, --html, --metrics-file). Blob counts, bytes, references, tables, growth and
policies add up; an owner's units are the whole store's in every shard; the days until full
are reckoned from the merged growth; the size cap policy is left out.

Reports of different splits, stores, session sources, owner rules or policies, a shard
given twice, a report made without --shard and a schema this version does not read are
refused (exit 2). A shard of the split whose report is not given makes the merged report
incomplete (exit 3) and names it.

   mediactl report merge shard-0.json shard-1.json shard-2.json
   mediactl report merge shards/*.json -o json > whole.json`,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "top", Value: 20, Usage: "owners listed in the text summary and the HTML page, largest first (-o json and ndjson list all)", EnvVars: envVar("top")},
			&cli.StringFlag{Name: "html", Usage: "also write a self-contained HTML page with charts to this file", EnvVars: envVar("html")},
			&cli.IntFlag{Name: "max-listed", Value: 10000, Usage: "list at most this many unattributed units and problems (counts stay exact)", EnvVars: envVar("max-listed")},
			metricsFileFlag(),
			metricsLabelFlag(),
			metricsOwnersFlag(),
		}, commonFlags()...),
		Action: runReportMerge,
	}
}

func runReportMerge(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() == 0 {
		return usageErr("give the shards' JSON reports: mediactl report merge shard-*.json", "report merge needs the reports of a split's shards")
	}
	if c.Int("top") < 0 {
		return usageErr("give --top 0 for all owners, or a positive number", "--top %d", c.Int("top"))
	}
	if err := checkMetricsOwners(c); err != nil {
		return err
	}
	htmlPath := c.String("html")
	if err := checkOutputFile("--html", htmlPath); err != nil {
		return err
	}
	start := time.Now()
	in := make([]report.Input, 0, c.NArg())
	for _, name := range c.Args().Slice() {
		rep, err := readShardReport(name)
		if err != nil {
			return err
		}
		in = append(in, report.Input{Name: name, Report: rep})
	}
	if err := checkMetricsLabels(c, len(in[0].Report.Stores), true); err != nil {
		return err
	}
	rep, err := report.Merge(in, report.MergeOptions{MaxListed: c.Int("max-listed")})
	var me *report.MergeError
	switch {
	case errors.As(err, &me):
		return usageErr("give the reports of every shard of one split, each once, as report --shard K/N -o json wrote them", "%v", err)
	case err != nil:
		return usageErr("", "%v", err)
	}
	if m := rep.Merged; m != nil && len(m.Missing) == 1 {
		g.problem("the report of shard %s is missing: the merged report leaves its blobs out", m.Missing[0])
	} else if m != nil && len(m.Missing) > 1 {
		g.problem("the reports of shards %s are missing: the merged report leaves their blobs out", strings.Join(m.Missing, ", "))
	}
	return finishReport(c, g, rep, htmlPath, start)
}

// readShardReport reads one shard's JSON report.
func readShardReport(name string) (*report.Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, usageErr("give the files report --shard K/N -o json wrote", "%s: %v", name, plainPathErr(err))
	}
	defer f.Close()
	rep, err := report.Decode(f)
	var se *report.SchemaError
	switch {
	case errors.As(err, &se):
		return nil, usageErr(fmt.Sprintf("give JSON reports of schema %s, as report --shard K/N -o json of this version writes them", report.Schema), "%s: %v", name, err)
	case err != nil:
		return nil, usageErr("give the JSON document of report --shard K/N -o json (not -o ndjson, not the text summary)", "%s: %v", name, err)
	}
	return rep, nil
}
