package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

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

With --shard K/N, N pods copy the store at once, each into a journal of its own beside
--journal's (….shard-K-of-N.jsonl); then run --rewrite/--delete-source once without
--shard: it takes the shards' proven copies over from those journals and uploads nothing.

` + exitCodesHelp,
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "to", Usage: "destination bucket URL (s3://, gs://, azblob://; prefix=… in the query to place the blobs under a key prefix)", EnvVars: envVar("to")},
			&cli.BoolFlag{Name: "dry-run", Usage: "change nothing: show what would be copied, what exists already, conflicts, and an estimate", EnvVars: envVar("dry-run")},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: migrate.DefaultJobs, Usage: "uploads at once", EnvVars: envVar("jobs")},
			&cli.StringSliceFlag{Name: "include", Usage: "only blobs whose key or name matches this glob (e.g. '*.png'); repeatable", EnvVars: envVar("include")},
			&cli.StringFlag{Name: "min-age", Usage: "only blobs last modified at least this long ago are copied, rewritten and (with --delete-source) removed; a younger one is left for a later run: 36h, 2d, 30d; 0 with --delete-source only once every agent is stopped (default: 0, 24h with --delete-source)"},
			&cli.StringFlag{Name: "bwlimit", Usage: "cap the upload rate over all jobs, in bytes per second (e.g. 50MiB)", EnvVars: envVar("bwlimit")},
			&cli.StringFlag{Name: "part-size", Usage: "multipart upload part size (e.g. 16MiB; default: the SDK's)", EnvVars: envVar("part-size")},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace objects that hold other content under the same key (conflicts)"},
			&cli.BoolFlag{Name: "verify-download", Usage: "read every copy back and hash it (slower; the default proof reads attributes only)", EnvVars: envVar("verify-download")},
			&cli.BoolFlag{Name: "rewrite", Usage: "rewrite every session reference to a proven copy into the copy's URL", EnvVars: envVar("rewrite")},
			&cli.StringFlag{Name: "rewrite-min-idle", Value: "1m", Usage: "leave session files modified more recently than this alone (the agent may be writing them); a later run rewrites them", EnvVars: envVar("rewrite-min-idle")},
			&cli.StringFlag{Name: "rewrite-template", Usage: "the text a rewritten reference becomes: {url} (default), {scheme}, {bucket}, {prefix}, {key}, {name}, {sha256}; with --layout forge also {files_dir}", EnvVars: envVar("rewrite-template")},
			&cli.BoolFlag{Name: "runtime-reads-urls", Usage: "with --layout and --rewrite: the runtime reads bucket URLs back (forge and coffer as released read only local files, so a rewrite must render a local path they read)", EnvVars: envVar("runtime-reads-urls")},
			&cli.BoolFlag{Name: "delete-source", Usage: "move sources whose copy is proven and that no session points at into the gc trash"},
			trashDirFlag("with --delete-source: "),
			&cli.StringFlag{Name: "journal", Usage: "the journal file (default: .mediactl/migrate/<destination>.jsonl inside a local store)", EnvVars: envVar("journal")},
			&cli.IntFlag{Name: "max-listed", Value: 10000, Usage: "list at most this many problems of each kind (counts stay exact)", EnvVars: envVar("max-listed")},
			shardFlag(),
			metricsFileFlag(),
			metricsLabelFlag(),
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
	if err := checkMetricsLabels(c, 1, true); err != nil { // one store is migrated
		return err
	}
	if (opts.Rewrite || opts.DeleteSource) && len(t.sources) == 0 {
		return usageErr("add --sessions SOURCE (or --layout)", "--rewrite and --delete-source need the sessions, to know which references to rewrite and which blobs are still in use")
	}
	opts.Sessions, opts.Bases, opts.Resolver, opts.Companion = t.sources, t.bases, t.resolver(opts.From), t.companion(opts.From)
	if err := rewriteTarget(c, g, t, &opts); err != nil {
		return err
	}
	if opts.TrashDir != "" {
		// Checked (and, for a run that deletes, made) before anything is
		// copied.
		use := trash.MoveInto
		if opts.DryRun {
			use = trash.Plan
		}
		ts, err := trash.AtDir(opts.From, opts.TrashDir, use)
		if err != nil {
			return trashDirError("--trash-dir", err)
		}
		if ts != opts.From {
			ts.Close() // the run opens the folder again under the lock
		}
	}
	if opts.Rewrite && !opts.DryRun {
		if opts.Rewriters, err = t.openRewriters(c); err != nil {
			return err
		}
		defer closeRewriters(opts.Rewriters)
	}
	to := c.String("to")
	dst, err := store.Open(c.Context, to)
	if err != nil {
		return accessErr("--to", fmt.Errorf("--to %s: %w", store.Redact(to), store.Classify(store.Redact(to), err)))
	}
	defer dst.Close()
	if err := store.Probe(c.Context, dst); err != nil {
		var ae *store.AccessError
		if errors.As(err, &ae) {
			return accessErr("--to", fmt.Errorf("--to %s: %w", store.Redact(to), err))
		}
	}
	if _, ok := dst.(store.Bucket); !ok {
		return usageErr("give a bucket URL such as s3://BUCKET?region=…; to copy into a local folder use cp or rsync", "--to %s is not a bucket", to)
	}
	if dst.Location() == opts.From.Location() {
		return usageErr("give another bucket or prefix", "--to is the store being migrated")
	}
	opts.To = dst
	if (opts.Rewrite || opts.DeleteSource) && !opts.DryRun {
		rp, err := readBackReplayer(to, dst.(store.Bucket), opts.Template)
		if err != nil {
			return err
		}
		defer rp.Close()
		opts.ReadBack = &migrate.ReadBack{Replayer: rp, Reads: opts.Reads, Full: opts.VerifyDownload, Jobs: opts.Jobs}
	}
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
	start := time.Now()
	rep, err := migrate.Run(c.Context, opts)
	if err != nil {
		return migrateError(err)
	}
	if cr := rep.Copy; cr != nil {
		g.log.Info("copy finished", "from", cr.From, "to", cr.To, "copied", cr.Copied, "existing", cr.Existing, "resumed", cr.Resumed, "failed", cr.Failed, "seconds", cr.Seconds)
	}
	return renderMigrate(c, g, rep, opts, time.Since(start), rollbackLine(t, rep.Journal))
}

// rollbackLine is the command that undoes this migration, to be run as
// printed: rollback needs the sessions the run rewrote, named as the run
// named them, with the run's exclusions (credentials in a URL are redacted:
// give them through the environment, e.g. PGPASSWORD).
func rollbackLine(t *targets, journal string) string {
	args := []string{"mediactl", "migrate", "rollback"}
	var fromLayout []string
	if l := t.layout; l != nil {
		args = append(args, "--layout", l.Name, "--root", l.Root)
		fromLayout = l.Sessions
	}
	for _, s := range t.sessionSpecs {
		if !slices.Contains(fromLayout, s) {
			args = append(args, "--sessions", store.Redact(s))
		}
	}
	// The rollback restores what the run could rewrite: the same sessions
	// less what the run excluded from them.
	for _, x := range t.opened.SessionOptions.Exclude {
		args = append(args, "--sessions-exclude", x)
	}
	args = append(args, "--journal", absOr(journal))
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but the
// characters of plain paths and flags.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// closeRewriters closes rewriters in the reverse order of their opening.
func closeRewriters(rws []sessions.Rewriter) {
	for i := len(rws) - 1; i >= 0; i-- {
		rws[i].Close()
	}
}
