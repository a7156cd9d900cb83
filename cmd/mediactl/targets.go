package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/layout"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/target"
)

// targetFlags select the blob stores and session sources a command works on.
func targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "store", Usage: "blob store: a directory, or a bucket URL (file://, s3://, gs://, azblob://, mem://); repeatable", EnvVars: envVar("store")},
		&cli.StringSliceFlag{Name: "sessions", Usage: "session source: a directory or file of JSON, sqlite:PATH, a postgres:// URL, or a bucket URL of JSON objects; repeatable", EnvVars: envVar("sessions")},
		&cli.StringFlag{Name: "sessions-query", Usage: "with SQL sources, read this query's columns instead of every text column of every table", EnvVars: envVar("sessions-query")},
		&cli.StringSliceFlag{Name: "sessions-exclude", Usage: "in session folders, do not read entries whose path relative to the folder, or whose name, matches this glob (* ? [a-z]); in PostgreSQL, tables whose schema.table or name, and columns whose schema.table.column or table.column, matches it (a foreign table, or a column holding bytea inside an array or a composite value, is otherwise reported as unread); excluded entries are counted, not reported as unread; repeatable", EnvVars: envVar("sessions-exclude")},
		&cli.StringFlag{Name: "layout", Usage: "fill --store and --sessions from a known layout under --root: forge or coffer", EnvVars: envVar("layout")},
		&cli.StringFlag{Name: "root", Usage: "the directory a --layout lives in (forge: the agent's work directory; coffer: ~/.coffer by default)", EnvVars: envVar("root")},
		&cli.StringSliceFlag{Name: "bucket-name", Usage: "NAME=URL: the sessions call the bucket at URL NAME in {bucket, path} pairs and bucket URLs (a file:// folder, or a bucket behind another endpoint name), e.g. agent-runs=file:///srv/buckets/agent-runs; repeatable", EnvVars: envVar("bucket-name")},
	}
}

// targets are the opened stores and sources of one run: target.Targets under
// the names the commands use. A command may replace stores (a --trash-dir
// wrapper); Close still closes what was opened.
type targets struct {
	opened  *target.Targets
	stores  []store.Store
	sources []sessions.Source
	bases   []string // directories relative references are relative to
	// layout is the layout the stores and sources came from, if any.
	layout *layout.Layout
	// sessionSpecs are the sources as given (or as a layout chose them), for
	// commands that open them again for writing.
	sessionSpecs []string
}

func (t *targets) Close() { t.opened.Close() }

// scanTargets pairs every store with its resolver.
func (t *targets) scanTargets() []scan.Target {
	out := make([]scan.Target, 0, len(t.stores))
	for _, s := range t.stores {
		out = append(out, scan.Target{Store: s, Resolver: t.resolver(s)})
	}
	return out
}

// resolver is the resolver of one of the run's stores: the layout's, for a
// local store of a layout run.
func (t *targets) resolver(s store.Store) *ref.Resolver { return t.opened.Resolver(s) }

// companion is the layout's companion rule for a store whose files have
// sidecars (coffer's content/chat-media), else nil.
func (t *targets) companion(s store.Store) func(key string) (string, bool) {
	return t.opened.Companion(s)
}

// openRewriters opens the run's session sources for writing, as they were
// opened for reading (the same --sessions-exclude).
func (t *targets) openRewriters(c *cli.Context) ([]sessions.Rewriter, error) {
	rws, err := t.opened.OpenRewriters(c.Context)
	if err != nil {
		return nil, targetError(c, err)
	}
	return rws, nil
}

// openTargets resolves --layout/--root/--store/--sessions, or finds ./.forge when
// none is given, and opens everything. Explicit --store and --sessions replace
// what a layout would pick.
func openTargets(c *cli.Context, g *global) (*targets, error) {
	opened, err := target.Open(c.Context, target.Spec{
		Stores:      c.StringSlice("store"),
		Sessions:    c.StringSlice("sessions"),
		Query:       c.String("sessions-query"),
		Exclude:     c.StringSlice("sessions-exclude"),
		Layout:      c.String("layout"),
		Root:        c.String("root"),
		BucketNames: c.StringSlice("bucket-name"),
	})
	if err != nil {
		return nil, targetError(c, err)
	}
	if l := opened.Layout; l != nil {
		g.note("%s layout in %s: store %s, sessions %s", l.Name, l.Root, strings.Join(opened.StoreSpecs, ", "), strings.Join(opened.SessionSpecs, ", "))
		g.log.Debug("layout", "name", l.Name, "root", l.Root, "detected", opened.Detected, "bases", l.Bases, "home", l.Home, "runtime_reads", l.Reads)
	}
	for _, st := range opened.Stores {
		kind := "local"
		if b, ok := store.Unwrap(st).(store.Bucket); ok {
			kind = b.Scheme()
		}
		g.log.Debug("store opened", "store", st.Location(), "kind", kind)
	}
	for _, src := range opened.Sources {
		g.log.Debug("sessions opened", "source", src.String(), "query", opened.SessionOptions.Query != "", "exclude", opened.SessionOptions.Exclude)
	}
	return &targets{
		opened:       opened,
		stores:       opened.Stores,
		sources:      opened.Sources,
		bases:        opened.Bases,
		layout:       opened.Layout,
		sessionSpecs: opened.SessionSpecs,
	}, nil
}

