package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/mediactl/mediactl/pkg/forget"
	"github.com/mediactl/mediactl/pkg/outcome"
)

type forgetJSON struct {
	envelope
	*forget.Report
}

// presentForget writes the receipt to stdout in the format asked for: -o
// ndjson streams an "erased" record per blob and a "kept" one per blob kept,
// then the summary without them.
func presentForget(g *global, doc *forgetJSON) error {
	switch g.output {
	case "json":
		return g.document(doc)
	case "ndjson":
		for _, b := range doc.Erased {
			if err := g.record("erased", b); err != nil {
				return err
			}
		}
		for _, k := range doc.Kept {
			if err := g.record("kept", k); err != nil {
				return err
			}
		}
		r := *doc.Report
		r.Erased, r.Kept = nil, nil
		return g.document(&forgetJSON{envelope: doc.envelope, Report: &r})
	}
	if g.quiet && doc.Report.Outcome == outcome.OK {
		return nil
	}
	return printForget(g.stdout, doc.Report)
}

// printForget is the text receipt.
func printForget(w io.Writer, r *forget.Report) error {
	var b strings.Builder
	verb := "erased"
	if r.DryRun {
		verb = "would erase"
	}
	fmt.Fprintf(&b, "forget %s: owners %s\n", strings.Join(quoteAll(r.Stores), ", "), strings.Join(quoteAll(r.Owners), ", "))
	if !r.Started.IsZero() {
		fmt.Fprintf(&b, "started %s", r.Started.Format("2006-01-02T15:04:05Z"))
		if !r.Finished.IsZero() {
			fmt.Fprintf(&b, ", finished %s", r.Finished.Format("2006-01-02T15:04:05Z"))
		}
		b.WriteString("\n")
	}
	for _, id := range r.Unknown {
		fmt.Fprintf(&b, "unknown owner  %s: no session unit is theirs; nothing removed\n", printable(id))
	}
	for _, e := range r.Erased {
		when := ""
		if e.RemovedAt != nil {
			when = "  at " + e.RemovedAt.Format("2006-01-02T15:04:05Z")
		}
		sum := e.SHA256
		if sum == "" {
			sum = "-"
		}
		fmt.Fprintf(&b, "%s  %s  sha256 %s  %s  from %s%s\n", verb, printable(e.Key), sum, humanize.IBytes(uint64(e.Size)), strings.Join(e.Where, ", "), when)
	}
	for _, k := range r.Kept {
		what := printable(k.Key)
		if k.Bucket != "" {
			what = "copy " + printable(k.Bucket) + " (" + what + ")"
		}
		fmt.Fprintf(&b, "kept  %s  %s  %s\n", what, humanize.IBytes(uint64(k.Size)), k.Reason)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "problem  %s\n", printable(p))
	}
	if r.Refused != "" {
		fmt.Fprintf(&b, "refused: %s\n", printable(r.Refused))
	}
	fmt.Fprintf(&b, "forget: %d units of theirs; %s %d blobs (%s), kept %d; %d of their references now dangle",
		r.Units, verb, len(r.Erased), humanize.IBytes(uint64(r.ErasedBytes)), len(r.Kept), r.Dangling)
	if r.AlreadyDangling > 0 {
		fmt.Fprintf(&b, " (and %d dangled before)", r.AlreadyDangling)
	}
	b.WriteString("\n")
	switch {
	case len(r.Unknown) > 0:
		b.WriteString("nothing removed: an owner is unknown\n")
	case !r.Complete:
		if r.PutBack > 0 {
			fmt.Fprintf(&b, "INCOMPLETE: %d blobs moved were put back\n", r.PutBack)
		} else {
			b.WriteString("INCOMPLETE: nothing more removed\n")
		}
	case r.DryRun && r.Refused == "":
		b.WriteString("dry run: nothing removed; add --delete to erase\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = listItem(s)
	}
	return out
}

// writeForgetReceipt writes the receipt as path.json and path.txt.
func writeForgetReceipt(path string, doc *forgetJSON) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := writeReportFile(path+".json", buf.Bytes()); err != nil {
		return err
	}
	var txt strings.Builder
	if err := printForget(&txt, doc.Report); err != nil {
		return err
	}
	return writeReportFile(path+".txt", []byte(txt.String()))
}
