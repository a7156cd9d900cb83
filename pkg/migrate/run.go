package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// RunOptions configure Run: the copy (Options) and the steps after it.
type RunOptions struct {
	// Options is the copy. Its Journal is opened by Run from JournalPath.
	Options
	// JournalPath is the journal file; "" means DefaultJournal.
	JournalPath string

	// Rewrite rewrites every session reference to a proven copy, in
	// Rewriters, into Template's text; units modified within MinIdle are left
	// alone (busy). Rewriters are opened with the options Sessions were
	// (sessions.Options.Exclude): the check and the delete-source that follow
	// judge what Sessions read, so a rewriter that read more would change,
	// and fail on, units no later step looks at.
	Rewrite   bool
	Rewriters []sessions.Rewriter
	Template  Template
	MinIdle   time.Duration
	// Reads, when set, says whether the runtime that replays the sessions
	// reads a reference of the given text (a layout's ReadsPath): a rewrite
	// into text it does not read would break every replay, and is refused
	// before anything is done.
	Reads func(ref string) bool
	// ReadBack, when set, reads every reference to a copy that the check
	// after the rewrite finds back the way the runtime will (see ReadBack):
	// one that does not lead to its proven copy is listed as unresolved
	// (exit 1), and its source is kept.
	ReadBack *ReadBack
	// Resolver resolves the sessions' references against From (the layout's,
	// or scan.NewResolver).
	Resolver *ref.Resolver

	// DeleteSource moves the sources that may go (a proven copy still in
	// place, no session naming them, older than MinAge) into the trash:
	// From's own, or the local folder TrashDir.
	DeleteSource bool
	MinAge       time.Duration
	TrashDir     string
	// Companion is the retention model's companion rule for From.
	Companion func(key string) (owner string, ok bool)

	// Sessions and Bases are read for the check after the rewrite and for
	// DeleteSource.
	Sessions []sessions.Source
	Bases    []string

	// Command is recorded in the store lock.
	Command string
	// CopyProgress and DeleteProgress, when set, give a progress for the copy
	// (total bytes, -1 when unknown) and for the sources moved (total blobs).
	CopyProgress   func(total int64) RunProgress
	DeleteProgress func(total int64) RunProgress
}

// RunProgress is a progress that is finished when its step is done.
type RunProgress interface {
	Add(int64)
	Finish()
}

// RunReport is what Run did.
type RunReport struct {
	Journal string `json:"journal"`
	// Shard is the part of the store migrated, "K/N" ("" for all of it).
	Shard    string         `json:"shard,omitempty"`
	Copy     *Report        `json:"copy"`
	Estimate *Estimate      `json:"estimate,omitempty"`
	Rewrite  *RewriteReport `json:"rewrite,omitempty"`
	Check    *CheckReport   `json:"check,omitempty"`
	Delete   *DeleteReport  `json:"delete_source,omitempty"`
	// Imported are the shards' journals (see ShardJournal) whose proven
	// copies a run on the whole store took over before copying.
	Imported []ImportedJournal `json:"imported_shard_journals,omitempty"`
	// Notes are errors that ended a step early, in words.
	Notes   []string        `json:"notes"`
	Outcome outcome.Outcome `json:"-"` // the document's envelope carries it
	// Locked is set when another run holds the source's lock: nothing was
	// done (a dry run reports it too, as the real run would refuse).
	Locked *storelock.LockedError `json:"-"`
}

// Estimate is a dry run's guess of how long the copy takes.
type Estimate struct {
	Bytes   int64   `json:"bytes"`
	Rate    float64 `json:"bytes_per_second"`
	Seconds float64 `json:"seconds"`
	Basis   string  `json:"basis"`
}

// DeleteReport is what DeleteSource did.
type DeleteReport struct {
	Candidates int64 `json:"candidates"`
	// Kept counts sources a precise reference still points at (one the
	// check resolves to the source, or one to a copy that does not read
	// back); KeptRetained the others whose name some session text still
	// holds (the retention rule), KeptYoung those younger than MinAge,
	// KeptTemporary those still in the store whose names look temporary
	// (never removed), KeptUnlisted those that are no longer regular blobs
	// of the store.
	Kept          int64  `json:"kept_referenced"`
	KeptRetained  int64  `json:"kept_retention_rule"`
	KeptYoung     int64  `json:"kept_young"`
	KeptTemporary int64  `json:"kept_temporary"`
	KeptUnlisted  int64  `json:"kept_unlisted"`
	MinAge        string `json:"min_age"`
	// CopyGone are sources kept because their copy is no longer in the
	// destination as proven.
	CopyGone []Problem     `json:"kept_copy_gone"`
	Result   *trash.Result `json:"result,omitempty"`
	// TrashCheck is the trash checked against the sessions: the trashed
	// blobs a session names, put back before the moves (named since their
	// run) and after them (named during this one).
	TrashCheck *gc.TrashCheck `json:"trash_check,omitempty"`
	// PutBack counts the sources this run moved and put back because the
	// sessions could not all be read again after the moves.
	PutBack int64 `json:"put_back,omitempty"`
	// Refused says why nothing was moved.
	Refused string `json:"refused,omitempty"`
}

