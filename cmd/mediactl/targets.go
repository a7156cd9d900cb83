package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/layout"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// targetFlags select the blob stores and session sources a command works on.
func targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "store", Usage: "blob store: a directory, or a bucket URL (file://, s3://, gs://, azblob://, mem://); repeatable", EnvVars: envVar("store")},
		&cli.StringSliceFlag{Name: "sessions", Usage: "session source: a directory or file of JSON, sqlite:PATH, a postgres:// URL, or a bucket URL of JSON objects; repeatable", EnvVars: envVar("sessions")},
		&cli.StringFlag{Name: "sessions-query", Usage: "with SQL sources, read this query's columns instead of every text column of every table", EnvVars: envVar("sessions-query")},
		&cli.StringSliceFlag{Name: "sessions-exclude", Usage: "in session folders, do not read entries whose path relative to the folder, or whose name, matches this glob (* ? [a-z]); excluded entries are counted, not reported as unread; repeatable", EnvVars: envVar("sessions-exclude")},
		&cli.StringFlag{Name: "layout", Usage: "fill --store and --sessions from a known layout under --root: forge or coffer", EnvVars: envVar("layout")},
		&cli.StringFlag{Name: "root", Usage: "the directory a --layout lives in (forge: the agent's work directory; coffer: ~/.coffer by default)", EnvVars: envVar("root")},
	}
}

// targets are the opened stores and sources of one run.
type targets struct {
	stores  []store.Store
	sources []sessions.Source
	bases   []string // directories relative references are relative to
	// layout is the layout the stores and sources came from, if any: it knows
	// the aliases, home and runtime folders their references are resolved with.
	layout *layout.Layout
	// sessionSpecs are the sources as given (or as a layout chose them), for
	// commands that open them again for writing.
	sessionSpecs []string
}

func (t *targets) Close() {
	for _, s := range t.stores {
		s.Close()
	}
	for _, s := range t.sources {
		s.Close()
	}
}

// scanTargets pairs every store with its resolver.
func (t *targets) scanTargets() []scan.Target {
	var out []scan.Target
	for _, s := range t.stores {
		out = append(out, scan.Target{Store: s, Resolver: t.resolver(s)})
	}
	return out
}

// resolver is the resolver of one of the run's stores: the layout's, for a
// local store of a layout run.
func (t *targets) resolver(s store.Store) *ref.Resolver {
	if ls, ok := s.(store.Local); ok && t.layout != nil {
		return t.layout.Resolver(ls.Dir())
	}
	return scan.NewResolver(s, t.bases)
}

// companion is the layout's companion rule for a store whose files have
// sidecars (coffer's content/chat-media), else nil.
func (t *targets) companion(s store.Store) func(key string) (string, bool) {
	ls, ok := s.(store.Local)
	if !ok || t.layout == nil {
		return nil
	}
	for _, l := range t.layout.Stores {
		if l.Sidecars && filepath.Clean(l.Dir) == filepath.Clean(ls.Dir()) {
			return t.layout.Companion
		}
	}
	return nil
}

