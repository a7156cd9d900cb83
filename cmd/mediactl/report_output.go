package main

// What report and report merge share once they hold a report: the output
// in the format asked for, the HTML page, the metrics and the exit code.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/metrics"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/report"
)

func metricsOwnersFlag() cli.Flag {
	return &cli.IntFlag{Name: "metrics-owners", Value: 20, Usage: "with --metrics-file, series for this many owners, those holding the most exclusive bytes (each owner is a series of its own: keep it small)", EnvVars: envVar("metrics-owners")}
}

func checkMetricsOwners(c *cli.Context) error {
	if n := c.Int("metrics-owners"); n < 0 || n > 1000 {
		return usageErr("give a number from 0 to 1000; each owner is a series of its own", "bad --metrics-owners %d", n)
	}
	return nil
}

// finishReport writes the report (stdout, --html, --metrics-file) and ends
// with its outcome.
func finishReport(c *cli.Context, g *global, rep *report.Report, htmlPath string, start time.Time) error {
	o := rep.Outcome()
	g.log.Info("report finished", "owners", rep.OwnerCount, "complete", rep.Complete,
		"seconds", time.Since(start).Seconds(), "exit_code", exitFor(o))
	if err := presentReport(g, rep, o, c.Int("top")); err != nil {
		return err
	}
	if htmlPath != "" {
		if err := writeReportHTML(htmlPath, reportDocument(g, rep, o), c.Int("top")); err != nil {
			return &exitError{code: exitIncomplete, err: fmt.Errorf("--html %s: %w", htmlPath, err), hint: "check that the directory exists and is writable"}
		}
	}
	if o == outcome.Interrupted {
		g.interrupted(int64(len(rep.Stores)), "stores reported")
	}
	if err := writeReportMetrics(c, reportMetrics(c, rep, o, time.Since(start))); err != nil {
		return err
	}
	return ended(o)
}

// writeReportMetrics writes the series as command "report", also from
// report merge, whose series are those of the whole store.
func writeReportMetrics(c *cli.Context, reports []metrics.Report) error {
	if c.Command.Name == "report" {
		return writeMetrics(c, reports...)
	}
	path := c.String("metrics-file")
	if path == "" {
		return nil
	}
	for i := range reports {
		reports[i].Command = "report"
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

// reportMetrics is a series per store; the top owners (over all the stores)
// are series of the first store's run.
func reportMetrics(c *cli.Context, rep *report.Report, o outcome.Outcome, took time.Duration) []metrics.Report {
	out := make([]metrics.Report, 0, len(rep.Stores))
	for i, s := range rep.Stores {
		counts := s.MetricCounts()
		if len(rep.Stores) == 1 {
			counts[metrics.Dangling] = rep.Totals.DanglingReferences
		}
		out = append(out, metrics.Report{Store: metricsStore(c, i, s.Store), Outcome: o, ExitCode: exitFor(o), Duration: took, Counts: counts})
	}
	if len(out) > 0 {
		out[0].Owners = rep.TopOwnerMetrics(c.Int("metrics-owners"))
	}
	return out
}

// presentReport writes the result to stdout in the format asked for.
func presentReport(g *global, rep *report.Report, o outcome.Outcome, top int) error {
	switch g.output {
	case "json":
		return g.document(reportDocument(g, rep, o))
	case "ndjson":
		for _, st := range rep.Owners {
			if err := g.record("owner", st); err != nil {
				return err
			}
		}
		if err := g.record("unattributed", &rep.Unattributed); err != nil {
			return err
		}
		doc := *reportDocument(g, rep, o)
		r := *doc.Report
		r.Owners = nil // streamed above
		doc.Report = &r
		return g.document(&doc)
	}
	if g.quiet && o == outcome.OK {
		return nil
	}
	return printReport(g.stdout, rep, top, isTerminal(g.stdout), g.quiet)
}

type reportJSON struct {
	envelope
	*report.Report
}

func reportDocument(g *global, rep *report.Report, o outcome.Outcome) *reportJSON {
	return &reportJSON{envelope: g.envelope(reportSchema, o), Report: rep}
}

// isTerminal reports whether w is a terminal that bars may be drawn on.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && fileIsTerminal(f) && terminalRedraws(os.Getenv)
}

// writeFileAtomic writes data to path through a temporary file beside it.
func writeReportFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return errors.Join(err, os.Remove(tmp.Name()))
	}
	return nil
}
