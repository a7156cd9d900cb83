package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
)

// migrateGCPercent is the collector's GOGC during migrate, unless GOGC is set.
const migrateGCPercent = 200

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
			&cli.StringFlag{Name: "rewrite-template", Usage: "the text a rewritten reference becomes: {url} (default), {scheme}, {bucket}, {prefix}, {key}, {name}, {sha256}; with --layout forge also {files_dir}", EnvVars: envVar("rewrite-template")},
			&cli.BoolFlag{Name: "runtime-reads-urls", Usage: "with --layout and --rewrite: the runtime reads bucket URLs back (forge and coffer as released read only local files, so a rewrite must render a local path they read)", EnvVars: envVar("runtime-reads-urls")},
			&cli.BoolFlag{Name: "delete-source", Usage: "move sources whose copy is proven and that no session points at into the gc trash"},
			&cli.StringFlag{Name: "min-age", Usage: "with --delete-source: never remove a source modified more recently than this, as gc (default 24h; 0 to drop the fence once every agent is stopped)", EnvVars: envVar("min-age")},
			trashDirFlag("with --delete-source: "),
			&cli.StringFlag{Name: "journal", Usage: "the journal file (default: .mediactl/migrate/<destination>.jsonl inside a local store)", EnvVars: envVar("journal")},
			&cli.IntFlag{Name: "max-listed", Value: 10000, Usage: "list at most this many problems of each kind (counts stay exact)", EnvVars: envVar("max-listed")},
		),
		Action:      runMigrate,
		Subcommands: []*cli.Command{rollbackCommand()},
	}
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
	opts, err := migrateOptions(c)
	if err != nil {
		return err
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
	opts.From = t.stores[0]
	if (opts.Rewrite || opts.DeleteSource) && len(t.sources) == 0 {
		return usageErr("add --sessions SOURCE (or --layout)", "--rewrite and --delete-source need the sessions, to know which references to rewrite and which blobs are still in use")
	}
	opts.Sessions, opts.Bases, opts.Resolver, opts.Companion = t.sources, t.bases, t.resolver(opts.From), t.companion(opts.From)
	if err := rewriteTarget(c, g, t, &opts); err != nil {
		return err
	}
	if opts.TrashDir != "" {
		// Checked (and made) before anything is copied.
		if _, err := trash.DirStore(opts.From, opts.TrashDir); err != nil {
			return trashDirError("--trash-dir", err)
		}
	}
	if opts.Rewrite && !opts.DryRun {
		if opts.Rewriters, err = openRewriters(c, t.sessionSpecs); err != nil {
			return err
		}
		defer closeRewriters(opts.Rewriters)
	}
	to := c.String("to")
	dst, err := store.Open(c.Context, to)
	if err != nil {
		return fmt.Errorf("--to %s: %w", store.Redact(to), err)
	}
	defer dst.Close()
	if _, ok := dst.(store.Bucket); !ok {
		return usageErr("give a bucket URL such as s3://BUCKET?region=…; to copy into a local folder use cp or rsync", "--to %s is not a bucket", to)
	}
	if dst.Location() == opts.From.Location() {
		return usageErr("give another bucket or prefix", "--to is the store being migrated")
	}
	opts.To = dst
	if os.Getenv("GOMEMLIMIT") == "" {
		// The S3 transfer manager allocates fresh part buffers for every large
		// blob, so without a limit the heap of a run of large blobs grows well
		// past what is in use at once. A soft limit a little above the buffers
		// in flight keeps it near them.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(migrate.BufferBytes(opts.Options) + 64<<20))
	}
	if progressWanted(g) {
		opts.CopyProgress = func(total int64) migrate.RunProgress { return newProgress(g, "copying", total) }
		opts.DeleteProgress = func(total int64) migrate.RunProgress {
			return newProgress(g, "moving sources to the trash", total)
		}
	}
	rep, err := migrate.Run(c.Context, opts)
	if err != nil {
		return migrateError(err)
	}
	if cr := rep.Copy; cr != nil {
		g.log.Info("copy finished", "from", cr.From, "to", cr.To, "copied", cr.Copied, "existing", cr.Existing, "resumed", cr.Resumed, "failed", cr.Failed, "seconds", cr.Seconds)
	}
	return renderMigrate(g, rep)
}

