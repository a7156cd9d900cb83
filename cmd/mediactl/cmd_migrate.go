package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// migrateGCPercent is the collector's GOGC during migrate, unless GOGC is set.
const migrateGCPercent = 200

// migrateSchema versions the JSON document of `migrate -o json`; see docs/migrate.md.
const migrateSchema = "mediactl.migrate/v1"

func migrateCommand() *cli.Command {
	return &cli.Command{
		Name:      "migrate",
		Usage:     "copy blobs to a bucket, prove every copy, rewrite the sessions' references (and undo it)",
		UsageText: "mediactl migrate [--layout forge|coffer --root DIR | --store DIR --sessions SOURCE...] --to URL [--dry-run] [--rewrite] [--delete-source]",
		Description: `migrate copies the blobs of one store (usually a host's local folder) to a bucket that every
pod can read. Each upload carries the blob's Content-Type and its sha256 as object metadata;
a content-addressed blob whose bytes do not match its name is not uploaded. Each copy is
proven by reading its attributes back (size, sha256 metadata, MD5 where the backend has one;
--verify-download re-reads the bytes) before it is journaled. With --rewrite, every session
reference to a proven copy is rewritten to the copy's URL; with --delete-source, the sources
that no session points at any more are moved to the gc trash (see 'mediactl gc restore').

   mediactl migrate --layout forge --root /srv/agent \
       --to 's3://agent-media?region=eu-west-1&prefix=inbound/' --dry-run
   mediactl migrate --layout forge --root /srv/agent --to 's3://…' --jobs 32 --rewrite
   mediactl migrate … --rewrite --delete-source          # only after copies are proven
   mediactl migrate rollback --layout forge --root /srv/agent --journal FILE

Every step goes to a journal (--journal; by default .mediactl/migrate/ inside the store):
killed at any point, run the same command again and it continues where it stopped. An object
that already exists with the same size and sha256 is skipped; one with other content is a
conflict, never overwritten without --overwrite. Session files modified within
--rewrite-min-idle (1m) may be in the agent's hands and are left alone as busy: stop the
agent (and pass --rewrite-min-idle 0), or run again later.

` + exitCodesHelp,
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "to", Usage: "destination bucket URL (s3://, gs://, azblob://; prefix=… in the query to place the blobs under a key prefix)", EnvVars: envVar("to")},
			&cli.BoolFlag{Name: "dry-run", Usage: "change nothing: show what would be copied, what exists already, conflicts, and an estimate", EnvVars: envVar("dry-run")},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: migrate.DefaultJobs, Usage: "uploads at once", EnvVars: envVar("jobs")},
			&cli.StringSliceFlag{Name: "include", Usage: "only blobs whose key or name matches this glob (e.g. '*.png'); repeatable", EnvVars: envVar("include")},
			&cli.StringFlag{Name: "older-than", Usage: "only blobs last modified longer ago than this (e.g. 30d)", EnvVars: envVar("older-than")},
			&cli.StringFlag{Name: "bwlimit", Usage: "cap the upload rate over all jobs, in bytes per second (e.g. 50MiB)", EnvVars: envVar("bwlimit")},
			&cli.StringFlag{Name: "part-size", Usage: "multipart upload part size (e.g. 16MiB; default: the SDK's)", EnvVars: envVar("part-size")},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace objects that hold other content under the same key (conflicts)"},
			&cli.BoolFlag{Name: "verify-download", Usage: "read every copy back and hash it (slower; the default proof reads attributes only)", EnvVars: envVar("verify-download")},
			&cli.BoolFlag{Name: "rewrite", Usage: "rewrite every session reference to a proven copy into the copy's URL", EnvVars: envVar("rewrite")},
			&cli.StringFlag{Name: "rewrite-min-idle", Value: "1m", Usage: "leave session files modified more recently than this alone (the agent may be writing them); a later run rewrites them", EnvVars: envVar("rewrite-min-idle")},
			&cli.StringFlag{Name: "rewrite-template", Usage: "the text a rewritten reference becomes: {url} (default), {scheme}, {bucket}, {prefix}, {key}, {name}, {sha256}", EnvVars: envVar("rewrite-template")},
			&cli.BoolFlag{Name: "delete-source", Usage: "move sources whose copy is proven and that no session points at into the gc trash"},
			&cli.StringFlag{Name: "min-age", Usage: "with --delete-source: never remove a source modified more recently than this, as gc (default 24h; 0 to drop the fence once every agent is stopped)", EnvVars: envVar("min-age")},
			trashDirFlag("with --delete-source: "),
			&cli.StringFlag{Name: "journal", Usage: "the journal file (default: .mediactl/migrate/<destination>.jsonl inside a local store)", EnvVars: envVar("journal")},
			&cli.IntFlag{Name: "max-listed", Value: 10000, Usage: "list at most this many problems of each kind (counts stay exact)", EnvVars: envVar("max-listed")},
		),
		Action: runMigrate,
		Subcommands: []*cli.Command{{
			Name:  "rollback",
			Usage: "restore every session reference a migration rewrote, byte for byte, and put deleted sources back",
			Description: `rollback reads the migration's journal and restores each rewritten session unit: exactly
as it was when nothing changed it since, reference by reference when the agent wrote to it
since. Sources moved to the trash by --delete-source are put back. The copies in the bucket
are left in place.

   mediactl migrate rollback --layout forge --root /srv/agent --journal FILE
   mediactl migrate rollback --sessions sqlite:coffer.db --journal FILE

` + exitCodesHelp,
			Flags: append(append(targetFlags(),
				&cli.StringFlag{Name: "journal", Usage: "the migration's journal (required)", EnvVars: envVar("journal")},
				&cli.IntFlag{Name: "max-listed", Value: 10000, Usage: "list at most this many problems (counts stay exact)", EnvVars: envVar("max-listed")},
			), commonFlags()...),
			Action: runMigrateRollback,
		}},
	}
}

