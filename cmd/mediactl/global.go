package main

// The settings every command shares (output, quiet, logs) and the lines it
// writes on stderr.

import (
	"fmt"
	"io"
	"log"
	"log/slog"

	"github.com/urfave/cli/v2"
)

// global reads a common flag from the command or, when not set there, from the
// flags given before the command name.
type global struct {
	output     string
	quiet      bool
	noProgress bool
	log        *slog.Logger
	stdout     io.Writer
	stderr     io.Writer
	// settings are the flags set, and where each came from.
	settings []setting
	// lines, with --log-format json, writes the notes and the interrupt
	// line as JSON records too, whatever the log level.
	lines *slog.Logger
}

func globals(c *cli.Context) (*global, error) {
	str := func(name string) string {
		for _, x := range c.Lineage() {
			if x.IsSet(name) {
				return x.String(name)
			}
		}
		return c.String(name)
	}
	boolean := func(name string) bool {
		for _, x := range c.Lineage() {
			if x.IsSet(name) {
				return x.Bool(name)
			}
		}
		return false
	}
	g := &global{
		output:     str("output"),
		quiet:      boolean("quiet"),
		noProgress: boolean("no-progress"),
		stdout:     c.App.Writer,
		stderr:     c.App.ErrWriter,
	}
	switch g.output {
	case "text", "json", "ndjson":
	default:
		return nil, usageErr("use -o text, -o json or -o ndjson", "unknown output format %q", g.output)
	}
	levelName := str("log-level")
	explicit := false
	verbose := 0
	for _, x := range c.Lineage() {
		explicit = explicit || x.IsSet("log-level")
		verbose += x.Count("verbose")
		if x.Bool("vv") {
			verbose += 2
		}
	}
	if !explicit {
		switch {
		case verbose >= 2:
			levelName = "debug"
		case verbose == 1:
			levelName = "info"
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(levelName)); err != nil {
		return nil, usageErr("use --log-level debug, info, warn or error", "unknown log level %q", str("log-level"))
	}
	hopts := &slog.HandlerOptions{Level: level}
	switch f := str("log-format"); f {
	case "text":
		g.log = slog.New(slog.NewTextHandler(g.stderr, hopts))
	case "json":
		g.log = slog.New(slog.NewJSONHandler(g.stderr, hopts))
		g.lines = slog.New(slog.NewJSONHandler(g.stderr, nil))
	default:
		return nil, usageErr("use --log-format text or json", "unknown log format %q", f)
	}
	// Libraries (the S3 transfer manager) report through the standard
	// logger; their notices are details for --log-level debug, not lines on
	// every run's stderr.
	log.SetFlags(0)
	log.SetOutput(slog.NewLogLogger(g.log.With("from", "library").Handler(), slog.LevelDebug).Writer())
	args, _ := c.App.Metadata["args"].([]string)
	g.settings = settingsOf(c, args)
	g.noteEnvironment()
	return g, nil
}

// problem is a line on stderr about what went wrong, also with --quiet (as
// a JSON record with --log-format json).
func (g *global) problem(format string, args ...any) {
	if g.lines != nil {
		g.lines.Error(fmt.Sprintf(format, args...), "kind", "problem")
		return
	}
	fmt.Fprintf(g.stderr, "mediactl: "+format+"\n", args...)
}

// note tells the operator something about how the command was set up (which
// layout was picked); --quiet and machine output keep stderr for problems only.
func (g *global) note(format string, args ...any) {
	if g.quiet {
		return
	}
	if g.lines != nil {
		g.lines.Info(fmt.Sprintf(format, args...), "kind", "note")
		return
	}
	fmt.Fprintf(g.stderr, "mediactl: "+format+"\n", args...)
}
