package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/store"
)

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
		MinAge:       retain.DefaultMinAge,
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
	if o.Select.Shard, err = shardOf(c); err != nil {
		return o, err
	}
	if o.Select.Shard.Sharded() && (o.Rewrite || o.DeleteSource) {
		return o, usageErr("let the shards copy (--shard without --rewrite and --delete-source), then run --rewrite/--delete-source once without --shard: it takes the shards' proven copies over from their journals and uploads nothing again",
			"--shard %s with --rewrite or --delete-source: a shard only copies", o.Select.Shard)
	}
	// One age for the whole run: a blob young enough that its session may
	// not be saved yet is neither copied nor removed, so a delete-source run
	// never copies what it would then have to keep.
	if !o.DeleteSource {
		o.MinAge = 0
	}
	if c.IsSet("min-age") {
		if o.MinAge, err = retain.ParseAge(c.String("min-age")); err != nil || o.MinAge < 0 {
			return o, usageErr("write a duration such as 24h, 36h, 2d, 30d or 0", "bad --min-age %q", c.String("min-age"))
		}
	}
	o.Select.MinAge = o.MinAge
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
	if o.MinIdle, err = retain.ParseAge(c.String("rewrite-min-idle")); err != nil || o.MinIdle < 0 {
		return o, usageErr("write a duration such as 1m, 30s or 0", "bad --rewrite-min-idle %q", c.String("rewrite-min-idle"))
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

// readBackReplayer is the reader the check after a rewrite reads the
// references to the copies with, as a replaying pod reads them: the
// destination bucket (below its prefix), and the template's mount of it.
func readBackReplayer(to string, dst store.Bucket, t migrate.Template) (*replay.Replayer, error) {
	b := replay.Bucket{URL: to, Prefixes: []string{dst.Prefix()}}
	if m, ok := t.Mount(dst); ok {
		b.Mount = m
	}
	rp, err := replay.New(replay.Config{Buckets: []replay.Bucket{b}})
	if err != nil {
		return nil, usageErr("check --to and --rewrite-template", "%v", err)
	}
	return rp, nil
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
	var ju *migrate.JournalInUseError
	var ut *migrate.UnreachableTemplateError
	switch {
	case errors.As(err, &ut) && ut.Fix != "":
		return usageErr(fmt.Sprintf("--rewrite-template '%s': the copies are below the destination's prefix, and a mount of the bucket shows them there", ut.Fix), "%v", err)
	case errors.As(err, &ut):
		return usageErr("write the template as the mount of the bucket's root followed by {prefix}{key}, or use the copy's URL ({url})", "%v", err)
	case errors.As(err, &ju):
		return &exitError{code: exitRefused, err: err, hint: "wait for that run to end (it holds the journal until it exits), or give this migration its own --journal"}
	case errors.As(err, &ur):
		return usageErr("mount the bucket on every pod inside the runtime's files and give --rewrite-template '{files_dir}/remote/{prefix}{key}' (forge) or '/mnt/media/{prefix}{key}' (coffer); or --runtime-reads-urls if this runtime reads bucket URLs; or drop --rewrite to keep a proven copy only",
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
