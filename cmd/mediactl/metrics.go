package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/metrics"
	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/verify"
)

// metricsFileFlag and metricsLabelFlag are the same on scan, verify, gc and
// migrate.
func metricsFileFlag() cli.Flag {
	return &cli.StringFlag{Name: "metrics-file", Usage: "write Prometheus text-format metrics into this file, atomically, keeping the series of other runs in it (node_exporter textfile collector)", EnvVars: envVar("metrics-file")}
}

func metricsLabelFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "metrics-label", Usage: "the store label of the metrics instead of the store's location: one per store, in the order of --store (or of the layout's stores)", EnvVars: envVar("metrics-label")}
}

// checkMetricsLabels refuses, before the run does anything, a --metrics-label
// count that does not name each of the run's stores once. scan sums over its
// stores, so it takes one label for all of them (perStore false).
func checkMetricsLabels(c *cli.Context, stores int, perStore bool) error {
	if err := checkOutputFile("--metrics-file", c.String("metrics-file")); err != nil {
		return err
	}
	labels := c.StringSlice("metrics-label")
	if len(labels) == 0 {
		return nil
	}
	if c.String("metrics-file") == "" {
		return usageErr("add --metrics-file FILE, or drop --metrics-label", "--metrics-label without --metrics-file")
	}
	for _, l := range labels {
		if strings.TrimSpace(l) == "" {
			return usageErr("give each store a name, e.g. --metrics-label media", "empty --metrics-label")
		}
	}
	switch {
	case !perStore && len(labels) != 1:
		return usageErr("give one --metrics-label: "+c.Command.Name+" reports its stores together", "%d --metrics-label given", len(labels))
	case perStore && len(labels) != stores:
		return usageErr("give one --metrics-label per store, in the order of the stores", "%d --metrics-label for %d stores", len(labels), stores)
	}
	return nil
}

// checkOutputFile refuses, before the run does anything, a file the run would
// write after its report (--metrics-file, --plan-out) in a folder that is not
// there or not writable, or that is not a regular file: written at the end,
// its failure would come after a JSON document that says the run went well.
func checkOutputFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return usageErr("give a file", "%s %s is not a regular file", flag, path)
	}
	probe, err := os.CreateTemp(filepath.Dir(absOr(path)), ".mediactl-probe-*")
	if err != nil {
		return usageErr("check that the directory exists and is writable", "%s %s: %v", flag, path, plainPathErr(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// plainPathErr is the reason inside a *fs.PathError, whose message repeats
// the probe's name.
func plainPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// metricsStore is the store label of the i-th store: its --metrics-label, or
// its location with any secret removed.
func metricsStore(c *cli.Context, i int, location string) string {
	if labels := c.StringSlice("metrics-label"); i < len(labels) {
		return labels[i]
	}
	return store.Redact(location)
}

// writeMetrics merges the reports into --metrics-file, when given.
func writeMetrics(c *cli.Context, reports ...metrics.Report) error {
	path := c.String("metrics-file")
	if path == "" {
		return nil
	}
	sh, _ := shardOf(c) // parsed before the run; "" without --shard
	for i := range reports {
		reports[i].Command = c.Command.Name
		reports[i].Shard = sh.String()
	}
	err := metrics.Write(path, time.Now(), reports...)
	if err == nil {
		return nil
	}
	hint := "check that the directory exists and is writable"
	if errors.Is(err, metrics.ErrNotMetrics) {
		hint = "the file is left as it is: remove it, or give --metrics-file a file of its own"
	}
	return &exitError{code: exitIncomplete, err: fmt.Errorf("--metrics-file %s: %w", path, err), hint: hint}
}

// scanMetrics is one series for the whole scan: its counts are sums over
// the stores.
func scanMetrics(c *cli.Context, rep *scan.Report, o outcome.Outcome, took time.Duration) metrics.Report {
	name := ""
	if len(c.StringSlice("metrics-label")) > 0 {
		name = c.StringSlice("metrics-label")[0]
	} else {
		locs := make([]string, len(rep.Stores))
		for i, s := range rep.Stores {
			locs[i] = store.Redact(s)
		}
		name = strings.Join(locs, ",")
	}
	return metrics.Report{Store: name, Outcome: o, ExitCode: exitFor(o), Duration: took, Counts: rep.MetricCounts()}
}

// verifyMetrics is one store's series; qr is its quarantine, if any.
func verifyMetrics(c *cli.Context, i int, rep *verify.Report, o outcome.Outcome, qr *verify.QuarantineReport) metrics.Report {
	return metrics.Report{
		Store: metricsStore(c, i, rep.Store), Outcome: o, ExitCode: exitFor(o),
		Duration: time.Duration(rep.Seconds * float64(time.Second)), Counts: rep.MetricCounts(qr),
	}
}

// gcMetrics is a series per store.
func gcMetrics(c *cli.Context, rep *gc.Report, view []*gcStoreJSON, took time.Duration) []metrics.Report {
	out := make([]metrics.Report, 0, len(view))
	for i, v := range view {
		out = append(out, metrics.Report{
			Store: metricsStore(c, i, v.Store), DryRun: rep.DryRun, Outcome: v.Outcome,
			ExitCode: v.ExitCode, Duration: took, Counts: v.MetricCounts(rep.DryRun),
		})
	}
	return out
}

// migrateMetrics is the series of the migrated store.
func migrateMetrics(c *cli.Context, rep *migrate.RunReport, from string, dryRun bool, took time.Duration) metrics.Report {
	if cr := rep.Copy; cr != nil {
		from = cr.From
	}
	return metrics.Report{
		Store: metricsStore(c, 0, from), DryRun: dryRun, Outcome: rep.Outcome,
		ExitCode: exitFor(rep.Outcome), Duration: took, Counts: rep.MetricCounts(dryRun),
	}
}

// writeFileAtomicFunc writes path with write through a temporary file in
// the same directory and a rename, so readers never see a partial file.
func writeFileAtomicFunc(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	// Unbuffered: its writers hand over few, large writes (gc.WriteJSON buffers
	// its own), and a second buffer would only copy them again.
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