// migrateReport is the JSON document of `migrate -o json`.
type migrateReport struct {
	Schema   string                 `json:"schema"`
	Version  string                 `json:"mediactl_version"`
	ExitCode int                    `json:"exit_code"`
	Journal  string                 `json:"journal"`
	Copy     *migrate.Report        `json:"copy"`
	Estimate *estimate              `json:"estimate,omitempty"`
	Rewrite  *migrate.RewriteReport `json:"rewrite,omitempty"`
	Check    *migrate.CheckReport   `json:"check,omitempty"`
	Delete   *deleteReport          `json:"delete_source,omitempty"`
	Rollback *migrate.RewriteReport `json:"rollback,omitempty"`
	Restored []*gc.RestoreResult    `json:"restored,omitempty"`
	Notes    []string               `json:"notes"`
}

type estimate struct {
	Bytes   int64   `json:"bytes"`
	Rate    float64 `json:"bytes_per_second"`
	Seconds float64 `json:"seconds"`
	Basis   string  `json:"basis"`
}

type deleteReport struct {
	Candidates int64 `json:"candidates"`
	// Kept counts sources a precise reference still points at; KeptRetained
	// the others that gc's retention rule keeps (a session names them),
	// KeptYoung those younger than MinAge, KeptUnlisted those that are no
	// longer regular blobs of the store.
	Kept         int64  `json:"kept_referenced"`
	KeptRetained int64  `json:"kept_retention_rule"`
	KeptYoung    int64  `json:"kept_young"`
	KeptUnlisted int64  `json:"kept_unlisted"`
	MinAge       string `json:"min_age"`
	// CopyGone are sources kept because their copy is no longer in the
	// destination as proven.
	CopyGone []migrate.Problem `json:"kept_copy_gone"`
	Result   *gc.Result        `json:"result,omitempty"`
	Refused  string            `json:"refused,omitempty"`
}