// UnreadableRewriteError is Run's refusal of a rewrite into references the
// runtime cannot read back (a bucket URL for a runtime that reads local
// files only).
type UnreadableRewriteError struct {
	// Sample is what a reference would become.
	Sample string
}

func (e *UnreadableRewriteError) Error() string {
	return fmt.Sprintf("the runtime cannot read the rewritten references back (a reference would become %s)", e.Sample)
}

// ErrShardedSessionStep is Run's refusal of a rewrite or a delete-source on
// one shard: the shards would rewrite the same session units at once, and a
// shard's journal knows only its own copies. The shards copy; one run on the
// whole store then rewrites and deletes (finding every copy already proven).
var ErrShardedSessionStep = errors.New("migrate: a shard only copies; rewrite and delete the sources in one run on the whole store afterwards")

// shardJournal is the journal of shard s of the migration whose journal is
// path: each shard keeps its own ("x.jsonl" → "x.shard-3-of-16.jsonl").
func shardJournal(path string, s shard.Spec) string {
	if !s.Sharded() {
		return path
	}
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.shard-%d-of-%d%s", strings.TrimSuffix(path, ext), s.K, s.N, ext)
}

// JournalMismatchError is Run's error for a journal that records another
// migration.
type JournalMismatchError struct {
	Path     string
	From, To string
}

func (e *JournalMismatchError) Error() string {
	return fmt.Sprintf("the journal %s belongs to the migration of %s to %s", e.Path, e.From, e.To)
}

