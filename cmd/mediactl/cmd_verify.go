package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/metrics"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
	"github.com/mediactl/mediactl/pkg/verify"
)

// verifySchema versions the JSON document of `verify -o json`; see docs/verify.md.
const verifySchema = "mediactl.verify/v2"

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "prove every blob intact (sha256 equals its name) and, with sessions, every reference resolvable",
		UsageText: "mediactl verify [--layout forge|coffer --root DIR] [--store DIR|URL]... [--sessions SOURCE]... [--subset n/t | --sample P%] [--quarantine DIR|URL]",
		Description: `verify reads every content-addressed blob in full and checks that its sha256 equals its
name. Opaque names (coffer's uuid names, bucket keys) can only be checked for existence and
size, or against the sha256 stored in their metadata (which migrate writes). It also reports
anomalies: symlinks (never followed), non-regular files, leftover temporary files, empty
blobs, extensions that contradict the content, permissions wider than the rest of the store.
Given sessions (or a layout), it also reports dangling references, orphans, and corrupt blobs
that sessions refer to — the breakage users see — first.

   mediactl verify --store ./.forge/files/inbound
   mediactl verify --layout forge --root /srv/agent              # blobs + references
   mediactl verify --store 's3://media?region=eu-west-1' --sessions postgres://... -o json
   mediactl verify --store DIR --subset 3/7                      # nightly: a seventh each night
   mediactl verify --store DIR --sample 5%                       # random spot check
   mediactl verify --store DIR --quarantine /var/lib/mediactl/quarantine

On a spinning disk use --jobs 1: parallel reads make the head seek between files and run
several times slower than one sequential reader. Anomalies are warnings; --strict makes them
fail the run (exit 1).

` + exitCodesHelp,
		Flags: append(targetFlags(),
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "hashing workers (default: number of CPUs, at least 16 on buckets; 1 for spinning disks: one blob read at a time)", EnvVars: envVar("jobs")},
			&cli.StringFlag{Name: "subset", Usage: "check part n of t (e.g. 3/7), chosen by digest: t runs with n = 1..t cover the store exactly once", EnvVars: envVar("subset")},
			&cli.StringFlag{Name: "sample", Usage: "check a random P% of the blobs (e.g. 5%)", EnvVars: envVar("sample")},
			&cli.BoolFlag{Name: "fast", Usage: "bucket stores: compare size and the stored sha256 metadata instead of downloading", EnvVars: envVar("fast")},
			&cli.StringFlag{Name: "quarantine", Usage: "move corrupt blobs to this directory or bucket URL, with a manifest (never a plain delete)", EnvVars: envVar("quarantine")},
			&cli.BoolFlag{Name: "strict", Usage: "anomalies fail the run (exit 1) instead of warning", EnvVars: envVar("strict")},
			&cli.IntFlag{Name: "max-listed", Value: 10000, Usage: "list at most this many corrupt blobs, anomalies and problems per store (counts stay exact)", EnvVars: envVar("max-listed")},
			shardFlag(),
			metricsFileFlag(),
			metricsLabelFlag(),
		),
		Action: runVerify,
	}
}