func runMigrate(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usageErr("the subcommand is rollback; give the store with --store", "unexpected argument %q", c.Args().First())
	}
	if os.Getenv("GOGC") == "" {
		// Copying keeps little alive (buffers, the journal's proofs) and
		// allocates per request: collecting at 50% growth, the default of the
		// reading commands, would spend CPU the uploads need.
		defer debug.SetGCPercent(debug.SetGCPercent(migrateGCPercent))
	}
	to := c.String("to")
	if to == "" {
		return usageErr("add --to 's3://BUCKET?region=…' (or gs://, azblob://)", "migrate needs a destination")
	}
	opts := migrate.Options{
		Jobs:           c.Int("jobs"),
		Overwrite:      c.Bool("overwrite"),
		VerifyDownload: c.Bool("verify-download"),
		DryRun:         c.Bool("dry-run"),
		MaxListed:      c.Int("max-listed"),
		Select:         migrate.Selection{Include: c.StringSlice("include")},
	}
	if opts.Jobs <= 0 {
		return usageErr("give --jobs 1 or more", "bad --jobs %d", opts.Jobs)
	}
	if s := c.String("older-than"); s != "" {
		if opts.Select.OlderThan, err = parseAge(s); err != nil || opts.Select.OlderThan <= 0 {
			return usageErr("write a duration such as 30d, 2w or 36h", "bad --older-than %q", s)
		}
	}
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"bwlimit", &opts.BandwidthLimit}} {
		if s := c.String(f.name); s != "" {
			n, err := humanize.ParseBytes(s)
			if err != nil || n == 0 {
				return usageErr("write a size such as 50MiB or 10MB", "bad --%s %q", f.name, s)
			}
			*f.dst = int64(n)
		}
	}
	if s := c.String("part-size"); s != "" {
		n, err := humanize.ParseBytes(s)
		if err != nil || n < 5<<20 || n > 5<<30 {
			return usageErr("write a size between 5MiB and 5GiB, such as 16MiB", "bad --part-size %q", s)
		}
		opts.PartSize = int(n)
	}
	rewrite, deleteSource := c.Bool("rewrite"), c.Bool("delete-source")
	tmpl := c.String("rewrite-template")
	if tmpl != "" && !rewrite {
		return usageErr("add --rewrite", "--rewrite-template without --rewrite")
	}
	if tmpl != "" {
		if err := checkTemplate(tmpl); err != nil {
			return err
		}
	}
	minIdle, err := parseAge(c.String("rewrite-min-idle"))
	if err != nil || minIdle < 0 {
		return usageErr("write a duration such as 1m, 30s or 0", "bad --rewrite-min-idle %q", c.String("rewrite-min-idle"))
	}
	minAge := gc.DefaultMinAge
	if c.IsSet("min-age") {
		if !deleteSource {
			return usageErr("add --delete-source, or drop --min-age", "--min-age only makes sense with --delete-source")
		}
		if minAge, err = parseAge(c.String("min-age")); err != nil || minAge < 0 {
			return usageErr("write a duration such as 24h, 36h, 2d or 0", "bad --min-age %q", c.String("min-age"))
		}
	}
	if c.String("trash-dir") != "" && !deleteSource {
		return usageErr("add --delete-source, or drop --trash-dir", "--trash-dir only makes sense with --delete-source")
	}

	t, err := openTargets(c, g)
	if err != nil {
		return err
	}
	defer t.Close()
	if len(t.stores) == 0 {
		return usageErr("add --store DIR, or --layout", "migrate needs a store to copy from")
	}
	if len(t.stores) > 1 {
		if c.IsSet("store") {
			return usageErr("run migrate once per store, each with its own --to prefix", "%d stores given; migrate copies one store at a time", len(t.stores))
		}
		for _, other := range t.stores[1:] {
			g.note("%s is not migrated in this run: run again with --store %s and a --to prefix of its own", other.Location(), other.Location())
		}
	}
	src := t.stores[0]
	if (rewrite || deleteSource) && len(t.sources) == 0 {
		return usageErr("add --sessions SOURCE (or --layout)", "--rewrite and --delete-source need the sessions, to know which references to rewrite and which blobs are still in use")
	}
	var rewriters []sessions.Rewriter
	if rewrite && !opts.DryRun {
		if rewriters, err = openRewriters(c, t.sessionSpecs); err != nil {
			return err
		}
		defer closeRewriters(rewriters)
	}

	if !strings.Contains(to, "://") {
		return usageErr("give a bucket URL such as s3://BUCKET?region=…; to copy into a local folder use cp or rsync", "--to %s is not a bucket", to)
	}
	dstStore, err := store.Open(c.Context, to)
	if err != nil {
		return fmt.Errorf("--to %s: %w", redact(to), err)
	}
	defer dstStore.Close()
	dst, ok := dstStore.(store.Bucket)
	if !ok {
		return usageErr("give a bucket URL such as s3://BUCKET?region=…; to copy into a local folder use cp or rsync", "--to %s is not a bucket", to)
	}
	if dst.Location() == src.Location() {
		return usageErr("give another bucket or prefix", "--to is the store being migrated")
	}
	opts.From, opts.To = src, dstStore
	if os.Getenv("GOMEMLIMIT") == "" {
		// The S3 transfer manager allocates fresh part buffers for every large
		// blob, so without a limit the heap of a run of large blobs grows well
		// past what is in use at once. A soft limit a little above the buffers
		// in flight keeps it near them.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(migrate.BufferBytes(opts) + 64<<20))
	}

	rep := &migrateReport{Schema: migrateSchema, Version: version(), Notes: []string{}}
	jpath := c.String("journal")
	if jpath == "" {
		local, ok := src.(store.Local)
		if !ok {
			return usageErr("add --journal FILE (a local file that survives the run)", "the store %s is not a local folder, so the journal has no default place", src.Location())
		}
		jpath = filepath.Join(local.Dir(), store.InternalDir, "migrate", journalName(dst)+".jsonl")
	}
	rep.Journal = jpath
	var j *migrate.Journal
	if !opts.DryRun {
		if j, err = migrate.OpenJournal(jpath); err != nil {
			return fmt.Errorf("--journal: %w", err)
		}
		defer j.Close()
		if st := j.State(); st.Runs > 0 && (st.From != src.Location() || st.To != dst.Location()) {
			return usageErr("give each migration its own --journal", "the journal %s belongs to the migration of %s to %s", jpath, st.From, st.To)
		}
		lock, err := storelock.Acquire(c.Context, src, "mediactl migrate")
		var le *storelock.LockedError
		if errors.As(err, &le) {
			return &exitError{code: exitRefused, err: err, hint: "if that run is gone, remove " + filepath.Join(src.Location(), store.InternalDir, storelock.Name)}
		}
		if err != nil {
			return err
		}
		defer lock.Release(context.WithoutCancel(c.Context))
		if err := j.AppendSync(migrate.Record{T: "start", Version: 1, From: src.Location(), To: dst.Location()}); err != nil {
			return err
		}
		opts.Journal = j
	} else if prev, err := readJournalIfAny(jpath); err == nil && prev != nil {
		// A dry run still knows what an earlier run proved.
		opts.Journal = prev
		defer prev.Close()
	}

	// One reference time for the bar's total and the copy, so that both
	// select the same blobs.
	opts.Now = time.Now()
	var bar *progress
	if progressWanted(g) {
		// A listing of its own, only to give the bar a total: without one the
		// bar is a spinner. Should it fail, Copy's listing reports why.
		total, err := migrate.SelectedBytes(c.Context, opts)
		if err != nil {
			total = -1
		}
		bar = newProgress(g, "copying", total)
		opts.Progress = bar
	}
	cr, err := migrate.Copy(c.Context, opts)
	bar.Finish()
	rep.Copy = cr
	code := exitOK
	if err != nil {
		if cr == nil {
			return err
		}
		rep.Notes = append(rep.Notes, err.Error())
		code = worse(code, exitIncomplete)
	}
	code = worse(code, copyCode(cr))
	g.log.Info("copy finished", "from", cr.From, "to", cr.To, "copied", cr.Copied, "existing", cr.Existing, "resumed", cr.Resumed, "failed", cr.Failed, "seconds", cr.Seconds)
	if opts.DryRun {
		rep.Estimate = estimateFor(cr, opts.Journal)
	}

	var proven map[string]migrate.Proof
	if j != nil {
		proven = j.State().Copied
	}
	migrated := func(key string) bool { _, ok := proven[key]; return ok }
	if rewrite && !opts.DryRun && code != exitInterrupted {
		replacer := &migrate.Replacer{Resolver: t.resolver(src), Target: targetFunc(proven, dst, tmpl)}
		rr, err := migrate.Rewrite(c.Context, migrate.RewriteOptions{Sources: rewriters, Replacer: replacer, Journal: j, MaxListed: c.Int("max-listed"), MinIdle: minIdle})
		rep.Rewrite = rr
		if err != nil {
			rep.Notes = append(rep.Notes, err.Error())
			code = worse(code, exitIncomplete)
		}
		if rr.Interrupted {
			code = worse(code, exitInterrupted)
		}
		if rr.Problems > 0 {
			code = worse(code, exitIncomplete)
		}
		if rr.Kept > 0 || rr.Busy > 0 {
			code = worse(code, exitFound)
		}
	}
	if (rewrite || deleteSource) && !opts.DryRun && code != exitInterrupted {
		var ck *migrate.CheckReport
		var ret *gc.Retention
		if deleteSource {
			// One read of the sessions: the precise check and the retention
			// model that gc uses.
			mark := gc.MarkOptions{Jobs: c.Int("jobs"), CopiedTo: copyPrefixes(dst, tmpl), Companion: t.companion(src)}
			ck, ret, err = migrate.CheckRetained(c.Context, t.sources, src, t.bases, migrated, c.Int("max-listed"), mark)
		} else {
			ck, err = migrate.Check(c.Context, t.sources, src, t.bases, migrated, c.Int("max-listed"))
		}
		if err != nil {
			return err
		}
		rep.Check = ck
		if !ck.Complete {
			code = worse(code, exitIncomplete)
		}
		if rewrite && ck.StillLocal > 0 {
			code = worse(code, exitFound)
		}
		if deleteSource {
			rep.Delete = deleteSources(c, g, src, dstStore, j, ck, ret, minAge, code)
			if rep.Delete.Result != nil && len(rep.Delete.Result.Failed) > 0 {
				code = worse(code, exitIncomplete)
			}
			if len(rep.Delete.CopyGone) > 0 {
				code = worse(code, exitFound)
			}
		}
	}
	if c.Context.Err() != nil {
		code = exitInterrupted
	}
	rep.ExitCode = code
	if err := printMigrate(g, rep); err != nil {
		return err
	}
	return codeOnly(code)
}

