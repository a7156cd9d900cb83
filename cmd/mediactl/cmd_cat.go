package main

import (
	"errors"
	"io"
	"os"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/layout"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/target"
)

// catSchema versions the JSON document of `cat -o json`.
const catSchema = "mediactl.cat/v1"

func catCommand() *cli.Command {
	return &cli.Command{
		Name:      "cat",
		Usage:     "print the verified bytes of one media reference, read as a replaying pod would (pkg/replay)",
		UsageText: "mediactl cat [--layout forge|coffer --root DIR] [--allow-root DIR]... [--allow-bucket URL]... [--allow-prefix P]... [--cache DIR] REF | --object BUCKET/KEY",
		Description: `cat reads one reference the way a runtime that imports pkg/replay reads it on replay:
a local path or file:// URI only below an allowed root, symbolic links never followed; a bucket
URL or {bucket, path} pair only in an allowed bucket and below an allowed key prefix; the bytes
verified against the name's sha256 or the copy's sha256 metadata before a byte is printed.

   mediactl cat --layout forge --root /srv/agent /srv/agent/.forge/files/remote/<sha256>.png > x.png
   mediactl cat --allow-bucket 's3://media?region=eu-west-1' --allow-prefix 'inbound/' s3://media/inbound/<sha256>.png
   mediactl cat --allow-bucket 's3://media?…' --allow-prefix 'agent-inputs/{user}/{thread}/uploads/' \
       --var user=u1 --var thread=t1 --object media/agent-inputs/u1/t1/uploads/f.png
   mediactl cat … -o json REF        # what would be read (digest, size, source), no bytes

Refused references exit 4 and print nothing; bytes that do not hash to what they must exit 1
and print nothing (they are spooled to a temporary file and only printed once proven).

` + exitCodesHelp,
		Flags: append(targetFlags(),
			&cli.StringSliceFlag{Name: "allow-root", Usage: "read local paths and file:// URIs below this directory (with --layout: the runtime's own, e.g. forge's .forge/files); repeatable", EnvVars: envVar("allow-root")},
			&cli.StringSliceFlag{Name: "allow-bucket", Usage: "read objects of this bucket URL (its query holds endpoint, region…); repeatable", EnvVars: envVar("allow-bucket")},
			&cli.StringSliceFlag{Name: "allow-prefix", Usage: "allowed key prefix of the buckets, {name} matching one segment (default: the whole bucket); repeatable", EnvVars: envVar("allow-prefix")},
			&cli.StringSliceFlag{Name: "var", Usage: "NAME=VALUE for a {NAME} of the allowed prefixes; repeatable", EnvVars: envVar("var")},
			&cli.StringFlag{Name: "object", Usage: "read the {bucket, path} pair BUCKET/KEY instead of a reference", EnvVars: envVar("object")},
			&cli.StringFlag{Name: "cache", Usage: "a content-addressed cache directory of verified copies", EnvVars: envVar("cache")},
			&cli.BoolFlag{Name: "allow-unverified-local", Usage: "serve local files whose name carries no sha256 (coffer's) unverified", EnvVars: envVar("allow-unverified-local")},
		),
		Action: runCat,
	}
}

type catDocument struct {
	envelope
	Ref     string       `json:"ref"`
	Info    *replay.Info `json:"info,omitempty"`
	Bytes   int64        `json:"bytes"`
	Refused string       `json:"refused,omitempty"`
	Error   string       `json:"error,omitempty"`
}

