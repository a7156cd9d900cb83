package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/metrics"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/target"
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

	var reports []*verify.Report
	var quarantined []*verify.QuarantineReport
	var refused []string
	// quarantineErrs are the quarantines that stopped partway (their
	// reports say what they moved).
	var quarantineErrs []string
	// series are the metrics of each store, in the order of t.stores.
	var series []metrics.Report
	o := outcome.OK
	strict := c.Bool("strict")
	for _, st := range t.stores {
		if o == outcome.Interrupted {
			break
		}
		bar := newProgress(g, "verifying", -1)
		rep, err := verify.Run(c.Context, verify.Options{
			Store:     st,
			Jobs:      c.Int("jobs"),
			Subset:    subset,
			Sample:    sample,
			Fast:      c.Bool("fast"),
			Sessions:  t.sources,
			Bases:     t.bases,
			Resolver:  t.resolver(st),
			Companion: t.companion(st),
			MaxListed: c.Int("max-listed"),
			Progress:  bar,
			Shard:     sh,
			// A quarantine moves every corrupt blob, listed or not.
			KeepCorrupt: quarantine != nil,
		})
		bar.Finish()
		if err != nil {
			return usageErr("", "%v", err)
		}
		reports = append(reports, rep)
		g.log.Info("verify finished", "store", rep.Store, "blobs", rep.Selected, "corrupt", rep.Counts[verify.Corrupt],
			"unreadable", rep.Counts[verify.Unreadable], "bytes", rep.BytesRead, "seconds", rep.Seconds)
		storeOutcome := rep.Outcome(strict)
		var storeQuarantine *verify.QuarantineReport
		if quarantine != nil && len(rep.AllCorrupt) > 0 && !rep.Interrupted {
			qr, why, err := quarantineCorrupt(c, st, quarantine, rep, sh)
			if qr != nil {
				quarantined = append(quarantined, qr)
				storeQuarantine = qr
				if qr.Failed() > 0 {
					storeOutcome.Worsen(outcome.Incomplete) // the destination failed, not the blobs
				}
			}
			if why != "" {
				refused = append(refused, why)
				storeOutcome.Worsen(outcome.Refused)
			}
			switch {
			case err != nil && c.Context.Err() != nil:
				storeOutcome.Worsen(outcome.Interrupted)
			case err != nil:
				quarantineErrs = append(quarantineErrs, fmt.Sprintf("quarantine into %s: %v", quarantine.Location(), err))
				storeOutcome.Worsen(outcome.Incomplete)
			}
		}
		o.Worsen(storeOutcome)
		series = append(series, verifyMetrics(c, len(series), rep, storeOutcome, storeQuarantine))
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

// quarantineCorrupt moves a store's corrupt blobs out, holding the store's
// lock. A lock held by another run is a refusal, in words.
func quarantineCorrupt(c *cli.Context, st, quarantine store.Store, rep *verify.Report, sh shard.Spec) (*verify.QuarantineReport, string, error) {
	var qr *verify.QuarantineReport
	err := storelock.DoShard(c.Context, st, "mediactl verify --quarantine", sh, func(l *storelock.Lock) (err error) {
		qr, err = verify.Quarantine(c.Context, l, quarantine, rep.AllCorrupt, time.Now())
		return err
	})
	var le *storelock.LockedError
	if errors.As(err, &le) {
		return nil, lockedLine(le), nil
	}
	return qr, "", err
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

// openQuarantine opens (creating a local directory if needed) the quarantine
// destination, which must not lie inside a store: its contents would be listed
// as blobs on the next run.
func openQuarantine(c *cli.Context, spec string, stores []store.Store) (store.Store, error) {
	local := !strings.Contains(spec, "://")
	if local {
		abs := absOr(spec)
		for _, st := range stores {
			if l, ok := st.(store.Local); ok {
				if err := trash.CheckDir(l.Dir(), abs); err != nil {
					return nil, trashDirError("--quarantine", err)
				}
			}
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return nil, fmt.Errorf("--quarantine %s: %w", spec, err)
		}
	}
	q, err := store.Open(c.Context, spec)
	if err != nil {
		return nil, fmt.Errorf("--quarantine %s: %w", spec, err)
	}
	for _, st := range stores {
		if target.Overlap(q, st) {
			q.Close()
			return nil, usageErr("give a quarantine outside every store: another bucket, or a prefix beside the store's",
				"--quarantine %s is inside the store %s, or holds it: its contents would be listed as blobs", store.Redact(spec), st.Location())
		}
	}
	return q, nil
}