// copyCode is the exit code a copy report deserves on its own.
func copyCode(r *migrate.Report) int {
	switch {
	case r.Interrupted:
		return exitInterrupted
	case r.Failed > 0:
		return exitIncomplete
	case r.Corrupt > 0 || r.Conflicts > 0:
		return exitFound
	}
	return exitOK
}

// deleteSources moves the proven sources that gc's retention model lets go
// and that no session points at into the gc trash. It refuses when anything
// before it was incomplete: a source is only removed on complete knowledge.
func deleteSources(c *cli.Context, g *global, src, dst store.Store, j *migrate.Journal, ck *migrate.CheckReport, ret *gc.Retention, minAge time.Duration, code int) *deleteReport {
	d := &deleteReport{CopyGone: []migrate.Problem{}, MinAge: minAge.String()}
	switch {
	case !ck.Complete || !ret.Complete:
		d.Refused = "not every session or the whole store could be read, so it is unknown which sources are still in use; nothing was deleted"
		return d
	case code == exitIncomplete || code == exitInterrupted:
		d.Refused = "an earlier step was incomplete; nothing was deleted (run again)"
		return d
	}
	sel, err := migrate.SelectDeletable(c.Context, j, dst, ck, ret, ret.Started.Add(-minAge), c.Int("jobs"))
	if sel != nil {
		d.Kept, d.KeptRetained, d.KeptYoung, d.KeptUnlisted = sel.KeptReferenced, sel.KeptRetained, sel.KeptYoung, sel.KeptUnlisted
		d.CopyGone = append(d.CopyGone, sel.CopyGone...)
	}
	if err != nil {
		d.Refused = err.Error()
		return d
	}
	cands := sel.Candidates
	d.Candidates = int64(len(cands))
	if len(cands) == 0 {
		return d
	}
	st := src
	if dir := c.String("trash-dir"); dir != "" {
		wrapped, err := withTrashDir(c, []store.Store{src})
		if err != nil {
			d.Refused = err.Error()
			return d
		}
		st = wrapped[0]
	}
	bar := newProgress(g, "moving sources to the trash", int64(len(cands)))
	res, err := gc.TrashBlobs(c.Context, st, cands, gc.ExecOptions{Progress: bar})
	bar.Finish()
	d.Result = res
	if err != nil {
		d.Refused = err.Error()
	}
	if res != nil && res.Run != "" && res.Trashed > 0 {
		dir := c.String("trash-dir")
		if dir != "" {
			dir = absOr(dir)
		}
		if err := j.AppendSync(migrate.Record{T: "trashed", Run: res.Run, Count: res.Trashed, TrashDir: dir}); err != nil {
			d.Refused = err.Error()
		}
	}
	return d
}