// openTargets resolves --layout/--root/--store/--sessions, or finds ./.forge when
// none is given, and opens everything. Explicit --store and --sessions replace
// what a layout would pick.
func openTargets(c *cli.Context, g *global) (*targets, error) {
	storeSpecs := c.StringSlice("store")
	sessionSpecs := c.StringSlice("sessions")
	layoutName, root := c.String("layout"), c.String("root")
	var bases []string
	var found *layout.Layout

	if layoutName == "" && len(storeSpecs) == 0 && len(sessionSpecs) == 0 {
		if root == "" {
			root = "."
		}
		if fi, err := os.Stat(filepath.Join(root, ".forge")); err == nil && fi.IsDir() {
			layoutName = layout.Forge
		} else {
			return nil, usageErr("pass --store and --sessions, or --layout forge|coffer --root DIR (see 'mediactl "+c.Command.Name+" --help')",
				"no --store or --sessions given and no .forge folder in %s to detect", absOr(root))
		}
	}
	if layoutName != "" {
		l, err := findLayout(layoutName, root)
		if err != nil {
			return nil, err
		}
		if len(storeSpecs) == 0 {
			storeSpecs = l.StoreDirs()
		}
		if len(sessionSpecs) == 0 {
			sessionSpecs = l.Sessions
		}
		bases = append(bases, l.Bases...)
		found = l
		g.note("%s layout in %s: store %s, sessions %s", layoutName, l.Root, strings.Join(storeSpecs, ", "), strings.Join(sessionSpecs, ", "))
	} else if root != "" {
		return nil, usageErr("add --layout forge or --layout coffer", "--root %s given without --layout", root)
	}
	if len(sessionSpecs) > scan.MaxSources {
		return nil, usageErr("", "%d session sources given, at most %d are supported", len(sessionSpecs), scan.MaxSources)
	}

	t := &targets{bases: bases, sessionSpecs: sessionSpecs, layout: found}
	ok := false
	defer func() {
		if !ok {
			t.Close()
		}
	}()
	for _, spec := range storeSpecs {
		s, err := store.Open(c.Context, spec)
		if err != nil {
			return nil, fmt.Errorf("--store %s: %w", spec, err)
		}
		t.stores = append(t.stores, s)
	}
	if err := checkOverlap(t.stores, sessionSpecs); err != nil {
		return nil, err
	}
	opts := sessions.Options{Query: c.String("sessions-query"), Exclude: c.StringSlice("sessions-exclude")}
	for _, spec := range sessionSpecs {
		s, err := sessions.Open(c.Context, spec, opts)
		if err != nil {
			return nil, fmt.Errorf("--sessions %s: %w", store.Redact(spec), err)
		}
		t.sources = append(t.sources, s)
	}
	ok = true
	return t, nil
}

// findLayout is layout.Find with the hints the CLI prints.
func findLayout(name, root string) (*layout.Layout, error) {
	l, err := layout.Find(name, root)
	var unknown *layout.UnknownError
	var notFound *layout.NotFoundError
	switch {
	case err == nil:
		return l, nil
	case errors.As(err, &unknown):
		return nil, usageErr("use --layout forge or --layout coffer, or give --store and --sessions", "%v", err)
	case errors.Is(err, layout.ErrNoHome):
		return nil, usageErr("pass --root, the folder that holds coffer.db or runs.db", "%v", err)
	case errors.As(err, &notFound) && notFound.Layout == layout.Forge:
		return nil, usageErr("point --root at the agent's work directory (the one that holds .forge/)", "%v", err)
	case errors.As(err, &notFound) && notFound.Layout == layout.Coffer:
		return nil, usageErr("point --root at coffer's folder (default ~/.coffer)", "%v", err)
	}
	return nil, err
}

// within reports whether path is dir or below it (both absolute and clean). A
// quarantine or trash folder there would be listed as blobs of the store.
// checkOverlap refuses a local store and a local session source that are the
// same folder or lie inside one another: a store that holds the sessions
// would list session files as blobs (and gc could remove them), a store inside
// a sessions folder would be read as sessions. Paths are compared with
// symlinks resolved, so another spelling of the same folder is caught too.
func checkOverlap(stores []store.Store, sessionSpecs []string) error {
	for _, st := range stores {
		ls, ok := st.(store.Local)
		if !ok {
			continue
		}
		dir := realOr(ls.Dir())
		for _, spec := range sessionSpecs {
			p, ok := localSessionPath(spec)
			if !ok {
				continue
			}
			p = realOr(p)
			switch {
			case within(p, dir):
				return usageErr("keep the session store outside the blob store: point --store at the folder of blobs only (forge: .forge/files/inbound)",
					"the session source %s is inside the store %s: its files would be taken for blobs", spec, ls.Dir())
			case within(dir, p):
				return usageErr("keep the blob store outside the session folder, or give --store and --sessions that do not contain one another",
					"the store %s is inside the session source %s: its blobs would be read as sessions", ls.Dir(), spec)
			}
		}
	}
	return nil
}

// localSessionPath is the local path a session spec reads: a folder or file,
// or the database file of sqlite:PATH. URLs have none.
func localSessionPath(spec string) (string, bool) {
	if p, ok := strings.CutPrefix(spec, "sqlite:"); ok {
		return absOr(p), true
	}
	if strings.Contains(spec, "://") {
		return "", false
	}
	return absOr(spec), true
}

// realOr is p (absolute) with symlinks resolved, or p where that fails.
func realOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
