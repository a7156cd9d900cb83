package main

// The text form of a gc run: one block per store, the lines an operator reads.

import (
	"fmt"
	"io"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/store"
)

// printMarks says what a run on a bucket marked and deleted.
func printMarks(w io.Writer, r *gcStoreJSON, m *gc.MarkReport, trashDir string, quiet bool) {
	for _, s := range m.Unmarked {
		fmt.Fprintf(w, "unmarked  %s  %s\n", printable(s.Key), s.Reason)
	}
	if d := m.Deleted; d != nil {
		for _, s := range d.Skipped {
			fmt.Fprintf(w, "kept      %s  %s\n", printable(s.Key), s.Reason)
		}
		for _, s := range d.Failed {
			fmt.Fprintf(w, "failed    %s  %s\n", printable(s.Key), printable(s.Reason))
		}
		fmt.Fprintf(w, "deleted %s blobs (%s) marked more than %s ago, unreferenced and unchanged since\n", humanize.Comma(d.Deleted), humanize.IBytes(uint64(d.Bytes)), m.Grace)
		if d.NotAttempted > 0 {
			fmt.Fprintf(w, "left %s marked blobs in the store, not attempted\n", humanize.Comma(d.NotAttempted))
		}
		if m.DeletedRun != "" {
			fmt.Fprintf(w, "recorded them as deleted run %s; while the bucket keeps their versions, bring them back with: %s\n", m.DeletedRun, printable(restoreLine(r.Store, trashDir, m.DeletedRun)))
		}
	}
	if r.Error != "" {
		fmt.Fprintf(w, "failed: %s\n", printable(r.Error))
	}
	if m.Run != "" {
		fmt.Fprintf(w, "marked %s blobs (%s) for deletion by a run %s or more from now, run %s; undo with: %s\n",
			humanize.Comma(m.Marked), humanize.IBytes(uint64(m.MarkedBytes)), m.Grace, m.Run, printable(restoreLine(r.Store, trashDir, m.Run)))
	}
	if m.Pending > 0 && !quiet {
		fmt.Fprintf(w, "%s candidates were marked by an earlier run already\n", humanize.Comma(m.Pending))
	}
}

// recoveryNote says in one line what a bucket's service keeps of a blob gc
// deletes, and so whether a delete for good (--no-trash, a marked blob's
// delete, a purge) is final.
func recoveryNote(d *gc.Recovery) string {
	kept := func(what string) string {
		if d.Retention != "" {
			return what + " kept " + d.Retention
		}
		return what + " kept with no known expiry"
	}
	switch d.Kind {
	case store.RecoveryS3Versioning:
		return "note: the bucket keeps deleted objects (S3 versioning, " + kept("noncurrent versions") + "): a blob gc deletes can be recovered from its noncurrent version"
	case store.RecoveryS3VersioningSuspended:
		return "note: S3 versioning is suspended on the bucket (" + kept("noncurrent versions") + "): a blob gc deletes can be recovered from its noncurrent version if it was written while versioning was enabled; one written since is deleted for good"
	case store.RecoveryGCSVersioning:
		return "note: the bucket keeps deleted objects (GCS object versioning, " + kept("noncurrent versions") + "): a blob gc deletes can be recovered from its noncurrent version"
	case store.RecoveryGCSSoftDelete:
		return "note: the bucket keeps deleted objects (GCS soft delete, " + d.Retention + "): a blob gc deletes can be restored within " + d.Retention + " (gcloud storage restore)"
	case store.RecoveryAzureVersioning:
		return "note: the container keeps deleted blobs (Azure blob versioning, " + kept("versions") + "): a blob gc deletes can be recovered from its previous version"
	case store.RecoveryAzureSoftDelete:
		return "note: the storage account keeps deleted blobs (Azure soft delete, " + d.Retention + "): a blob gc deletes can be undeleted within " + d.Retention
	case store.RecoveryNone:
		return "note: no versioning or soft delete on this bucket: --no-trash and marked deletes are final"
	}
	return "note: whether the bucket keeps deleted objects is not known (" + printable(d.Detail) + "): count --no-trash and marked deletes as final"
}

// printRestored lists the blobs put back from the trash because a session
// names them, and the blobs a run put back because it could not read the
// sessions again.
func printRestored(w io.Writer, s *gc.StoreReport) {
	if s.Trash != nil {
		for _, r := range s.Trash.Restored {
			fmt.Fprintf(w, "restored: %s  %s  (from trash run %s)\n", r.Reason, printable(r.Key), r.Run)
		}
		for _, k := range s.Trash.Kept {
			fmt.Fprintf(w, "kept in trash  %s  %s\n", printable(k.Key), k.Reason)
		}
	}
	if s.PutBack > 0 {
		fmt.Fprintf(w, "put back %s blobs this run had moved: the sessions could not all be read again after the moves\n", humanize.Comma(s.PutBack))
	}
}