var templateRE = regexp.MustCompile(`\{[a-z0-9]+\}`)

func checkTemplate(t string) error {
	known := map[string]bool{"{url}": true, "{scheme}": true, "{bucket}": true, "{prefix}": true, "{key}": true, "{name}": true, "{sha256}": true}
	for _, p := range templateRE.FindAllString(t, -1) {
		if !known[p] {
			return usageErr("use {url}, {scheme}, {bucket}, {prefix}, {key}, {name} or {sha256}", "unknown placeholder %s in --rewrite-template", p)
		}
	}
	if !strings.Contains(t, "{url}") && !strings.Contains(t, "{key}") && !strings.Contains(t, "{name}") && !strings.Contains(t, "{sha256}") {
		return usageErr("include {url}, {key}, {name} or {sha256}", "--rewrite-template %q would give every blob the same reference", t)
	}
	return nil
}

// targetFunc gives the new reference text of a migrated key.
func targetFunc(proven map[string]migrate.Proof, dst store.Bucket, tmpl string) func(string) (string, bool) {
	return func(key string) (string, bool) {
		p, ok := proven[key]
		if !ok {
			return "", false
		}
		url := migrate.ObjectURL(dst, key)
		if tmpl == "" {
			return url, true
		}
		r := strings.NewReplacer("{url}", url, "{scheme}", dst.Scheme(), "{bucket}", dst.Name(), "{prefix}", dst.Prefix(),
			"{key}", key, "{name}", path.Base(key), "{sha256}", p.Digest())
		return r.Replace(tmpl), true
	}
}