func runVerify(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usageErr("give stores and sources with --store and --sessions", "unexpected argument %q", c.Args().First())
	}
	subset, err := parseSubset(c.String("subset"))
	if err != nil {
		return err
	}
	sample, err := parseSample(c.String("sample"))
	if err != nil {
		return err
	}
	if subset.T > 0 && sample > 0 {
		return usageErr("choose one of them", "--subset and --sample select blobs in different ways and cannot be combined")
	}
	t, err := openTargets(c, g)
	if err != nil {
		return err
	}
	defer t.Close()
	if len(t.stores) == 0 {
		return usageErr("add --store DIR|URL, or --layout", "verify needs a store")
	}
	if err := checkMetricsLabels(c, len(t.stores), true); err != nil {
		return err
	}
	sh, err := shardOf(c)
	if err != nil {
		return err
	}
	var quarantine store.Store
	if q := c.String("quarantine"); q != "" {
		if quarantine, err = openQuarantine(c, q, t.stores); err != nil {
			return err
		}
		defer quarantine.Close()
	}
	// series are the metrics of each store, in the order of t.stores.
	var series []metrics.Report
	runs, o, err := verify.RunStores(c.Context, verify.StoresOptions{
		Stores: t.stores,
		Each: func(st store.Store) verify.Options {
			return verify.Options{
				Jobs: c.Int("jobs"), Subset: subset, Sample: sample, Fast: c.Bool("fast"),
				Sessions: t.sources, Bases: t.bases, Resolver: t.resolver(st), Companion: t.companion(st),
				MaxListed: c.Int("max-listed"), Shard: sh,
			}
		},
		Quarantine: quarantine,
		Strict:     c.Bool("strict"),
		Command:    "mediactl verify --quarantine",
		Started: func(store.Store) verify.StoreProgress {
			return newProgress(g, "verifying", -1)
		},
		Finished: func(sr verify.StoreRun) {
			rep := sr.Report
			g.log.Info("verify finished", "store", rep.Store, "blobs", rep.Selected, "corrupt", rep.Counts[verify.Corrupt],
				"unreadable", rep.Counts[verify.Unreadable], "not_attempted", rep.NotAttempted, "bytes", rep.BytesRead, "seconds", rep.Seconds)
			series = append(series, verifyMetrics(c, len(series), rep, sr.Outcome, sr.Quarantine))
		},
	})
	if err != nil {
		return usageErr("", "%v", err)
	}
	var reports []*verify.Report
	var quarantined []*verify.QuarantineReport
	var refused, quarantineErrs []string
	for _, sr := range runs {
		reports = append(reports, sr.Report)
		if sr.Quarantine != nil {
			quarantined = append(quarantined, sr.Quarantine)
		}
		if sr.Locked != nil {
			refused = append(refused, lockedLine(sr.Locked))
		}
		if sr.QuarantineErr != "" {
			quarantineErrs = append(quarantineErrs, sr.QuarantineErr)
		}
	}

	switch g.output {
	case "json", "ndjson":
		if g.output == "ndjson" {
			for _, rep := range reports {
				for _, r := range rep.Corrupt {
					g.record("corrupt", struct {
						Store string `json:"store"`
						verify.Result
					}{rep.Store, r})
				}
			}
		}
		err = g.document(struct {
			envelope
			Stores     []*verify.Report           `json:"stores"`
			Quarantine []*verify.QuarantineReport `json:"quarantine,omitempty"`
			Refused    []string                   `json:"refused,omitempty"`
			Errors     []string                   `json:"errors,omitempty"`
		}{g.envelope(verifySchema, o), reports, quarantined, refused, quarantineErrs})
	default:
		if !g.quiet || o != outcome.OK {
			for _, rep := range reports {
				printVerify(g.stdout, rep, g.quiet)
			}
			for _, qr := range quarantined {
				printQuarantine(g.stdout, qr, quarantine.Location())
			}
			for _, r := range refused {
				fmt.Fprintf(g.stdout, "quarantine refused: %s\n", r)
			}
			for _, e := range quarantineErrs {
				fmt.Fprintf(g.stdout, "error: %s\n", e)
			}
		}
	}
	if err != nil {
		return err
	}
	if o == outcome.Interrupted {
		var n int64
		for _, rep := range reports {
			n += rep.Selected
		}
		g.interrupted(n, "blobs checked")
	}
	if err := writeMetrics(c, series...); err != nil {
		return err
	}
	return ended(o)
}

func parseSubset(s string) (verify.Subset, error) {
	if s == "" {
		return verify.Subset{}, nil
	}
	n, t, ok := strings.Cut(s, "/")
	nn, err1 := strconv.Atoi(n)
	tt, err2 := strconv.Atoi(t)
	if !ok || err1 != nil || err2 != nil || tt < 1 || nn < 1 || nn > tt {
		return verify.Subset{}, usageErr("write it as n/t with 1 <= n <= t, e.g. --subset 3/7 (run n = 1..7 on seven nights)", "bad --subset %q", s)
	}
	return verify.Subset{N: nn, T: tt}, nil
}

func parseSample(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || p <= 0 || p > 100 {
		return 0, usageErr("write a percentage above 0 and at most 100, e.g. --sample 5%", "bad --sample %q", s)
	}
	return p / 100, nil
}

// openQuarantine opens --quarantine (verify.OpenQuarantine), wording its
// refusals for the command line.
func openQuarantine(c *cli.Context, spec string, stores []store.Store) (store.Store, error) {
	q, err := verify.OpenQuarantine(c.Context, spec, stores)
	var overlap *verify.QuarantineOverlapError
	var pe *trash.PlaceError
	switch {
	case errors.As(err, &overlap):
		return nil, usageErr("give a quarantine outside every store: another bucket, or a prefix beside the store's",
			"--quarantine %s is inside the store %s, or holds it: its contents would be listed as blobs", overlap.Quarantine, overlap.Store)
	case errors.As(err, &pe):
		return nil, trashDirError("--quarantine", err)
	case err != nil:
		return nil, fmt.Errorf("--%v", err)
	}
	return q, nil
}