// Run is a migration: copy → rewrite → check → delete-source, as one
// journaled protocol on the locked source store. Each step runs only when
// the one before it left nothing unknown (a source is only removed on a
// complete read and a proven copy). Killed at any point, the same Run again
// goes on from the journal. A dry run changes nothing; it reads an existing
// journal to know what earlier runs proved.
func Run(ctx context.Context, opts RunOptions) (*RunReport, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	dst, ok := opts.To.(store.Bucket)
	if !ok {
		return nil, errors.New("migrate: the destination is not a bucket")
	}
	if dst.Location() == opts.From.Location() {
		return nil, errors.New("migrate: the destination is the store being migrated")
	}
	if opts.Rewrite && opts.Reads != nil {
		zero := strings.Repeat("0", 64)
		if sample := opts.Template.Render(dst, zero+".png", zero); !opts.Reads(sample) {
			return nil, &UnreadableRewriteError{Sample: sample}
		}
	}
	if opts.Rewrite {
		if err := opts.Template.Reaches(dst); err != nil {
			return nil, err
		}
	}
	if opts.Resolver == nil {
		opts.Resolver = scan.NewResolver(opts.From, opts.Bases)
	}
	rep := &RunReport{Journal: opts.JournalPath, Notes: []string{}}
	if rep.Journal == "" {
		p, err := defaultJournal(opts.From, dst)
		if err != nil {
			return nil, err
		}
		rep.Journal = p
	}
	rep.Journal = shardJournal(rep.Journal, opts.Select.Shard)
	rep.Shard = opts.Select.Shard.String()
	if opts.Command == "" {
		opts.Command = "migrate"
	}

	if opts.DryRun {
		storelock.Refused(storelock.CheckShard(ctx, opts.From, opts.Select.Shard), &rep.Locked, &rep.Outcome)
		if fi, err := os.Stat(rep.Journal); err == nil && fi.Mode().IsRegular() {
			prev, err := LoadJournal(rep.Journal)
			if err != nil {
				return nil, err
			}
			opts.Journal = prev
		}
		if opts.Journal == nil && !opts.Select.Shard.Sharded() {
			// Read only: what the shards' journals prove, for the dry run to count.
			opts.Journal = &Journal{path: rep.Journal, state: newJournalState()}
		}
		return rep, runCopy(ctx, &opts, rep)
	}

	j, err := openJournal(rep.Journal)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	if st := j.State(); st.Runs > 0 && (!store.SameBucket(st.From, opts.From.Location()) || !store.SameBucket(st.To, dst.Location())) {
		return nil, &JournalMismatchError{Path: rep.Journal, From: st.From, To: st.To}
	}
	lock, err := storelock.AcquireShard(ctx, opts.From, opts.Command, opts.Select.Shard)
	if storelock.Refused(err, &rep.Locked, &rep.Outcome) {
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := lock.Release(ctx); err != nil {
			rep.Notes = append(rep.Notes, err.Error())
			rep.Outcome.Worsen(outcome.Incomplete)
		}
	}()
	if err := j.Started(opts.From.Location(), dst.Location()); err != nil {
		return nil, err
	}
	// Before the first copy: a copy this migration proves, uploaded or
	// found there, is one whose bucket says another store may share it.
	if err := claim(ctx, dst, j); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	opts.Journal = j
	if err := runCopy(ctx, &opts, rep); err != nil {
		return rep, err
	}
	if err := j.Broken(); err != nil {
		// A rewrite and a delete must each be recorded before they happen.
		rep.Notes = append(rep.Notes, err.Error()+"; nothing was rewritten or deleted (run again once the journal can be written)")
		rep.Outcome.Worsen(outcome.Incomplete)
		return rep, nil
	}
	stop := func() bool { return ctx.Err() != nil || rep.Outcome == outcome.Interrupted }
	proven := j.State().Copied
	if opts.Rewrite && !stop() {
		replacer := &Replacer{Resolver: opts.Resolver, Target: opts.Template.Target(proven, dst)}
		rr, err := rewriteSessions(ctx, RewriteOptions{Sources: opts.Rewriters, Replacer: replacer, Journal: j, MaxListed: opts.MaxListed, MinIdle: opts.MinIdle})
		rep.Rewrite = rr
		if err != nil {
			rep.Notes = append(rep.Notes, err.Error())
			rep.Outcome.Worsen(outcome.Incomplete)
		}
		switch {
		case rr.Interrupted:
			rep.Outcome.Worsen(outcome.Interrupted)
		case rr.Problems > 0:
			rep.Outcome.Worsen(outcome.Incomplete)
		case rr.Kept > 0 || rr.Busy > 0:
			rep.Outcome.Worsen(outcome.Found)
		}
	}
	if (opts.Rewrite || opts.DeleteSource) && !stop() {
		migrated := func(key string) bool { _, ok := proven.Get(key); return ok }
		res := opts.Resolver
		var ck *CheckReport
		var ret *retain.Retention
		var marks *gc.TrashMarks
		checkStart := time.Now()
		srcDir := ""
		if l, ok := opts.From.(store.Local); ok {
			srcDir = l.Dir()
		}
		copiedTo := opts.Template.CopyPrefixes(dst, srcDir)
		var rb *readBack
		if opts.ReadBack != nil {
			rb = newReadBack(*opts.ReadBack, dst, proven, copiedTo)
		}
		if opts.DeleteSource {
			// One read of the sessions: the precise check and the retention
			// model that gc uses.
			mark := retain.MarkOptions{Jobs: opts.Jobs, CopiedTo: copiedTo, Companion: opts.Companion}
			// The same read checks the trash: a trashed blob that a session
			// began to name comes back before any source is removed.
			if marks, err = trashMarks(ctx, lock, &opts); err != nil {
				return rep, err
			}
			mark.Also = marks.Mark
			ck, ret, err = checkRetained(ctx, opts.Sessions, opts.From, res, migrated, opts.MaxListed, mark, rb)
		} else {
			ck, err = check(ctx, opts.Sessions, opts.From, res, migrated, opts.MaxListed, rb)
		}
		if err != nil {
			return rep, err
		}
		rep.Check = ck
		if !ck.Complete {
			rep.Outcome.Worsen(outcome.Incomplete)
		}
		if (opts.Rewrite && ck.StillLocal > 0) || ck.Unresolved > 0 {
			rep.Outcome.Worsen(outcome.Found)
		}
		if opts.DeleteSource {
			rep.Delete = deleteSources(ctx, lock, &opts, dst, ck, ret, rep.Outcome, copiedTo, marks, checkStart)
			if rep.Delete.PutBack > 0 {
				rep.Outcome.Worsen(outcome.Incomplete)
			}
			if rep.Delete.Result != nil && len(rep.Delete.Result.Failed) > 0 {
				rep.Outcome.Worsen(outcome.Incomplete)
			}
			if rep.Delete.Refused != "" && rep.Delete.Result != nil {
				rep.Outcome.Worsen(outcome.Incomplete) // the trash failed midway
			}
			if len(rep.Delete.CopyGone) > 0 {
				rep.Outcome.Worsen(outcome.Found)
			}
		}
	}
	if ctx.Err() != nil {
		rep.Outcome.Worsen(outcome.Interrupted)
	}
	return rep, nil
}

