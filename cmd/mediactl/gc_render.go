package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/outcome"
)

// gcStoreJSON is one store of the gc document: the library's report with
// the refusal worded for the command line.
type gcStoreJSON struct {
	*gc.StoreReport
	// Refused says why nothing was removed, when a guard or the lock
	// refused; Error what made the store's run incomplete.
	Refused  string `json:"refused,omitempty"`
	Override string `json:"override,omitempty"`
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exit_code"`
}

type gcDocument struct {
	envelope
	DryRun bool           `json:"dry_run"`
	Stores []*gcStoreJSON `json:"stores"`
}

// refusal words a store's refusal and its override for the command line.
func refusal(s *gc.StoreReport) (reason, override string) {
	switch {
	case s.Locked != nil:
		return lockedLine(s.Locked), ""
	case s.Refused != nil:
		r := s.Refused
		switch r.Guard {
		case gc.NoReferences:
			return fmt.Sprintf("the sessions hold no reference to any of the store's %d blobs: is --sessions pointing at the right place?", r.Blobs), "--allow-no-references"
		case gc.MaxDeleteCount:
			return fmt.Sprintf("the plan removes %d blobs, more than --max-delete %g", r.Candidates, r.Limit), fmt.Sprintf("--max-delete %d", r.Candidates)
		}
		return fmt.Sprintf("the plan removes %d of %d blobs (%.1f%%), more than --max-delete %g%%", r.Candidates, r.Blobs, r.Percent(), r.Limit), "--max-delete 100%"
	case s.Err != nil && errors.Is(s.Err, gc.ErrIncomplete):
		return s.Err.Error(), ""
	}
	return "", ""
}

func gcView(rep *gc.Report) []*gcStoreJSON {
	out := make([]*gcStoreJSON, 0, len(rep.Stores))
	for _, s := range rep.Stores {
		v := &gcStoreJSON{StoreReport: s, ExitCode: exitFor(s.Outcome)}
		v.Refused, v.Override = refusal(s)
		if s.Err != nil && v.Refused == "" {
			v.Error = s.Err.Error()
		}
		out = append(out, v)
	}
	return out
}

// gcError words Run's errors for the command line.
func gcError(err error) error {
	var nested *gc.NestedStoreError
	if errors.As(err, &nested) {
		return &exitError{code: exitUsage, err: err, hint: "point --store at one store: the blobs of the nested one would be swept as this one's (its trash among them)"}
	}
	return usageErr("", "%v", err)
}

func renderGC(c *cli.Context, g *global, rep *gc.Report, opts gc.RunOptions, took time.Duration) error {
	var plans []*gc.Plan
	for _, s := range rep.Stores {
		if s.Plan != nil {
			plans = append(plans, s.Plan)
		}
	}
	view := gcView(rep)
	doc := gcDocument{envelope: g.envelope(gcSchema, rep.Outcome), DryRun: rep.DryRun, Stores: view}
	switch g.output {
	case "json":
		if err := gc.WriteJSON(g.stdout, doc, true, plans); err != nil {
			return err
		}
	case "ndjson":
		if err := gcRecords(g, rep); err != nil {
			return err
		}
		// The candidates were streamed: the summary leaves them out.
		saved := make([]gc.Candidates, len(plans))
		for i, p := range plans {
			saved[i], p.Candidates = p.Candidates, gc.Candidates{}
		}
		err := g.document(doc)
		for i, p := range plans {
			p.Candidates = saved[i]
		}
		if err != nil {
			return err
		}
	default:
		if !g.quiet || rep.Outcome != outcome.OK {
			for _, v := range view {
				printGC(g.stdout, v, opts, g.quiet, c.String("trash-dir"))
			}
		}
	}
	if rep.Outcome == outcome.Interrupted {
		g.interrupted(rep.Done(), "blobs removed")
	}
	// After the report: a plan file or a metrics file that cannot be
	// written does not hide what the run did.
	if f := c.String("plan-out"); f != "" {
		doc := struct {
			Schema string     `json:"schema"`
			Plans  []*gc.Plan `json:"plans"`
		}{"mediactl.gc-plan/v1", plans}
		if err := writeFileAtomicFunc(f, func(w io.Writer) error { return gc.WriteJSON(w, doc, true, plans) }); err != nil {
			return fmt.Errorf("--plan-out %s: %w", f, err)
		}
	}
	if err := writeMetrics(c, gcMetrics(c, rep, view, took)...); err != nil {
		return err
	}
	return ended(rep.Outcome)
}

// gcRecords streams a gc run's items: each candidate, then each blob kept or
// failed at the sweep.
func gcRecords(g *global, rep *gc.Report) error {
	type item struct {
		Store  string `json:"store"`
		Key    string `json:"key"`
		Reason string `json:"reason"`
	}
	for _, s := range rep.Stores {
		if s.Plan != nil {
			for cand := range s.Plan.Candidates.All() {
				if err := g.record("candidate", struct {
					Store string `json:"store"`
					gc.Candidate
				}{s.Store, cand}); err != nil {
					return err
				}
			}
		}
		if s.Trash != nil {
			for _, r := range s.Trash.Restored {
				if err := g.record("restored", struct {
					Store string `json:"store"`
					gc.Restored
				}{s.Store, r}); err != nil {
					return err
				}
			}
		}
		if s.Result != nil {
			for _, k := range s.Result.Skipped {
				if err := g.record("kept", item{s.Store, k.Key, k.Reason}); err != nil {
					return err
				}
			}
			for _, k := range s.Result.Failed {
				if err := g.record("failed", item{s.Store, k.Key, k.Reason}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
