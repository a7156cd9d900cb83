package main

// The pass over the whole command tree that gives every level the same usage
// errors, suggestions and one default per flag (the help, completion and man
// commands are in cmd_shell.go).

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
)

// applyConventions walks the command tree under app once it is built: every
// command and subcommand reports usage errors the same way, with a hint naming
// its full path and a suggestion only when one is close; a command with
// subcommands says which subcommand was meant; each flag shows one default.
func applyConventions(app *cli.App) {
	app.Suggest = false // urfave/cli suggests the nearest flag however far it is
	for _, f := range app.Flags {
		oneDefault(f)
	}
	app.OnUsageError = func(c *cli.Context, err error, _ bool) error {
		return flagUsageErr(app.Name, app.Flags, err)
	}
	for _, cmd := range app.Commands {
		applyCommandConventions(app.Name, cmd)
	}
}

func applyCommandConventions(parent string, cmd *cli.Command) {
	path := parent + " " + cmd.Name
	cmd.HideHelpCommand = true // 'mediactl help PATH' and --help cover it
	for _, f := range cmd.Flags {
		oneDefault(f)
	}
	flags := cmd.Flags
	cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
		return flagUsageErr(path, flags, err)
	}
	if action := cmd.Action; action != nil {
		cmd.Action = func(c *cli.Context) error { return withPathHint(path, action(c)) }
	}
	if len(cmd.Subcommands) > 0 && cmd.Action != nil {
		// A word that is not a subcommand reaches the command's own action;
		// when it is close to a subcommand's name it was a typo.
		action, subs := cmd.Action, cmd.Subcommands
		cmd.Action = func(c *cli.Context) error {
			if c.NArg() > 0 {
				var names []string
				for _, s := range subs {
					names = append(names, s.Name)
				}
				if suggest(c.Args().First(), names) != "" {
					return unknownCommand(path, c.Args().First(), subs)
				}
			}
			return action(c)
		}
	}
	for _, sub := range cmd.Subcommands {
		applyCommandConventions(path, sub)
	}
}

// withPathHint gives a usage error that came without a hint one naming the
// help of the command path it came from.
func withPathHint(path string, err error) error {
	var ee *exitError
	if err == nil || exitCodeOf(err) != exitUsage || libraryHint(err) != "" {
		return err
	}
	if errors.As(err, &ee) {
		if ee.hint != "" || ee.err == nil {
			return err
		}
		return &exitError{code: exitUsage, err: ee.err, hint: fmt.Sprintf("see '%s --help'", path)}
	}
	return &exitError{code: exitUsage, err: err, hint: fmt.Sprintf("see '%s --help'", path)}
}

// renamedFlags are, by command path, the flags that took another name: an old
// script gets the new name in the hint, not the nearest spelling (the old
// --older-than is close to nothing, or to the wrong flag).
var renamedFlags = map[string]map[string]string{
	"mediactl migrate":  {"older-than": "min-age"},
	"mediactl gc purge": {"older-than": "keep-within"},
}

// flagUsageErr is the usage error for a flag the command line got wrong at
// the command path given, with the closest flag when one is close enough.
func flagUsageErr(path string, flags []cli.Flag, err error) error {
	hint := fmt.Sprintf("see '%s --help'", path)
	if typed, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
		typed = strings.TrimLeft(typed, "-")
		if now, ok := renamedFlags[path][typed]; ok {
			return usageErr(fmt.Sprintf("--%s is now --%s; see '%s --help'", typed, now, path), "%v", err)
		}
		var names []string
		for _, f := range flags {
			for _, n := range f.Names() {
				if len(n) > 1 { // a one-letter alias is never a near miss
					names = append(names, n)
				}
			}
		}
		if s := suggest(typed, names); s != "" {
			hint = fmt.Sprintf("did you mean --%s? see '%s --help'", s, path)
		}
	}
	return usageErr(hint, "%v", err)
}

// suggest is the candidate closest to typed, or "" when none is close enough
// to be a typo of it: at most one edit for a word of up to four letters, two up
// to eight, three beyond (a transposition is one edit).
func suggest(typed string, candidates []string) string {
	limit := 1
	switch {
	case len(typed) > 8:
		limit = 3
	case len(typed) > 4:
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(typed), c); d < bestDist && d < len(c) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of neighbours.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// defaultInUsage is a default written into a flag's usage text, "(default: X)"
// or "(default X; …)".
var defaultInUsage = regexp.MustCompile(`\s*\(default:? ([^)]+)\)`)

// oneDefault moves a default written in a flag's usage into its DefaultText,
// so that help shows it once instead of beside urfave/cli's own "(default:
// 0)".
func oneDefault(f cli.Flag) {
	if b, ok := f.(*cli.BoolFlag); ok {
		b.DisableDefaultText = true // "(default: false)" on every switch says nothing
	}
	categorize(f)
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	usage, text := v.Elem().FieldByName("Usage"), v.Elem().FieldByName("DefaultText")
	if !usage.IsValid() || !text.IsValid() || usage.Kind() != reflect.String || text.Kind() != reflect.String || text.String() != "" {
		return
	}
	m := defaultInUsage.FindStringSubmatchIndex(usage.String())
	if m == nil {
		return
	}
	u := usage.String()
	text.SetString(u[m[2]:m[3]])
	usage.SetString(u[:m[0]] + u[m[1]:])
}

// Help groups: a command's own flags come first, then what every command
// reading stores and sessions takes, then output and logging.
const (
	categoryTargets = "Stores and sessions (every command that reads them):"
	categoryOutput  = "Output and logs (every command):"
)

var flagCategories = map[string]string{
	"store": categoryTargets, "sessions": categoryTargets, "sessions-query": categoryTargets,
	"sessions-exclude": categoryTargets, "layout": categoryTargets, "root": categoryTargets,
	"bucket-name": categoryTargets,
	"output":      categoryOutput, "quiet": categoryOutput, "no-progress": categoryOutput,
	"log-format": categoryOutput, "log-level": categoryOutput, "verbose": categoryOutput,
	"metrics-file": categoryOutput, "metrics-label": categoryOutput, "max-listed": categoryOutput,
}

// categorize puts a shared flag in its help group.
func categorize(f cli.Flag) {
	names := f.Names()
	if len(names) == 0 {
		return
	}
	cat, ok := flagCategories[names[0]]
	if !ok {
		return
	}
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	if c := v.Elem().FieldByName("Category"); c.IsValid() && c.Kind() == reflect.String && c.String() == "" {
		c.SetString(cat)
	}
}
