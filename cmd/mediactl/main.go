// Command mediactl audits, cleans and migrates the media that AI-agent runtimes
// store beside their chat histories.
//
// This package is wiring only: flags become an options struct, one library call
// does the work, and the result is printed as text, JSON or NDJSON with an exit
// code from the table in exit.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A scan or plan holds one large, long-lived set (a byte or two per
		// distinct blob plus its 32-byte digest) while it churns through
		// short-lived strings. Collecting at 50% growth instead of 100% keeps
		// peak memory near that set for ~10% more CPU. GOGC overrides it.
		debug.SetGCPercent(50)
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run executes one command line and returns its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels the run, which stops cleanly; a second one
	// gets the default behaviour and ends the process at once.
	go func() { <-ctx.Done(); stop() }()
	if f, ok := stderr.(*os.File); ok && f == os.Stderr && wantsJSONLog(args) {
		defer jsonStderr(stderr)()
	}
	app := newApp(stdout, stderr)
	app.Metadata = map[string]any{"args": args}
	err := app.RunContext(ctx, flagsFirst(app, args))
	code := exitCodeOf(err)
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.err == nil:
		// The command printed its report; only the code is left.
	default:
		hint := ""
		if errors.As(err, &ee) && ee.hint != "" {
			hint = ee.hint
		} else if h := libraryHint(err); h != "" {
			hint = h
		} else if code == exitUsage {
			hint = "see 'mediactl --help' or 'mediactl COMMAND --help'"
		}
		if wantsJSONLog(args) {
			// --log-format json: every line on stderr is a JSON record.
			slog.New(slog.NewJSONHandler(stderr, nil)).Error(err.Error(), "kind", "error", "hint", hint, "exit_code", code)
			break
		}
		fmt.Fprintf(stderr, "mediactl: error: %s\n", err)
		if hint != "" {
			fmt.Fprintf(stderr, "mediactl: hint: %s\n", hint)
		}
	}
	return code
}

// wantsJSONLog reports whether the command line or the environment asks for
// --log-format json, for the lines written before (or without) the flags
// being parsed.
func wantsJSONLog(args []string) bool {
	v := os.Getenv("MEDIACTL_LOG_FORMAT")
	for i, a := range args {
		switch {
		case a == "--":
			return v == "json"
		case a == "--log-format" || a == "-log-format":
			if i+1 < len(args) {
				v = args[i+1]
			}
		case strings.HasPrefix(a, "--log-format=") || strings.HasPrefix(a, "-log-format="):
			v = a[strings.Index(a, "=")+1:]
		}
	}
	return v == "json"
}

func newApp(stdout, stderr io.Writer) *cli.App {
	// Only --version (and 'mediactl version'): urfave/cli's default -v alias
	// made 'mediactl -v scan' print the version and scan nothing.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
	app := &cli.App{
		// A repeatable flag's value is one value: a folder, a DSN or an
		// owner id may hold a comma ("Smith, John" is not two owners).
		// Several values are given by repeating the flag.
		DisableSliceFlagSeparator: true,
		Name:                      "mediactl",
		Usage:                     "audit, clean and migrate the media agent runtimes keep beside their chat sessions",
		Description: `mediactl reads session stores (JSON files, SQLite, Postgres, buckets of JSON) and
blob stores (a local folder of <sha256>.<ext> files, or a bucket), and checks that the
two agree.

   Run it with no flags in an agent's work directory: it finds ./.forge by itself.

   mediactl scan                                        # references and dangling ones
   mediactl scan --layout forge --root /srv/agent       # same, from a layout preset
   mediactl scan --store DIR --sessions sqlite:runs.db -o json

Every flag can also be set through an environment variable MEDIACTL_<FLAG>,
e.g. MEDIACTL_STORE, MEDIACTL_OUTPUT, except the switches that remove or overwrite
data (--delete, --no-trash, --max-delete, --allow-no-references, --delete-source,
--overwrite) and the settings that widen what is removed (--policy, --min-age,
--max-age, --max-size, --keep-within): a variable left in a shell must never turn
a dry run into a delete, nor widen a delete unseen.
Results go to stdout, logs to stderr.

` + exitCodesHelp,
		Version:              version(),
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		// --help is appended by hand: urfave/cli adds it only when the app
		// has no command named help, and mediactl has its own.
		Flags: append(commonFlags(), cli.HelpFlag),
		Commands: []*cli.Command{
			scanCommand(),
			verifyCommand(),
			gcCommand(),
			migrateCommand(),
			catCommand(),
			reportCommand(),
			forgetCommand(),
			versionCommand(),
		},
		ExitErrHandler: func(*cli.Context, error) {}, // run maps errors to exit codes
		// Without a command: help; with an unknown one: a usage error (exit 2),
		// so that a script calling a command this version lacks notices.
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownCommand(c.App.Name, c.Args().First(), c.App.Commands)
			}
			return cli.ShowAppHelp(c)
		},
	}
	for _, cmd := range app.Commands {
		cmd.Flags = append(cmd.Flags, commonFlags()...)
	}
	app.Commands = append(app.Commands, shellCommands()...)
	// Usage errors, suggestions and defaults, the same at every level.
	applyConventions(app)
	return app
}

// envVar is the environment variable that sets flag name.
func envVar(name string) []string {
	return []string{"MEDIACTL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))}
}

// commonFlags are accepted by every command (before or after its name).
func commonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Usage: "result format: text, json (one versioned document) or ndjson (one record per line)", EnvVars: envVar("output")},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing when nothing is wrong (for cron)", EnvVars: envVar("quiet")},
		&cli.BoolFlag{Name: "no-progress", Usage: "never draw a progress bar (it is only drawn when stderr is a terminal)", EnvVars: envVar("no-progress")},
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log format on stderr: text or json", EnvVars: envVar("log-format")},
		&cli.StringFlag{Name: "log-level", Value: "warn", Usage: "log level: debug, info, warn or error", EnvVars: envVar("log-level")},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Count: new(int), Usage: "more logs on stderr, as rclone and restic take it: -v is --log-level info, -vv debug (an explicit --log-level wins)"},
		// -vv is one word to the flag parser; it is -v twice.
		&cli.BoolFlag{Name: "vv", Hidden: true},
	}
}