// migrateOptions reads migrate's flags.
func migrateOptions(c *cli.Context) (migrate.RunOptions, error) {
	var err error
	o := migrate.RunOptions{
		Options: migrate.Options{
			Jobs:           c.Int("jobs"),
			Overwrite:      c.Bool("overwrite"),
			VerifyDownload: c.Bool("verify-download"),
			DryRun:         c.Bool("dry-run"),
			MaxListed:      c.Int("max-listed"),
			Select:         migrate.Selection{Include: c.StringSlice("include")},
		},
		JournalPath:  c.String("journal"),
		Rewrite:      c.Bool("rewrite"),
		DeleteSource: c.Bool("delete-source"),
		MinAge:       gc.DefaultMinAge,
		Command:      "mediactl migrate",
	}
	to := c.String("to")
	switch {
	case to == "":
		return o, usageErr("add --to 's3://BUCKET?region=…' (or gs://, azblob://)", "migrate needs a destination")
	case !strings.Contains(to, "://"):
		return o, usageErr("give a bucket URL such as s3://BUCKET?region=…; to copy into a local folder use cp or rsync", "--to %s is not a bucket", to)
	case o.Jobs <= 0:
		return o, usageErr("give --jobs 1 or more", "bad --jobs %d", o.Jobs)
	}
	if err := o.Select.Check(); err != nil {
		return o, migrateError(err)
	}
	if s := c.String("older-than"); s != "" {
		if o.Select.OlderThan, err = gc.ParseAge(s); err != nil || o.Select.OlderThan <= 0 {
			return o, usageErr("write a duration such as 30d, 2w or 36h", "bad --older-than %q", s)
		}
	}
	if s := c.String("bwlimit"); s != "" {
		n, err := humanize.ParseBytes(s)
		if err != nil || n == 0 {
			return o, usageErr("write a size such as 50MiB or 10MB", "bad --bwlimit %q", s)
		}
		o.BandwidthLimit = int64(n)
	}
	if s := c.String("part-size"); s != "" {
		n, err := humanize.ParseBytes(s)
		if err != nil || n < 5<<20 || n > 5<<30 {
			return o, usageErr("write a size between 5MiB and 5GiB, such as 16MiB", "bad --part-size %q", s)
		}
		o.PartSize = int(n)
	}
	if c.String("rewrite-template") != "" && !o.Rewrite {
		return o, usageErr("add --rewrite", "--rewrite-template without --rewrite")
	}
	if c.Bool("runtime-reads-urls") && !o.Rewrite {
		return o, usageErr("add --rewrite, or drop --runtime-reads-urls", "--runtime-reads-urls only makes sense with --rewrite")
	}
	if o.MinIdle, err = gc.ParseAge(c.String("rewrite-min-idle")); err != nil || o.MinIdle < 0 {
		return o, usageErr("write a duration such as 1m, 30s or 0", "bad --rewrite-min-idle %q", c.String("rewrite-min-idle"))
	}
	if c.IsSet("min-age") {
		if !o.DeleteSource {
			return o, usageErr("add --delete-source, or drop --min-age", "--min-age only makes sense with --delete-source")
		}
		if o.MinAge, err = gc.ParseAge(c.String("min-age")); err != nil || o.MinAge < 0 {
			return o, usageErr("write a duration such as 24h, 36h, 2d or 0", "bad --min-age %q", c.String("min-age"))
		}
	}
	if dir := c.String("trash-dir"); dir != "" {
		if !o.DeleteSource {
			return o, usageErr("add --delete-source, or drop --trash-dir", "--trash-dir only makes sense with --delete-source")
		}
		o.TrashDir = absOr(dir)
	}
	return o, nil
}

// rewriteTarget reads --rewrite-template (with the layout's variables) and
// states what the layout's runtime reads back on replay.
func rewriteTarget(c *cli.Context, g *global, t *targets, o *migrate.RunOptions) error {
	var vars map[string]string
	if t.layout != nil {
		vars = t.layout.Vars
	}
	s := c.String("rewrite-template")
	var te *migrate.TemplateError
	var err error
	if o.Template, err = migrate.ParseTemplate(s, vars); errors.As(err, &te) {
		if te.Unknown != "" {
			return usageErr("use {url}, {scheme}, {bucket}, {prefix}, {key}, {name} or {sha256}"+varList(vars), "unknown placeholder %s in --rewrite-template", te.Unknown)
		}
		return usageErr("include {url}, {key}, {name} or {sha256}", "--rewrite-template %q would give every blob the same reference", s)
	}
	switch {
	case t.layout == nil || c.Bool("runtime-reads-urls"):
	case o.Rewrite:
		o.Reads = t.layout.ReadsPath
	default:
		g.note("a copy only: the %s sessions keep pointing at the local files; --rewrite points them at the copies", t.layout.Name)
	}
	return nil
}

// varList is ", {v}, …" for the variables a template may use.
func varList(vars map[string]string) string {
	s := ""
	for v := range vars {
		s += ", {" + v + "}"
	}
	return s
}

// migrateError words Run's errors for the command line.
func migrateError(err error) error {
	var jm *migrate.JournalMismatchError
	var pe *migrate.PatternError
	var ur *migrate.UnreadableRewriteError
	switch {
	case errors.As(err, &ur):
		return usageErr("mount the bucket on every pod inside the runtime's files and give --rewrite-template '{files_dir}/remote/{key}' (forge) or '/mnt/media/{key}' (coffer); or --runtime-reads-urls if this runtime reads bucket URLs; or drop --rewrite to keep a proven copy only",
			"%v: the layout's runtime reads its media only as local files", err)
	case errors.As(err, &pe):
		return usageErr("write a glob such as '*.png' or 'u/*/uploads/*'", "bad --include %q: %v", pe.Pattern, pe.Err)
	case errors.As(err, &jm):
		return usageErr("give each migration its own --journal", "%v", err)
	case errors.Is(err, migrate.ErrNoJournalPlace):
		return usageErr("add --journal FILE (a local file that survives the run)", "%v", err)
	}
	return err
}

// openRewriters opens a rewriter for each session spec. On a failure it closes
// the ones it opened, so the caller has something to close only on success.
func openRewriters(c *cli.Context, specs []string) ([]sessions.Rewriter, error) {
	var rws []sessions.Rewriter
	for _, spec := range specs {
		rw, err := sessions.OpenRewriter(c.Context, spec, sessions.Options{Query: c.String("sessions-query")})
		if err != nil {
			closeRewriters(rws)
			return nil, fmt.Errorf("--sessions %s: %w", store.Redact(spec), err)
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
