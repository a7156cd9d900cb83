package main

// The text form of a migrate run.

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/scan"
)

func printMigrate(w io.Writer, doc *migrateDocument) {
	rep := doc.RunReport
	if doc.Refused != "" {
		fmt.Fprintf(w, "refused: %s\n", doc.Refused)
	}
	cr := rep.Copy
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", printable(n))
	}
	if cr == nil {
		return
	}
	for _, imp := range rep.Imported {
		if imp.Skipped != "" {
			fmt.Fprintf(w, "shard journal not taken over: %s: %s\n", printable(imp.Journal), printable(imp.Skipped))
		}
	}
	if taken, from := importedProofs(rep.Imported); from > 0 {
		fmt.Fprintf(w, "took over %d proven copies from %d shard journals\n", taken, from)
	}
	for _, imp := range rep.Imported {
		if imp.Disagreed > 0 {
			fmt.Fprintf(w, "shard journal %s: %d copies proven otherwise than in this journal; both proofs set aside, each proven again from the destination\n", printable(imp.Journal), imp.Disagreed)
		}
	}
	listProblems(w, "corrupt (not uploaded)", cr.CorruptList, cr.Corrupt)
	listProblems(w, "conflict", withHint(cr.ConflictList, "--overwrite replaces it"), cr.Conflicts)
	listProblems(w, "failed", cr.FailedList, cr.Failed)
	listProblems(w, "skipped", cr.SkippedList, cr.Skipped)
	if rr := rep.Rewrite; rr != nil {
		for _, n := range rr.ProblemList {
			fmt.Fprintf(w, "not rewritten: %s: %s\n", printable(n.Place.String()), printable(n.Reason))
		}
		for _, n := range rr.KeptList {
			fmt.Fprintf(w, "kept: %s: %s\n", printable(n.Place.String()), printable(n.Reason))
		}
		for _, n := range rr.BusyList {
			fmt.Fprintf(w, "busy: %s: %s\n", printable(n.Place.String()), printable(n.Reason))
		}
	}
	if ck := rep.Check; ck != nil {
		for _, f := range ck.List {
			fmt.Fprintf(w, "still local: %s: %s\n", printable(f.Place.String()), printable(f.Ref.Raw))
		}
		for _, u := range ck.UnresolvedList {
			fmt.Fprintf(w, "unresolved: %s: %s: %s\n", printable(u.Place.String()), printable(u.Ref), printable(u.Reason))
		}
		for _, p := range ck.Problems {
			fmt.Fprintf(w, "unreadable: %s\n", printable(p))
		}
	}
	verb := "copied"
	if cr.DryRun {
		verb = "would copy"
	}
	fmt.Fprintf(w, "%s %d blobs (%s) to %s", verb, cr.Copied, humanize.IBytes(uint64(cr.CopiedBytes)), printable(cr.To))
	if !cr.DryRun && cr.Seconds > 0 && cr.CopiedBytes > 0 {
		fmt.Fprintf(w, " in %s (%s/s)", (time.Duration(cr.Seconds * float64(time.Second))).Round(time.Millisecond), humanize.IBytes(uint64(float64(cr.CopiedBytes)/cr.Seconds)))
	}
	fmt.Fprintf(w, "; %d already there, %d proven earlier, %d conflicts, %d corrupt, %d failed, %d skipped",
		cr.Existing, cr.Resumed, cr.Conflicts, cr.Corrupt, cr.Failed, cr.Skipped)
	if cr.Unfinished > 0 {
		fmt.Fprintf(w, ", %d stopped midway (not copied)", cr.Unfinished)
	}
	fmt.Fprintln(w)
	if e := rep.Estimate; e != nil {
		if e.Rate > 0 {
			fmt.Fprintf(w, "estimate: %s at %s/s (%s)\n", (time.Duration(e.Seconds * float64(time.Second))).Round(time.Second), humanize.IBytes(uint64(e.Rate)), e.Basis)
		} else {
			fmt.Fprintf(w, "estimate: %s\n", e.Basis)
		}
	}
	if rr := rep.Rewrite; rr != nil {
		fmt.Fprintf(w, "rewrote %d references in %d of %d session units; %d kept, %d busy, %d units not rewritten\n", rr.References, rr.Changed, rr.Units, rr.Kept, rr.Busy, rr.Problems)
		if rr.Changed > 0 && rep.Delete == nil {
			fmt.Fprintf(w, "undo with: %s\n", printable(doc.Undo))
		}
	}
	if ck := rep.Check; ck != nil {
		if ck.StillLocal == 0 && ck.Complete {
			fmt.Fprintln(w, "check: no session points at a local copy of a migrated blob")
		} else {
			fmt.Fprintf(w, "check: %d references still point at local copies of migrated blobs\n", ck.StillLocal)
			if docs := leftoverDocs(ck.List); len(docs) > 0 {
				fmt.Fprintf(w, "note: %d of them are in leftovers of a save cut short (%s), which the rewrite does not touch: if one is the only copy of its session, rename it to the session's own name (without .tmp) and run the rewrite again; otherwise remove it\n", len(docs), printable(strings.Join(docs, ", ")))
			}
		}
		printReadBack(w, ck)
	}
	if d := rep.Delete; d != nil {
		printDelete(w, d, doc.Undo)
	}
	fmt.Fprintf(w, "journal: %s\n", printable(rep.Journal))
}