// runCopy is the copy step, with the dry run's estimate.
func runCopy(ctx context.Context, opts *RunOptions, rep *RunReport) error {
	// One reference time for the progress total and the copy, so that both
	// select the same blobs.
	opts.Now = time.Now()
	if !opts.Select.Shard.Sharded() {
		// After a split: the shards' proven copies, so that this run does
		// not ask the destination about each of their blobs again.
		imported, err := takeShardProofs(opts.Journal, rep.Journal, opts.From.Location(), opts.To.(store.Bucket))
		if err != nil {
			return err
		}
		rep.Imported = imported
	}
	var bar RunProgress
	if opts.CopyProgress != nil {
		// A listing of its own, only to give the bar a total. Should it fail,
		// copyBlobs's listing reports why.
		total, err := selectedBytes(ctx, opts.Options)
		if err != nil {
			total = -1
		}
		bar = opts.CopyProgress(total)
		opts.Progress = bar
	}
	cr, err := copyBlobs(ctx, opts.Options)
	if bar != nil {
		bar.Finish()
	}
	rep.Copy = cr
	if err != nil {
		if cr == nil {
			return err
		}
		rep.Notes = append(rep.Notes, err.Error())
		rep.Outcome.Worsen(outcome.Incomplete)
	}
	rep.Outcome.Worsen(cr.Outcome())
	if opts.DryRun {
		rep.Estimate = estimateFor(cr, opts.Journal)
	}
	return nil
}

// Outcome is what the copy came to on its own.
func (r *Report) Outcome() outcome.Outcome {
	switch {
	case r.Interrupted:
		return outcome.Interrupted
	case r.Failed > 0:
		return outcome.Incomplete
	case r.Corrupt > 0 || r.Conflicts > 0:
		return outcome.Found
	}
	return outcome.OK
}

func estimateFor(r *Report, j *Journal) *Estimate {
	e := &Estimate{Bytes: r.CopiedBytes}
	if j != nil {
		if rate := j.State().Rate(); rate > 0 {
			e.Rate, e.Basis = rate, "the upload rate of the earlier run in the journal"
		}
	}
	if e.Rate == 0 && r.BytesRead > 0 && r.Seconds > 0 {
		e.Rate, e.Basis = float64(r.BytesRead)/r.Seconds, "the rate this dry run read the source at (the network may be slower)"
	}
	if e.Rate > 0 {
		e.Seconds = float64(e.Bytes) / e.Rate
	} else {
		e.Basis = "no rate measured yet: the first run measures it"
	}
	return e
}

