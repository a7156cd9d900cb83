package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/outcome"
)

// migrateSchema versions the JSON document of `migrate -o json`; see docs/migrate.md.
const migrateSchema = "mediactl.migrate/v3"

type migrateDocument struct {
	envelope
	*migrate.RunReport
	Refused string `json:"refused,omitempty"`
	// Undo is the command that rolls this migration back, as it is to be run.
	Undo string `json:"undo"`
}

func renderMigrate(c *cli.Context, g *global, rep *migrate.RunReport, opts migrate.RunOptions, took time.Duration, undo string) error {
	doc := migrateDocument{envelope: g.envelope(migrateSchema, rep.Outcome), RunReport: rep, Undo: undo}
	if rep.Locked != nil {
		doc.Refused = lockedLine(rep.Locked)
	}
	switch g.output {
	case "json", "ndjson":
		if g.output == "ndjson" {
			if err := migrateRecords(g, rep); err != nil {
				return err
			}
		}
		if err := g.document(doc); err != nil {
			return err
		}
	default:
		if !g.quiet || rep.Outcome != outcome.OK {
			printMigrate(g.stdout, &doc)
		}
	}
	if rep.Outcome == outcome.Interrupted && rep.Copy != nil {
		g.interrupted(rep.Copy.Copied, "blobs copied")
	}
	if err := writeMetrics(c, migrateMetrics(c, rep, opts.From.Location(), opts.DryRun, took)); err != nil {
		return err
	}
	return ended(rep.Outcome)
}

// migrateRecords streams the problems of a migration, one record each.
func migrateRecords(g *global, rep *migrate.RunReport) error {
	cr := rep.Copy
	if cr == nil {
		return nil
	}
	for _, l := range []struct {
		typ  string
		list []migrate.Problem
	}{{"corrupt", cr.CorruptList}, {"conflict", cr.ConflictList}, {"failed", cr.FailedList}, {"skipped", cr.SkippedList}} {
		for _, p := range l.list {
			if err := g.record(l.typ, p); err != nil {
				return err
			}
		}
	}
	if ck := rep.Check; ck != nil {
		for _, f := range ck.List {
			if err := g.record("still_local", f); err != nil {
				return err
			}
		}
		for _, u := range ck.UnresolvedList {
			if err := g.record("unresolved", u); err != nil {
				return err
			}
		}
	}
	return nil
}
