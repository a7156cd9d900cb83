package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

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
		out = append(out, scan.Target{Store: s, Resolver: scan.NewResolver(s, t.bases)})
	}
	return out
}

// openTargets resolves --layout/--root/--store/--sessions, or finds ./.forge when
// none is given, and opens everything. Explicit --store and --sessions replace
// what a layout would pick.
func openTargets(c *cli.Context, g *global) (*targets, error) {
	storeSpecs := c.StringSlice("store")
	sessionSpecs := c.StringSlice("sessions")
	layout, root := c.String("layout"), c.String("root")
	var bases []string

	if layout == "" && len(storeSpecs) == 0 && len(sessionSpecs) == 0 {
		if root == "" {
			root = "."
		}
		if fi, err := os.Stat(filepath.Join(root, ".forge")); err == nil && fi.IsDir() {
			layout = "forge"
		} else {
			return nil, usageErr("pass --store and --sessions, or --layout forge|coffer --root DIR (see 'mediactl "+c.Command.Name+" --help')",
				"no --store or --sessions given and no .forge folder in %s to detect", absOr(root))
		}
	}
	if layout != "" {
		l, err := findLayout(layout, root)
		if err != nil {
			return nil, err
		}
		if len(storeSpecs) == 0 {
			storeSpecs = l.stores
		}
		if len(sessionSpecs) == 0 {
			sessionSpecs = l.sessions
		}
		bases = append(bases, l.root)
		g.note("%s layout in %s: store %s, sessions %s", layout, l.root, strings.Join(storeSpecs, ", "), strings.Join(sessionSpecs, ", "))
	} else if root != "" {
		return nil, usageErr("add --layout forge or --layout coffer", "--root %s given without --layout", root)
	}
	if len(sessionSpecs) > scan.MaxSources {
		return nil, usageErr("", "%d session sources given, at most %d are supported", len(sessionSpecs), scan.MaxSources)
	}

	t := &targets{bases: bases, sessionSpecs: sessionSpecs}
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
	opts := sessions.Options{Query: c.String("sessions-query"), Exclude: c.StringSlice("sessions-exclude")}
	for _, spec := range sessionSpecs {
		s, err := sessions.Open(c.Context, spec, opts)
		if err != nil {
			return nil, fmt.Errorf("--sessions %s: %w", redact(spec), err)
		}
		t.sources = append(t.sources, s)
	}
	ok = true
	return t, nil
}

type layoutPaths struct {
	root     string
	stores   []string
	sessions []string
}

// findLayout lists the stores and session sources of a known layout that exist
// under root.
func findLayout(name, root string) (*layoutPaths, error) {
	switch name {
	case "forge":
		if root == "" {
			root = "."
		}
		root = absOr(root)
		l := &layoutPaths{root: root}
		files := filepath.Join(root, ".forge", "files")
		for _, d := range []string{"inbound", "generated"} {
			if isDir(filepath.Join(files, d)) {
				l.stores = append(l.stores, filepath.Join(files, d))
			}
		}
		if len(l.stores) == 0 {
			return nil, usageErr("point --root at the agent's work directory (the one that holds .forge/)", "no blob store in %s (neither inbound/ nor generated/ exists)", files)
		}
		sess := filepath.Join(root, ".forge", "sessions")
		if !isDir(sess) {
			return nil, usageErr("point --root at the agent's work directory (the one that holds .forge/)", "no session folder %s", sess)
		}
		l.sessions = []string{sess}
		return l, nil
	case "coffer":
		if root == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, usageErr("pass --root, the folder that holds coffer.db or runs.db", "no home directory to find ~/.coffer in: %v", err)
			}
			root = filepath.Join(home, ".coffer")
		}
		root = absOr(root)
		l := &layoutPaths{root: root}
		for _, d := range []string{"channel-media", filepath.Join("content", "channel-media")} {
			if isDir(filepath.Join(root, d)) {
				l.stores = append(l.stores, filepath.Join(root, d))
			}
		}
		for _, db := range []string{"runs.db", "coffer.db"} {
			if fi, err := os.Stat(filepath.Join(root, db)); err == nil && fi.Mode().IsRegular() {
				l.sessions = append(l.sessions, "sqlite:"+filepath.Join(root, db))
			}
		}
		if len(l.stores) == 0 || len(l.sessions) == 0 {
			return nil, usageErr("point --root at coffer's folder (default ~/.coffer)", "%s has no channel-media/ folder or no runs.db/coffer.db", root)
		}
		return l, nil
	}
	return nil, usageErr("use --layout forge or --layout coffer, or give --store and --sessions", "unknown layout %q", name)
}

// within reports whether path is dir or below it (both absolute and clean). A
// quarantine or trash folder there would be listed as blobs of the store.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// redact removes a password from a URL-like spec for messages.
func redact(spec string) string {
	at := strings.Index(spec, "@")
	scheme := strings.Index(spec, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return spec
	}
	userinfo := spec[scheme+3 : at]
	if i := strings.Index(userinfo, ":"); i >= 0 {
		return spec[:scheme+3] + userinfo[:i] + ":xxxxx" + spec[at:]
	}
	return spec
}
