package main

// How mediactl talks. Every command follows these rules; read them before
// adding a line of output.
//
//  1. Results go to stdout; logs, notes, progress, errors and hints to stderr.
//     A script reads stdout and gets only the result.
//  2. -o text is for people: one line per problem first (so it is seen), one
//     summary line last (so it can be pasted into a ticket). --quiet prints
//     nothing when the outcome is ok, and the problems when it is not.
//  3. -o json is one document per run: the envelope (schema, mediactl
//     version, exit code, outcome, settings) and the command's report in it.
//     Every schema is versioned ("mediactl.<command>/v1") and pinned by a test
//     that rejects unknown fields; a new field is a new version.
//  4. -o ndjson streams typed records, one per line ({"type": "reference"},
//     {"type": "candidate"}, …), then one {"type": "summary"} record: the
//     -o json document on one line. gc's summary leaves its candidates out
//     (they can be millions, and were each streamed); the other summaries
//     keep their capped lists, so that one line answers "what was wrong".
//  5. Text from stores and sessions (keys, references, reasons quoting them)
//     is untrusted: it goes through printable(), never raw to a terminal.
//  6. A progress bar only on a terminal, never with --quiet, --no-progress,
//     or in CI logs.
//  7. Notes about how the run was set up (the layout found, a value taken
//     from the environment) go to stderr and not with --quiet.
//  8. An interrupted run prints the summary it has, then one line,
//     "interrupted after N …; run the same command again to go on", and exits
//     130. It never prints a line per item it did not get to (nor per item
//     the interrupt stopped midway: those are counted, not listed).
//  9. Exit codes come from the report's outcome through exitFor, in one
//     place; errors that stop a command before a report exists are usage
//     errors (2) with a hint, or incomplete (3).

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/store"
)

// envelope opens every JSON document and every NDJSON summary record.
type envelope struct {
	Schema   string          `json:"schema"`
	Version  string          `json:"mediactl_version"`
	ExitCode int             `json:"exit_code"`
	Outcome  outcome.Outcome `json:"outcome"`
	// Settings are the values that are not the defaults, and where each
	// came from.
	Settings []setting `json:"settings"`
}

// setting is a flag that is not at its default.
type setting struct {
	Flag  string `json:"flag"`
	Value string `json:"value"`
	// From is "command line" or "environment MEDIACTL_…".
	From string `json:"from"`
}

// newEnvelope is the envelope of a report with outcome o.
func (g *global) envelope(schema string, o outcome.Outcome) envelope {
	return envelope{Schema: schema, Version: version(), ExitCode: exitFor(o), Outcome: o, Settings: g.settings}
}

// record is one NDJSON line of a stream.
func (g *global) record(typ string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if string(b) == "{}" || len(b) < 2 || b[0] != '{' {
		return fmt.Errorf("ndjson record %s: not an object", typ)
	}
	line := make([]byte, 0, len(b)+len(typ)+12)
	line = append(line, `{"type":`...)
	line = strconv.AppendQuote(line, typ)
	line = append(line, ',')
	line = append(line, b[1:]...)
	line = append(line, '\n')
	_, err = g.stdout.Write(line)
	return err
}

// document writes doc as -o json (indented) or as the -o ndjson summary
// record.
func (g *global) document(doc any) error {
	if g.output == "ndjson" {
		return g.record("summary", doc)
	}
	return writeJSON(g.stdout, doc)
}

// settingsOf lists the flags of c that are set, with where each came from:
// the command line, or the environment.
func settingsOf(c *cli.Context, args []string) []setting {
	out := []setting{}
	seen := map[string]bool{}
	for _, x := range c.Lineage() {
		if x.Command == nil {
			continue
		}
		flags := x.Command.Flags
		if x.Command.Name == "" && x.App != nil {
			flags = x.App.Flags
		}
		for _, f := range flags {
			names := f.Names()
			name := names[0]
			if seen[name] || !x.IsSet(name) {
				continue
			}
			seen[name] = true
			from := "command line"
			if !onCommandLine(args, names) {
				for _, ev := range envVar(name) {
					if _, ok := os.LookupEnv(ev); ok {
						from = "environment " + ev
					}
				}
			}
			out = append(out, setting{Flag: name, Value: flagValue(x, name), From: from})
		}
	}
	slices.SortFunc(out, func(a, b setting) int { return strings.Compare(a.Flag, b.Flag) })
	return out
}

// flagValue is a set flag's value as text; credentials in URLs are redacted.
func flagValue(c *cli.Context, name string) string {
	var vs []string
	slice := true
	switch v := c.Value(name).(type) {
	case cli.StringSlice:
		vs = append([]string(nil), v.Value()...)
	case *cli.StringSlice:
		vs = append([]string(nil), v.Value()...)
	case nil:
	default:
		vs, slice = []string{fmt.Sprint(v)}, false
	}
	for i, s := range vs {
		vs[i] = store.Redact(s)
		// A value is one value, commas and all (main.go): --store 'a,b'
		// must read apart from --store a --store b.
		if slice {
			vs[i] = listItem(vs[i])
		}
	}
	return strings.Join(vs, ",")
}

// onCommandLine reports whether one of a flag's names is in args.
func onCommandLine(args []string, names []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		a = strings.TrimLeft(a, "-")
		a, _, _ = strings.Cut(a, "=")
		if slices.Contains(names, a) {
			return true
		}
	}
	return false
}

// destructiveFlags are never read from the environment (main.go's help says
// why): a variable left in a shell must not turn a dry run into a delete, nor
// widen what a delete removes (a policy that removes referenced blobs, a
// shorter age, a smaller cap, a purge of younger runs) unseen in a quiet
// cron run.
var destructiveFlags = []string{"delete", "no-trash", "max-delete", "allow-no-references", "delete-source", "overwrite",
	"policy", "min-age", "max-age", "max-size", "keep-within", "grace", "copy-to-trash", "runtime-stopped"}

// noteEnvironment tells the operator which settings came from the
// environment, and which variables were ignored: a variable left in a shell
// changes a run silently otherwise.
func (g *global) noteEnvironment() {
	for _, s := range g.settings {
		if strings.HasPrefix(s.From, "environment ") {
			g.note("--%s %s from the %s", s.Flag, printable(s.Value), s.From)
		}
	}
	for _, f := range destructiveFlags {
		for _, ev := range envVar(f) {
			if os.Getenv(ev) != "" {
				g.note("%s is ignored: --%s is only taken from the command line", ev, f)
			}
		}
	}
}

// printable returns s as is when it is valid UTF-8 without control characters,
// else quoted: session content is untrusted, and a reference must not be able to
// move the cursor or recolour an operator's terminal.
func printable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(s)
		}
	}
	return s
}

// listItem is s as one item of a list joined by commas: quoted when it
// holds a comma, a quote or an edge space (a folder "in,box", an owner
// "Smith, John"), so that one value never reads as two; else printable.
func listItem(s string) string {
	if strings.ContainsAny(s, ",\"") || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return printable(s)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// interrupted is rule 8's line: done things of what were finished.
func (g *global) interrupted(done int64, what string) {
	if g.lines != nil {
		g.lines.Warn(fmt.Sprintf("interrupted after %d %s; run the same command again to go on", done, what), "kind", "interrupted", "done", done)
		return
	}
	fmt.Fprintf(g.stderr, "mediactl: interrupted after %d %s; run the same command again to go on\n", done, what)
}