// copyPrefixes are the URL prefixes under which session text names a proven
// copy rather than its source: the destination's object URLs and, with a
// rewrite template, the template's text before its first key-dependent
// placeholder when that text names the destination's bucket (a looser prefix
// could match links into the source store itself).
func copyPrefixes(dst store.Bucket, tmpl string) []string {
	base := migrate.ObjectURL(dst, "")
	out := []string{base}
	if tmpl == "" {
		return out
	}
	const cut = "\x00"
	r := strings.NewReplacer("{url}", base+cut, "{scheme}", dst.Scheme(), "{bucket}", dst.Name(), "{prefix}", dst.Prefix(),
		"{key}", cut, "{name}", cut, "{sha256}", cut)
	p, _, _ := strings.Cut(r.Replace(tmpl), cut)
	if p != base && dst.Name() != "" && strings.Contains(p, dst.Name()) {
		out = append(out, p)
	}
	return out
}

// journalName derives a file name from the destination: one journal per
// destination, found again by the next run.
func journalName(dst store.Bucket) string {
	s := dst.Scheme() + "-" + dst.Name() + "-" + strings.TrimSuffix(dst.Prefix(), "/")
	return strings.Trim(regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(s, "_"), "_-")
}

// readJournalIfAny reads an existing journal without writing to it, for a dry run.
func readJournalIfAny(path string) (*migrate.Journal, error) {
	if !journalExists(path) {
		return nil, nil
	}
	return migrate.LoadJournal(path)
}

