package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"golang.org/x/term"

	"github.com/mediactl/mediactl/pkg/report"
)

func fileIsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// ibytes is a size in IEC units, as every command writes them.
func ibytes(n int64) string { return humanize.IBytes(uint64(max(n, 0))) }

// blobs is "N blobs (SIZE)".
func blobsOf(c report.Count) string {
	return fmt.Sprintf("%s blobs (%s)", humanize.Comma(c.Blobs), ibytes(c.Bytes))
}

// bar draws part of whole as a bar of width cells in Unicode blocks, with
// eighths for the last cell.
func bar(part, whole int64, width int) string {
	if whole <= 0 || part <= 0 {
		return ""
	}
	eighths := int(float64(part) / float64(whole) * float64(width*8))
	eighths = max(min(eighths, width*8), 1)
	s := strings.Repeat("█", eighths/8)
	if r := eighths % 8; r > 0 {
		s += string([]rune("▏▎▍▌▋▊▉")[r-1])
	}
	return s
}

// printReport is the terminal summary: per store its totals, ages, types,
// sizes, growth and policies, then the owners, then one summary line. Bars
// only on a terminal. quiet (-q, with an outcome that is not ok) keeps what
// is wrong, as scan's and verify's do: the problem lines and the summary
// line, which counts the dangling references and corrupt blobs and says
// whether the counts are partial.
func printReport(w io.Writer, rep *report.Report, top int, tty, quiet bool) error {
	var tb textTable
	row := tb.row
	flush := func() { tb.write(w) }
	barOf := func(part, whole int64) string {
		if !tty {
			return ""
		}
		return bar(part, whole, 20)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "problem   %s\n", printable(p))
	}
	if quiet {
		return printReportSummary(w, rep)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note      %s\n", n)
	}
	for _, s := range rep.Stores {
		fmt.Fprintf(w, "store %s (%s): %s\n", printable(s.Store), s.Kind, blobsOf(s.Stored))
		row("  referenced", humanize.Comma(s.Referenced.Blobs), ibytes(s.Referenced.Bytes), barOf(s.Referenced.Bytes, s.Stored.Bytes))
		row("  orphaned", humanize.Comma(s.Orphaned.Blobs), ibytes(s.Orphaned.Bytes), barOf(s.Orphaned.Bytes, s.Stored.Bytes))
		row("  shared by owners", humanize.Comma(s.Shared.Blobs), ibytes(s.Shared.Bytes), barOf(s.Shared.Bytes, s.Stored.Bytes))
		row(fmt.Sprintf("  in trash (%d runs)", s.TrashRuns), humanize.Comma(s.InTrash.Blobs), ibytes(s.InTrash.Bytes), "")
		row("  marked", humanize.Comma(s.Marked.Blobs), ibytes(s.Marked.Bytes), "")
		if s.Corrupt != nil {
			row("  corrupt", humanize.Comma(s.Corrupt.Blobs), ibytes(s.Corrupt.Bytes), "")
		}
		flush()
		fmt.Fprintln(w, "  by age            modified: referenced  orphaned   last reference: referenced")
		for i, b := range s.ByModified {
			row("    "+b.Bucket, ibytes(b.Referenced.Bytes), ibytes(b.Orphaned.Bytes), ibytes(s.ByLastReference[i].Referenced.Bytes), barOf(b.Referenced.Bytes+b.Orphaned.Bytes, s.Stored.Bytes))
		}
		u := s.ByLastReference[len(s.ByLastReference)-2]
		row("    unknown", "", "", ibytes(u.Referenced.Bytes), "")
		flush()
		fmt.Fprintln(w, "  by media type")
		for _, t := range s.ByMediaType {
			row("    "+printable(t.Type), humanize.Comma(t.Blobs), ibytes(t.Bytes), barOf(t.Bytes, s.Stored.Bytes))
		}
		flush()
		fmt.Fprintln(w, "  by size")
		for _, c := range s.BySize {
			row("    "+c.Class, humanize.Comma(c.Blobs), ibytes(c.Bytes), barOf(c.Bytes, s.Stored.Bytes))
		}
		flush()
		fmt.Fprintf(w, "  growth: %s/day over %d days", ibytes(int64(s.Growth.BytesPerDay)), report.GrowthDays)
		if fs := s.Growth.Filesystem; fs != nil {
			fmt.Fprintf(w, "; file system %s free of %s", ibytes(int64(fs.Free)), ibytes(int64(fs.Size)))
			switch d := fs.DaysUntilFull; {
			case d == nil:
			case *d > 36500:
				fmt.Fprint(w, ", not full within 100 years at that rate")
			default:
				fmt.Fprintf(w, ", full in %s days at that rate", humanize.Comma(int64(*d)))
			}
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "  gc would free now")
		for _, p := range s.Policies {
			note := ""
			if p.Referenced > 0 {
				note = fmt.Sprintf("%s referenced: their references dangle", humanize.Comma(p.Referenced))
			}
			if p.CapMet != nil && !*p.CapMet {
				note = "the cap is not met: referenced and young blobs exceed it"
			}
			row("    "+p.Name, humanize.Comma(p.Free.Blobs), ibytes(p.Free.Bytes), barOf(p.Free.Bytes, s.Stored.Bytes), note)
		}
		flush()
	}
	printOwners(w, rep, top)
	return printReportSummary(w, rep)
}