// printReadBack says what reading the references to the copies back proved.
func printReadBack(w io.Writer, ck *migrate.CheckReport) {
	n := ck.ReadBack + ck.ReadBackOther + ck.Unresolved
	if n == 0 {
		return
	}
	how := "stat'ed: there, of the proven size and sha256"
	if ck.ReadBackFull {
		how = "read in full and hashed"
	}
	fmt.Fprintf(w, "check: %d of %d references to copies resolve to their proven copies as the runtime reads them (%s)", ck.ReadBack, n, how)
	if ck.ReadBackOther > 0 {
		fmt.Fprintf(w, "; %d to verified objects this run holds no proof of", ck.ReadBackOther)
		switch rest := ck.ReadBackOther - ck.ReadBackLeftAlone; {
		case ck.ReadBackLeftAlone == 0:
			fmt.Fprint(w, " (their sources already moved, or not copied by this migration)")
		case rest == 0:
			fmt.Fprintf(w, " (%d copied by an earlier run, whose sources this run left alone as recently modified)", ck.ReadBackLeftAlone)
		default:
			fmt.Fprintf(w, " (%d copied by an earlier run, whose sources this run left alone as recently modified; %d whose sources already moved, or not copied by this migration)", ck.ReadBackLeftAlone, rest)
		}
	}
	switch {
	case ck.Unresolved > 0 && ck.UnresolvedUnknown > 0:
		fmt.Fprintf(w, "; %d do not, %d of them standing for no proven source (no source is deleted while they do not resolve)", ck.Unresolved, ck.UnresolvedUnknown)
	case ck.Unresolved > 0:
		fmt.Fprintf(w, "; %d do not (their sources are kept)", ck.Unresolved)
	}
	fmt.Fprintln(w)
}

// leftoverDocs are the documents of still-local references that are
// leftovers of an atomic save cut short ("<id>.json.tmp"), each once: the
// scan reads them as text, since one may be the only copy of a session, but
// no runtime reads them and the rewrite leaves them alone.
func leftoverDocs(list []scan.Found) []string {
	var out []string
	for _, f := range list {
		if d := f.Place.Document; blobname.IsTemporary(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func printDelete(w io.Writer, d *migrate.DeleteReport, undo string) {
	if d.Refused != "" && d.Result == nil {
		fmt.Fprintf(w, "delete-source refused: %s\n", printable(d.Refused))
		return
	}
	listProblems(w, "source kept", d.CopyGone, int64(len(d.CopyGone)))
	if d.Result == nil {
		fmt.Fprintf(w, "delete-source: nothing to move (%d kept because a session reference still points at them, %d copies not in place)\n", d.Kept, len(d.CopyGone))
	} else {
		for _, f := range d.Result.Failed {
			fmt.Fprintf(w, "failed: %s: %s\n", printable(f.Key), printable(f.Reason))
		}
		if d.Refused != "" {
			fmt.Fprintf(w, "delete-source stopped: %s\n", printable(d.Refused))
		}
		fmt.Fprintf(w, "moved %d sources (%s) to trash run %s; %d kept because a session reference still points at them, %d changed since the copy and kept; undo with: %s\n",
			d.Result.Trashed, humanize.IBytes(uint64(d.Result.Bytes)), d.Result.Run, d.Kept, len(d.Result.Skipped), printable(undo))
	}
	// The sources no reference points at that stay all the same, each
	// under its own reason (the count above is of the others).
	if d.KeptRetained > 0 || d.KeptYoung > 0 || d.KeptTemporary > 0 || d.KeptUnlisted > 0 {
		fmt.Fprintf(w, "kept: %d whose name session text still mentions (the retention rule, as gc keeps them), %d younger than --min-age %s, %d with a temporary-looking name (never removed), %d no longer in the store\n",
			d.KeptRetained, d.KeptYoung, d.MinAge, d.KeptTemporary, d.KeptUnlisted)
	}
}

// withHint is list with hint added to each reason.
func withHint(list []migrate.Problem, hint string) []migrate.Problem {
	out := make([]migrate.Problem, len(list))
	for i, p := range list {
		p.Reason += "; " + hint
		out[i] = p
	}
	return out
}

func listProblems(w io.Writer, what string, list []migrate.Problem, n int64) {
	for _, p := range list {
		fmt.Fprintf(w, "%s: %s: %s", what, printable(p.Key), printable(p.Reason))
		if p.Expected != "" && p.Actual != "" {
			fmt.Fprintf(w, " (want %s, got %s)", p.Expected, p.Actual)
		}
		fmt.Fprintln(w)
	}
	if extra := n - int64(len(list)); extra > 0 {
		fmt.Fprintf(w, "%s: … and %d more\n", what, extra)
	}
}

// importedProofs totals the proven copies taken over and the shard journals
// they came from.
func importedProofs(imps []migrate.ImportedJournal) (proofs, journals int) {
	for _, imp := range imps {
		if imp.Skipped == "" && imp.Proofs > 0 {
			proofs += imp.Proofs
			journals++
		}
	}
	return proofs, journals
}