// deleteSources moves the proven sources that the retention model lets go
// and that no session points at into the trash. It refuses when anything
// before it was incomplete: a source is only removed on complete knowledge.
func deleteSources(ctx context.Context, lock *storelock.Lock, opts *RunOptions, dst store.Store, ck *CheckReport, ret *retain.Retention, so outcome.Outcome, copiedTo []string, marks *gc.TrashMarks, checkStart time.Time) *DeleteReport {
	d := &DeleteReport{CopyGone: []Problem{}, MinAge: opts.MinAge.String()}
	switch {
	case !ck.Complete || !ret.Complete:
		d.Refused = errIncompleteRead.Error() + "; nothing was deleted"
		return d
	case len(ret.Nested) > 0:
		d.Refused = (&gc.NestedStoreError{Store: ret.Store, Nested: ret.Nested}).Error() + "; nothing was deleted"
		return d
	case so == outcome.Incomplete || so == outcome.Interrupted:
		d.Refused = "an earlier step was incomplete; nothing was deleted (run again)"
		return d
	case ck.UnresolvedUnknown > 0:
		d.Refused = fmt.Sprintf("%d references to copies do not lead to a proven copy, and which source each stands for is unknown; nothing was deleted", ck.UnresolvedUnknown)
		return d
	}
	tl := lock
	if opts.TrashDir != "" {
		var err error
		if tl, err = trash.OpenDir(lock, opts.TrashDir); err != nil {
			d.Refused = err.Error()
			return d
		}
	}
	// The read was complete: its marks on the trash are too.
	c, err := marks.RestoreNamed(ctx, tl)
	d.TrashCheck = c
	if err != nil {
		d.Refused = err.Error()
		return d
	}
	sel, err := selectDeletable(ctx, opts.Journal, dst, ck, ret, ret.Started.Add(-opts.MinAge), opts.Jobs)
	if sel != nil {
		d.Kept, d.KeptRetained, d.KeptYoung, d.KeptTemporary, d.KeptUnlisted = sel.KeptReferenced, sel.KeptRetained, sel.KeptYoung, sel.KeptTemporary, sel.KeptUnlisted
		d.CopyGone = append(d.CopyGone, sel.CopyGone...)
	}
	if err != nil {
		d.Refused = err.Error()
		return d
	}
	d.Candidates = int64(len(sel.Candidates))
	if len(sel.Candidates) == 0 {
		return d
	}
	var bar RunProgress
	if opts.DeleteProgress != nil {
		bar = opts.DeleteProgress(int64(len(sel.Candidates)))
	}
	// The run is journaled before its first move, so that a rollback after
	// a kill in the middle of the moves finds it (and the count after them).
	// The run's record names the copies, so that a later check of the trash
	// against the sessions (gc, gc purge) reads text naming a copy as gc's
	// retention read it here: not as naming the source.
	to := trash.Options{
		Started:  func(run string) error { return opts.Journal.Trashed(run, 0, opts.TrashDir) },
		Command:  "migrate",
		CopiedTo: copiedTo,
	}
	if bar != nil {
		to.Progress = bar
	}
	res, err := trash.Move(ctx, tl, sel.Candidates, to)
	if bar != nil {
		bar.Finish()
	}
	d.Result = res
	if err := trash.BesidesInterruption(err, ctx.Err()); err != nil {
		d.Refused = err.Error()
	}
	if res != nil && res.Run != "" && res.Trashed > 0 {
		if err := opts.Journal.Trashed(res.Run, res.Trashed, opts.TrashDir); err != nil {
			d.Refused = err.Error()
		}
	}
	if res != nil && res.Run != "" && res.Trashed > 0 && ctx.Err() == nil {
		recheckTrash(ctx, tl, opts, d, checkStart.Add(-gc.RereadMargin))
	}
	return d
}

// trashMarks is the trash of the source store (or of --trash-dir), ready to
// be marked by the check's read of the sessions; nil when the trash folder
// is not there yet.
func trashMarks(ctx context.Context, lock *storelock.Lock, opts *RunOptions) (*gc.TrashMarks, error) {
	st := lock.Store()
	if opts.TrashDir != "" {
		tl, err := trash.OpenDir(lock, opts.TrashDir)
		if err != nil {
			return nil, nil // refused with the reason when sources are deleted
		}
		st = tl.Store()
	}
	return gc.LoadTrashMarks(ctx, st, shard.Spec{}, opts.Companion)
}

// recheckTrash reads the sessions again after the sources were moved and
// puts back every trashed blob a session saved meanwhile names; should the
// sessions not all be read, every source this run moved goes back.
func recheckTrash(ctx context.Context, tl *storelock.Lock, opts *RunOptions, d *DeleteReport, since time.Time) {
	res := d.Result
	c, err := gc.CheckTrash(ctx, tl, gc.TrashCheckOptions{Sessions: opts.Sessions, Jobs: opts.Jobs, Companion: opts.Companion, Run: res.Run, ChangedSince: since})
	if c != nil {
		if d.TrashCheck == nil {
			d.TrashCheck = c
		} else {
			d.TrashCheck.Merge(c)
		}
		for _, r := range c.Restored {
			if r.Run == res.Run {
				res.Trashed--
				res.Bytes -= r.Size
			}
		}
	}
	if err == nil && !c.Complete {
		err = fmt.Errorf("%w: %s", gc.ErrTrashCheckIncomplete, strings.Join(c.Problems, "; "))
	}
	if err == nil {
		return
	}
	back, rerr := trash.Restore(context.WithoutCancel(ctx), tl, res.Run)
	if back != nil {
		d.PutBack = back.Restored
		res.Trashed -= back.Restored
		res.Bytes -= back.Bytes
	}
	d.Refused = err.Error() + "; every source this run moved was put back"
	if rerr != nil {
		d.Refused += fmt.Sprintf(" (except: %v)", rerr)
	}
}