// printOwners is the owner table, largest first, cut at top (0: all).
func printOwners(w io.Writer, rep *report.Report, top int) {
	owners := rep.Owners
	if top > 0 && len(owners) > top {
		owners = owners[:top]
	}
	fmt.Fprintf(w, "owners (%s): %d of %s, by referenced bytes\n", rep.Rule, len(owners), humanize.Comma(int64(rep.OwnerCount)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  OWNER\tUNITS\tBLOBS\tREFERENCED\tEXCLUSIVE\tLAST ACTIVITY")
	for _, o := range owners {
		id := printable(o.ID)
		if o.Agent != "" {
			id += " (" + printable(o.Agent) + ")"
		}
		last := "-"
		if o.LastActivity != nil {
			last = o.LastActivity.Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", id, humanize.Comma(o.Units), humanize.Comma(o.Referenced.Blobs),
			ibytes(o.Referenced.Bytes), ibytes(o.Exclusive.Bytes), last)
	}
	u := rep.Unattributed
	fmt.Fprintf(tw, "  unattributed\t%s\t%s\t%s\t%s\t-\n", humanize.Comma(u.Units), humanize.Comma(u.Referenced.Blobs+u.TextOnly.Blobs),
		ibytes(u.Referenced.Bytes+u.TextOnly.Bytes), ibytes(u.Exclusive.Bytes))
	tw.Flush()
	for _, unit := range u.UnitList {
		fmt.Fprintf(w, "unattributed  %s\n", printable(unit.String()))
	}
	if rep.Truncated {
		fmt.Fprintln(w, "(lists cut at --max-listed; the counts are complete; -o json lists every owner)")
	}
}

func printReportSummary(w io.Writer, rep *report.Report) error {
	t := rep.Totals
	var b strings.Builder
	fmt.Fprintf(&b, "report%s: %d stores, %s: %s referenced, %s orphaned; %s owners; %s dangling references",
		shardNote(rep.Shard)+mergedNote(rep.Merged), len(rep.Stores), blobsOf(t.Stored), blobsOf(t.Referenced), blobsOf(t.Orphaned),
		humanize.Comma(int64(rep.OwnerCount)), humanize.Comma(t.DanglingReferences))
	if t.Corrupt != nil {
		fmt.Fprintf(&b, "; %s corrupt", humanize.Comma(t.Corrupt.Blobs))
	}
	switch {
	case rep.Interrupted:
		b.WriteString("; INTERRUPTED: counts are partial")
	case !rep.Complete:
		fmt.Fprintf(&b, "; INCOMPLETE: %d problems, counts are partial", len(rep.Problems))
	}
	_, err := fmt.Fprintln(w, b.String())
	return err
}

// mergedNote is " (merged: K of N shards)" for a merged report's summary
// line, with the missing ones.
func mergedNote(m *report.Merged) string {
	if m == nil {
		return ""
	}
	s := fmt.Sprintf(" (merged: %d of %d shards", len(m.Shards), m.Of)
	if len(m.Missing) > 0 {
		s += "; missing " + strings.Join(m.Missing, ", ")
	}
	return s + ")"
}

// textTable aligns rows: the first column left, the numbers right, a last
// column holding a bar or a note left.
type textTable struct{ rows [][]string }

func (t *textTable) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *textTable) write(w io.Writer) {
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i == 0:
				b.WriteString(c + pad)
			case i <= 3 && c != "" && c[0] >= '0' && c[0] <= '9':
				b.WriteString("  " + pad + c)
			default:
				b.WriteString("  " + c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	t.rows = t.rows[:0]
}