func estimateFor(r *migrate.Report, j *migrate.Journal) *estimate {
	e := &estimate{Bytes: r.CopiedBytes}
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

func printMigrate(g *global, rep *migrateReport) error {
	switch g.output {
	case "json":
		return writeJSON(g.stdout, rep)
	case "ndjson":
		return writeJSONLine(g.stdout, rep)
	}
	if g.quiet && rep.ExitCode == exitOK {
		return nil
	}
	w := g.stdout
	cr := rep.Copy
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", printable(n))
	}
	listProblems(w, "corrupt (not uploaded)", cr.CorruptList, cr.Corrupt)
	listProblems(w, "conflict", cr.ConflictList, cr.Conflicts)
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
	fmt.Fprintf(w, "; %d already there, %d proven earlier, %d conflicts, %d corrupt, %d failed, %d skipped\n",
		cr.Existing, cr.Resumed, cr.Conflicts, cr.Corrupt, cr.Failed, cr.Skipped)
	if e := rep.Estimate; e != nil {
		if e.Rate > 0 {
			fmt.Fprintf(w, "estimate: %s at %s/s (%s)\n", (time.Duration(e.Seconds * float64(time.Second))).Round(time.Second), humanize.IBytes(uint64(e.Rate)), e.Basis)
		} else {
			fmt.Fprintf(w, "estimate: %s\n", e.Basis)
		}
	}
	if rr := rep.Rewrite; rr != nil {
		fmt.Fprintf(w, "rewrote %d references in %d of %d session units; %d kept, %d busy, %d units not rewritten\n", rr.References, rr.Changed, rr.Units, rr.Kept, rr.Busy, rr.Problems)
	}
	if ck := rep.Check; ck != nil {
		if ck.StillLocal == 0 && ck.Complete {
			fmt.Fprintln(w, "check: no session points at a local copy of a migrated blob")
		} else {
			fmt.Fprintf(w, "check: %d references still point at local copies of migrated blobs\n", ck.StillLocal)
		}
	}
	if d := rep.Delete; d != nil {
		switch {
		case d.Refused != "":
			fmt.Fprintf(w, "delete-source refused: %s\n", printable(d.Refused))
		default:
			listProblems(w, "source kept", d.CopyGone, int64(len(d.CopyGone)))
			if d.Result == nil {
				fmt.Fprintf(w, "delete-source: nothing to move (%d still referenced, %d copies not in place)\n", d.Kept, len(d.CopyGone))
			} else {
				fmt.Fprintf(w, "moved %d sources (%s) to trash run %s; %d still referenced and kept, %d changed since the copy and kept; undo with: mediactl migrate rollback --journal %s\n",
					d.Result.Trashed, humanize.IBytes(uint64(d.Result.Bytes)), d.Result.Run, d.Kept, len(d.Result.Skipped), printable(rep.Journal))
			}
			if d.KeptRetained > 0 || d.KeptYoung > 0 || d.KeptUnlisted > 0 {
				fmt.Fprintf(w, "kept: %d referenced by the retention rule (as gc keeps them), %d younger than --min-age %s, %d no longer in the store\n",
					d.KeptRetained, d.KeptYoung, d.MinAge, d.KeptUnlisted)
			}
		}
	}
	fmt.Fprintf(w, "journal: %s\n", printable(rep.Journal))
	return nil
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

func runMigrateRollback(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	jpath := c.String("journal")
	if jpath == "" {
		return usageErr("add --journal FILE (the path the migration printed)", "rollback needs the migration's journal")
	}
	if !journalExists(jpath) {
		return usageErr("give the path the migration printed as 'journal:'", "no journal at %s", jpath)
	}
	j, err := migrate.OpenJournal(jpath)
	if err != nil {
		return fmt.Errorf("--journal: %w", err)
	}
	defer j.Close()
	st := j.State()
	t, err := openTargets(c, g)
	if err != nil {
		return err
	}
	defer t.Close()
	rep := &migrateReport{Schema: migrateSchema, Version: version(), Journal: jpath, Notes: []string{}, Copy: &migrate.Report{From: st.From, To: st.To}}
	code := exitOK
	if len(st.Units) > 0 {
		if len(t.sessionSpecs) == 0 {
			return usageErr("add the same --sessions (or --layout) the migration used", "the journal lists %d rewritten session units, and no session source was given", len(st.Units))
		}
		rws, err := openRewriters(c, t.sessionSpecs)
		if err != nil {
			return err
		}
		defer closeRewriters(rws)
		rr, err := migrate.Rollback(c.Context, rws, j, c.Int("max-listed"))
		rep.Rollback = rr
		if err != nil {
			rep.Notes = append(rep.Notes, err.Error())
			code = worse(code, exitIncomplete)
		}
		if rr.Problems > 0 {
			code = worse(code, exitIncomplete)
		}
	}
	if len(st.Trash) > 0 {
		src, err := store.Open(c.Context, st.From)
		if err != nil {
			return fmt.Errorf("the migrated store %s: %w", st.From, err)
		}
		defer src.Close()
		for _, tr := range st.Trash {
			run, from := tr.Run, src
			if tr.TrashDir != "" {
				if from, err = trashDirStore(src, tr.TrashDir); err != nil {
					return err
				}
			}
			res, err := gc.Restore(c.Context, from, run)
			if res != nil {
				rep.Restored = append(rep.Restored, res)
			}
			if err == nil && len(res.Kept) == 0 {
				if jerr := j.AppendSync(migrate.Record{T: "restored", Run: run}); jerr != nil {
					err = jerr
				}
			}
			if err != nil {
				rep.Notes = append(rep.Notes, fmt.Sprintf("restore trash run %s: %v (see mediactl gc restore)", run, err))
				code = worse(code, exitIncomplete)
			}
		}
	}
	if c.Context.Err() != nil {
		code = exitInterrupted
	}
	rep.ExitCode = code
	switch g.output {
	case "json":
		return errors.Join(writeJSON(g.stdout, rep), codeOnly(code))
	case "ndjson":
		return errors.Join(writeJSONLine(g.stdout, rep), codeOnly(code))
	}
	if !g.quiet || code != exitOK {
		w := g.stdout
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "note: %s\n", printable(n))
		}
		if rr := rep.Rollback; rr != nil {
			for _, n := range rr.ProblemList {
				fmt.Fprintf(w, "not restored: %s: %s\n", printable(n.Place.String()), printable(n.Reason))
			}
			fmt.Fprintf(w, "restored %d references in %d session units; %d not restored\n", rr.References, rr.Changed, rr.Problems)
		} else {
			fmt.Fprintln(w, "no session was rewritten by this migration")
		}
		for _, r := range rep.Restored {
			fmt.Fprintf(w, "put back %d sources (%s) from the trash\n", r.Restored, humanize.IBytes(uint64(r.Bytes)))
		}
		fmt.Fprintf(w, "the copies in %s are left in place\n", printable(st.To))
	}
	return codeOnly(code)
}