// restoreLine is the command that puts a trash run of store back, quoted
// for a shell: a store or a --trash-dir with a space in its path is still
// one argument when the operator pastes it.
func restoreLine(store, trashDir, run string) string {
	args := []string{"mediactl", "gc", "restore", "--store", store}
	if trashDir != "" {
		args = append(args, "--trash-dir", absOr(trashDir))
	}
	args = append(args, run)
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

func printGC(w io.Writer, r *gcStoreJSON, o gc.RunOptions, quiet bool, trashDir string) {
	p := r.Plan
	if p == nil {
		if r.Refused != "" {
			fmt.Fprintf(w, "refused: %s\n", r.Refused)
		} else if r.Error != "" {
			fmt.Fprintf(w, "failed: %s: %s\n", r.Store, printable(r.Error))
		}
		return
	}
	for _, pr := range p.Problems {
		fmt.Fprintf(w, "problem   %s\n", printable(pr))
	}
	what := string(p.Policy)
	switch {
	case p.Policy == gc.Refcount:
		what += ", min age " + retain.FormatAge(p.Fence.Sub(p.Cutoff))
	case p.Policy == gc.Age:
		what += ", max age " + retain.FormatAge(p.Fence.Sub(p.Cutoff))
		if o.KeepReferenced {
			what += ", keeping referenced"
		}
	}
	refs := ""
	if p.SessionsRead {
		refs = fmt.Sprintf(", %s referenced", humanize.Comma(p.Referenced))
	}
	if p.Shard != "" {
		what += ", shard " + p.Shard
	}
	line := fmt.Sprintf("gc %s (%s): %s blobs (%s)%s; plan: remove %s blobs (%s)", p.Store, what,
		humanize.Comma(p.Blobs), humanize.IBytes(uint64(p.Bytes)), refs, humanize.Comma(int64(p.Candidates.Len())), humanize.IBytes(uint64(p.CandidateBytes)))
	if p.Candidates.Len() > 0 {
		line += fmt.Sprintf(", modified %s to %s", p.Oldest.Format("2006-01-02"), p.Newest.Format("2006-01-02"))
	}
	if p.MaxSize > 0 {
		line += fmt.Sprintf("; size after %s of cap %s", humanize.IBytes(uint64(p.SizeAfter)), humanize.IBytes(uint64(p.MaxSize)))
		if !p.CapMet {
			line += " (CAP NOT MET: the rest is referenced or younger than --min-age)"
		}
	}
	if !quiet || r.ExitCode != exitOK {
		fmt.Fprintln(w, line)
	}
	if d := r.DeleteRecovery; d != nil && !quiet {
		fmt.Fprintln(w, recoveryNote(d))
	}
	if p.ReferencedCandidates > 0 {
		fmt.Fprintf(w, "WARNING: %s of these blobs are referenced by sessions: their references will dangle (--keep-referenced keeps them)\n", humanize.Comma(p.ReferencedCandidates))
	}
	printRestored(w, r.StoreReport)
	if r.Refused != "" {
		fmt.Fprintf(w, "refused: %s\n", r.Refused)
		if r.Override != "" {
			fmt.Fprintf(w, "  to go ahead anyway, add %s\n", r.Override)
		}
		return
	}
	if m := r.Marks; m != nil {
		printMarks(w, r, m, trashDir, quiet)
		return
	}
	if res := r.Result; res != nil {
		for _, s := range res.Skipped {
			fmt.Fprintf(w, "kept      %s  %s\n", printable(s.Key), s.Reason)
		}
		for _, s := range res.Failed {
			fmt.Fprintf(w, "failed    %s  %s\n", printable(s.Key), printable(s.Reason))
		}
		if r.Error != "" {
			fmt.Fprintf(w, "failed: %s\n", printable(r.Error))
		}
		switch {
		case res.Run != "" && o.NoTrash:
			// Moved out of the store to be deleted, and then not deleted:
			// they wait in a trash run. Bytes counts both kinds.
			fmt.Fprintf(w, "deleted %s blobs permanently; %s more were taken out of the store but not deleted and are in trash run %s (%s in all); put them back with: %s\n",
				humanize.Comma(res.Deleted), humanize.Comma(res.Trashed), res.Run, humanize.IBytes(uint64(res.Bytes)), printable(restoreLine(p.Store, trashDir, res.Run)))
		case res.Run != "":
			fmt.Fprintf(w, "moved %s blobs (%s) to the trash, run %s; undo with: %s\n",
				humanize.Comma(res.Trashed), humanize.IBytes(uint64(res.Bytes)), res.Run, printable(restoreLine(p.Store, trashDir, res.Run)))
		default:
			fmt.Fprintf(w, "deleted %s blobs (%s) permanently\n", humanize.Comma(res.Deleted), humanize.IBytes(uint64(res.Bytes)))
		}
		if r.DeletedRun != "" {
			fmt.Fprintf(w, "recorded them as deleted run %s; while the bucket keeps their versions, bring them back with: %s\n", r.DeletedRun, printable(restoreLine(p.Store, trashDir, r.DeletedRun)))
		}
		if res.NotAttempted > 0 {
			fmt.Fprintf(w, "left %s planned blobs in the store, not attempted\n", humanize.Comma(res.NotAttempted))
		}
		return
	}
	if r.Error != "" {
		fmt.Fprintf(w, "failed: %s\n", printable(r.Error))
	}
	if !o.Delete && p.Candidates.Len() > 0 && !quiet {
		fmt.Fprintln(w, "dry run: nothing removed; add --delete to move these blobs to the trash")
	}
}