// targetError words an error of target.Open for the command line: the flags
// involved and a hint.
func targetError(c *cli.Context, err error) error {
	var (
		nothing  *target.NothingToDetectError
		rootOnly *target.RootWithoutLayoutError
		tooMany  *target.TooManySourcesError
		overlap  *target.OverlapError
		storeErr *target.StoreError
		srcErr   *target.SourceError
		unknown  *layout.UnknownError
		notFound *layout.NotFoundError
		bucketNm *target.BucketNameError
	)
	switch {
	case errors.As(err, &bucketNm):
		return usageErr("write --bucket-name NAME=URL, e.g. agent-runs=file:///srv/buckets/agent-runs", "--bucket-name: %v", err)
	case errors.As(err, &nothing):
		return usageErr("pass --store and --sessions, or --layout forge|coffer --root DIR (see '"+c.Command.HelpName+" --help')",
			"no --store or --sessions given and no .forge folder in %s to detect", nothing.Dir)
	case errors.As(err, &rootOnly):
		return usageErr("add --layout forge or --layout coffer", "--root %s given without --layout", rootOnly.Root)
	case errors.As(err, &tooMany):
		return usageErr("", "%d session sources given, at most %d are supported", tooMany.Count, tooMany.Max)
	case errors.As(err, &overlap) && overlap.Relation == target.Contains:
		return usageErr("keep the blob store outside the session folder, or give --store and --sessions that do not contain one another", "%v", overlap)
	case errors.As(err, &overlap):
		return usageErr("keep the session store outside the blob store: point --store at the folder of blobs only (forge: .forge/files/inbound)", "%v", overlap)
	case errors.As(err, &storeErr):
		return accessErr("--store", fmt.Errorf("--store %s: %w", storeErr.Spec, storeErr.Err))
	case errors.As(err, &srcErr):
		return fmt.Errorf("--sessions %s: %w", srcErr.Spec, srcErr.Err)
	case errors.As(err, &unknown):
		return usageErr("use --layout forge or --layout coffer, or give --store and --sessions", "%v", err)
	case errors.Is(err, layout.ErrNoHome):
		return usageErr("pass --root, the folder that holds coffer.db or runs.db", "%v", err)
	case errors.As(err, &notFound) && notFound.Layout == layout.Forge:
		return usageErr("point --root at the agent's work directory (the one that holds .forge/)", "%v", err)
	case errors.As(err, &notFound) && notFound.Layout == layout.Coffer:
		return usageErr("point --root at coffer's folder (default ~/.coffer)", "%v", err)
	}
	return err
}

// accessErr is err as a usage error (exit 2) with the fix for its kind when
// it holds a *store.AccessError: a store that refuses to be read at all is a
// mistake in flag's value or the credentials, which a retry (exit 3) would
// only repeat.
func accessErr(flag string, err error) error {
	var ae *store.AccessError
	if !errors.As(err, &ae) {
		return err
	}
	hint := map[store.AccessKind]string{
		store.BadCredentials: "check the credentials in the environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY; see docs/stores.md",
		store.Denied:         "the credentials may not list this bucket: grant list and read (S3 s3:ListBucket and s3:GetObject, GCS storage.objects.list and get, Azure Storage Blob Data Reader), or use other credentials",
		store.NoSuchBucket:   "check the bucket, container or folder name in " + flag + ", and the endpoint or region it is looked for at",
	}[ae.Kind]
	if flag == "--to" && ae.Kind == store.NoSuchBucket {
		hint = "create the bucket first (migrate never creates one), or check its name in --to and the endpoint or region"
	}
	return usageErr(hint, "%v", err)
}

// absOr is p made absolute, or p where that fails.
func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