// openRewriters opens a rewriter for each session spec. On a failure it closes
// the ones it opened, so the caller has something to close only on success.
func openRewriters(c *cli.Context, specs []string) ([]sessions.Rewriter, error) {
	var rws []sessions.Rewriter
	for _, spec := range specs {
		rw, err := sessions.OpenRewriter(c.Context, spec, sessions.Options{Query: c.String("sessions-query")})
		if err != nil {
			closeRewriters(rws)
			return nil, fmt.Errorf("--sessions %s: %w", redact(spec), err)
		}
		rws = append(rws, rw)
	}
	return rws, nil
}

// closeRewriters closes rewriters in the reverse order of their opening.
func closeRewriters(rws []sessions.Rewriter) {
	for i := len(rws) - 1; i >= 0; i-- {
		rws[i].Close()
	}
}

// journalExists reports whether a journal file is there to read.
func journalExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// trashDirStore is the migrated store with the trash a --delete-source run kept
// in a directory of its own.
func trashDirStore(src store.Store, dir string) (store.Store, error) {
	ls, ok := src.(*store.LocalStore)
	if !ok {
		return nil, fmt.Errorf("the journal names a trash directory %s, but %s is not a local store", dir, src.Location())
	}
	td, err := store.OpenLocal(dir)
	if err != nil {
		return nil, fmt.Errorf("trash directory %s: %w", dir, err)
	}
	return gc.WithTrashDir(ls, td), nil
}
