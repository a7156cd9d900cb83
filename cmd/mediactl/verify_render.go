package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/mediactl/mediactl/pkg/verify"
)

func printVerify(w io.Writer, rep *verify.Report, quiet bool) {
	for _, r := range rep.Corrupt {
		ref := ""
		if r.Referenced {
			ref = " (referenced by a session)"
		}
		fmt.Fprintf(w, "corrupt     %s  expected %s, content hashes to %s%s\n", printable(r.Key), r.Expected, r.Actual, ref)
	}
	for _, r := range rep.Unreadable {
		fmt.Fprintf(w, "unreadable  %s  %s\n", printable(r.Key), printable(r.Err))
	}
	if !quiet {
		for _, a := range rep.Anomalies {
			fmt.Fprintf(w, "%-11s %s  %s\n", a.Kind, printable(a.Key), printable(a.Detail))
		}
	}
	if rep.Sessions != nil {
		for _, f := range rep.Sessions.Scan.Dangling {
			fmt.Fprintf(w, "dangling    %s  %s (missing)\n", printable(f.Place.String()), printable(f.Ref.Raw))
		}
		for _, p := range rep.Sessions.Scan.Problems {
			fmt.Fprintf(w, "problem     %s: %s\n", printable(p.Place.String()), printable(p.Err))
		}
	}
	if rep.ListError != "" {
		fmt.Fprintf(w, "problem     listing %s: %s\n", rep.Store, printable(rep.ListError))
	}
	if rep.Truncated {
		fmt.Fprintln(w, "(lists cut at --max-listed; the counts below are complete)")
	}
	fmt.Fprintln(w, verifySummary(rep))
}

// verifySummary is the last line: one line an operator can paste into a ticket.
func verifySummary(rep *verify.Report) string {
	var b strings.Builder
	if rep.Interrupted {
		// The listing stopped too: the totals are what it reached.
		checked := rep.Counts[verify.OK] + rep.Counts[verify.Corrupt] + rep.Counts[verify.Unverifiable] + rep.Counts[verify.Unreadable]
		fmt.Fprintf(&b, "verify %s%s: interrupted after %s blobs checked (%s stopped midway, not attempted) of the %s listed so far",
			rep.Store, shardNote(rep.Shard), humanize.Comma(checked), humanize.Comma(rep.NotAttempted), humanize.Comma(rep.Blobs))
	} else {
		fmt.Fprintf(&b, "verify %s%s: %s of %s blobs checked", rep.Store, shardNote(rep.Shard), humanize.Comma(rep.Selected), humanize.Comma(rep.Blobs))
		if rep.Fraction < 1 && rep.Blobs > 0 {
			fmt.Fprintf(&b, " (%.1f%%)", 100*rep.Fraction)
		}
	}
	if rep.Mode == "fast" {
		b.WriteString(" by metadata (--fast, content not read)")
	} else {
		rate := 0.0
		if rep.Seconds > 0 {
			rate = float64(rep.BytesRead) / rep.Seconds
		}
		fmt.Fprintf(&b, ", %s hashed in %s (%s/s)", humanize.IBytes(uint64(rep.BytesRead)), roundDuration(rep.Seconds), humanize.IBytes(uint64(rate)))
	}
	fmt.Fprintf(&b, ": %s ok, %s corrupt", humanize.Comma(rep.Counts[verify.OK]), humanize.Comma(rep.Counts[verify.Corrupt]))
	if n := rep.ReferencedCorrupt(); n > 0 {
		fmt.Fprintf(&b, " (%d referenced)", n)
	}
	fmt.Fprintf(&b, ", %s unverifiable, %s unreadable; %s anomalies",
		humanize.Comma(rep.Counts[verify.Unverifiable]), humanize.Comma(rep.Counts[verify.Unreadable]), humanize.Comma(rep.AnomalyCount))
	if s := rep.Sessions; s != nil {
		fmt.Fprintf(&b, "; %s dangling references, %s orphans (%s)", humanize.Comma(s.Scan.DanglingReferences),
			humanize.Comma(s.Orphans), humanize.IBytes(uint64(s.OrphanBytes)))
	}
	switch {
	case rep.Interrupted:
		b.WriteString("; INTERRUPTED")
	case !rep.Complete:
		b.WriteString("; INCOMPLETE")
	}
	return b.String()
}

func roundDuration(s float64) time.Duration {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d > time.Minute:
		return d.Round(time.Second)
	case d > time.Second:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

func printQuarantine(w io.Writer, qr *verify.QuarantineReport, where string) {
	for _, m := range qr.Moved {
		fmt.Fprintf(w, "quarantined %s  -> %s/%s (%s)\n", printable(m.Key), where, printable(m.Moved), m.How)
	}
	for _, k := range qr.Kept {
		fmt.Fprintf(w, "kept        %s  %s\n", printable(k.Key), printable(k.Err))
	}
	fmt.Fprintf(w, "quarantine: %d moved, %d kept; manifest %s/%s\n", len(qr.Moved), len(qr.Kept), where, qr.Manifest)
}