func runCat(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	object := c.String("object")
	ref := c.Args().First()
	switch {
	case object == "" && c.NArg() != 1:
		return usageErr("give one reference, or --object BUCKET/KEY", "cat reads one reference, %d given", c.NArg())
	case object != "" && c.NArg() != 0:
		return usageErr("give a reference or --object, not both", "cat reads one reference")
	}
	cfg, err := catConfig(c)
	if err != nil {
		return err
	}
	vars := replay.Vars{}
	for _, v := range c.StringSlice("var") {
		k, x, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return usageErr("write it as NAME=VALUE, e.g. --var user=u1", "bad --var %q", v)
		}
		vars[k] = x
	}
	r, err := replay.New(cfg)
	if err != nil {
		return usageErr("check --allow-root, --allow-bucket and --allow-prefix", "%v", err)
	}
	defer r.Close()

	var rc io.ReadCloser
	var info replay.Info
	if object != "" {
		ref = object
		bucket, key, _ := strings.Cut(object, "/")
		rc, info, err = r.OpenObject(c.Context, bucket, key, vars)
	} else {
		rc, info, err = r.Open(c.Context, ref, vars)
	}
	doc := catDocument{Ref: ref}
	var spool *os.File
	if err == nil {
		doc.Info = &info
		spool, doc.Bytes, err = spoolVerified(rc, g.output == "text")
		rc.Close()
		if spool != nil {
			defer os.Remove(spool.Name())
			defer spool.Close()
		}
	}
	o := replay.Outcome(c.Context, err)
	switch o {
	case outcome.Refused:
		doc.Refused = err.Error()
	case outcome.Found, outcome.Incomplete:
		doc.Error = err.Error()
	}
	doc.envelope = g.envelope(catSchema, o)
	if g.output != "text" {
		return errors.Join(g.document(doc), ended(o))
	}
	switch {
	case doc.Refused != "":
		g.problem("refused: %s", printable(doc.Refused))
	case doc.Error != "":
		g.problem("%s: %s", printable(ref), printable(doc.Error))
	case o == outcome.OK:
		if _, err := spool.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(g.stdout, spool); err != nil {
			return err
		}
		how := "verified"
		if !info.Verified {
			how = "NOT verified (no sha256 to check against)"
		}
		g.note("%s: %s, sha256 %s, %s, from %s", printable(info.Location), humanize.IBytes(uint64(doc.Bytes)), info.SHA256, how, info.Source)
	}
	return ended(o)
}

// spoolVerified reads rc to its end — where replay proves the bytes — into a
// temporary file when keep is set, so that nothing unproven is printed.
func spoolVerified(rc io.Reader, keep bool) (*os.File, int64, error) {
	if !keep {
		n, err := io.Copy(io.Discard, rc)
		return nil, n, err
	}
	f, err := os.CreateTemp("", "mediactl-cat-*")
	if err != nil {
		return nil, 0, err
	}
	n, err := io.Copy(f, rc)
	return f, n, err
}

// catConfig is what cat may read: the flags, and with --layout the
// directories the layout's runtime reads.
func catConfig(c *cli.Context) (replay.Config, error) {
	cfg := replay.Config{
		Roots:                c.StringSlice("allow-root"),
		Cache:                c.String("cache"),
		AllowUnverifiedLocal: c.Bool("allow-unverified-local"),
	}
	if name := c.String("layout"); name != "" {
		// What the runtime reads, not its stores: cat runs on the pod that
		// replays from the copies, where the local stores are gone.
		l, err := layout.ForReplay(name, c.String("root"))
		if err != nil {
			return cfg, targetError(c, err)
		}
		for _, d := range l.Reads {
			if d == "/" {
				d = l.Root // coffer reads any file; cat stays in its home unless told
			}
			cfg.Roots = append(cfg.Roots, d)
		}
		if l.Name == layout.Coffer && !c.IsSet("allow-unverified-local") {
			cfg.AllowUnverifiedLocal = true // coffer's names carry no digest
		}
	}
	prefixes := c.StringSlice("allow-prefix")
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	names, err := target.ParseBucketNames(c.Context, c.StringSlice("bucket-name"))
	if err != nil {
		return cfg, usageErr("write --bucket-name NAME=URL, the URL as for --allow-bucket", "%v", err)
	}
	for _, u := range c.StringSlice("allow-bucket") {
		b := replay.Bucket{URL: u, Prefixes: prefixes}
		if len(names) > 0 {
			st, err := store.Open(c.Context, u)
			if err != nil {
				return cfg, usageErr("check --allow-bucket", "--allow-bucket %s: %v", store.Redact(u), err)
			}
			if sb, ok := st.(store.Bucket); ok {
				b.Names = names[sb.Scheme()+"://"+sb.Name()]
			}
			st.Close()
		}
		cfg.Buckets = append(cfg.Buckets, b)
	}
	if len(cfg.Roots) == 0 && len(cfg.Buckets) == 0 {
		return cfg, usageErr("add --allow-root DIR, --allow-bucket URL or --layout", "cat reads nothing unless told where it may read")
	}
	return cfg, nil
}
