package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// manSection is one .SH or .SS section of a man page: its title and text.
type manSection struct {
	level string // "SH" or "SS"
	title string
	body  string
}

// parseMan splits a roff man page into its sections, in order.
func parseMan(t *testing.T, page string) []manSection {
	t.Helper()
	var secs []manSection
	for _, line := range strings.Split(page, "\n") {
		if rest, ok := strings.CutPrefix(line, ".SH "); ok {
			secs = append(secs, manSection{level: "SH", title: strings.Trim(rest, `"`)})
			continue
		}
		if rest, ok := strings.CutPrefix(line, ".SS "); ok {
			secs = append(secs, manSection{level: "SS", title: strings.Trim(rest, `"`)})
			continue
		}
		if len(secs) > 0 {
			secs[len(secs)-1].body += line + "\n"
		}
	}
	return secs
}

// TestManPageCoversEveryCommandAndFlag reads 'mediactl man' section by section:
// every command is a section after COMMANDS, every subcommand a subsection
// under its command, and every flag of each is named in its section.
func TestManPageCoversEveryCommandAndFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"mediactl", "man"}, &out, &errOut); code != exitOK {
		t.Fatalf("mediactl man exited %d: %s", code, errOut.String())
	}
	page := out.String()
	if !strings.HasPrefix(page, ".nh\n.TH MEDIACTL 1 ") {
		t.Fatalf("not a section-1 page of mediactl: %.60q", page)
	}
	for i, r := range page {
		if r >= 0x80 {
			t.Fatalf("non-ASCII %q at %d: troff reads bytes", r, i)
		}
	}
	secs := parseMan(t, page)
	index := map[string]int{}
	for i, s := range secs {
		if _, dup := index[s.level+" "+s.title]; !dup || s.level == "SS" {
			index[s.level+" "+s.title] = i
		}
	}
	for _, want := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"} {
		if _, ok := index["SH "+want]; !ok {
			t.Errorf("no %s section; sections: %v", want, secs)
		}
	}
	app := newApp(&bytes.Buffer{}, &bytes.Buffer{})
	commandsAt := index["SH COMMANDS"]
	flagNamed := func(where manSection, f cli.Flag) {
		t.Helper()
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			return // hidden from help and man page alike (-vv)
		}
		for _, n := range f.Names() {
			// As roff shows a flag: \fB--jobs, -j\fP.
			dashes := "--"
			if len(n) == 1 {
				dashes = "-"
			}
			if !regexp.MustCompile(`(\\fB|, )` + regexp.QuoteMeta(dashes+n) + `(,|\\fP)`).MatchString(where.body) {
				t.Errorf("section %q does not name %s%s", where.title, dashes, n)
			}
		}
	}
	for _, f := range app.Flags {
		flagNamed(secs[index["SH GLOBAL OPTIONS"]], f)
	}
	seen := 0
	for _, cmd := range app.Commands {
		if cmd.Hidden {
			continue
		}
		i, ok := index["SH "+cmd.Name]
		if !ok || i < commandsAt {
			t.Errorf("command %s has no section after COMMANDS", cmd.Name)
			continue
		}
		seen++
		if !strings.Contains(secs[i].body, cmd.Usage) {
			t.Errorf("section %s lacks the usage %q", cmd.Name, cmd.Usage)
		}
		// The description is there too, not only the one-line usage.
		if first, _, _ := strings.Cut(cmd.Description, "\n"); first != "" && !strings.Contains(secs[i].body, roffASCII(first)) {
			t.Errorf("section %s lacks the description's first line %q", cmd.Name, first)
		}
		for _, f := range cmd.Flags {
			flagNamed(secs[i], f)
		}
		for _, sub := range cmd.Subcommands {
			// The subsection must be under its own command: before the
			// next .SH.
			j := -1
			for k := i + 1; k < len(secs) && secs[k].level == "SS"; k++ {
				if secs[k].title == sub.Name {
					j = k
				}
			}
			if j < 0 {
				t.Errorf("subcommand %s %s has no subsection under %s", cmd.Name, sub.Name, cmd.Name)
				continue
			}
			seen++
			for _, f := range sub.Flags {
				flagNamed(secs[j], f)
			}
		}
	}
	if seen < 13 { // scan verify gc(restore purge runs) migrate(rollback) cat version help completion man
		t.Errorf("only %d commands checked", seen)
	}
}

// TestOneDefaultPerFlag renders every flag of every command as help shows it:
// at most one "(default: …)", and the defaults written into usage texts are
// the ones shown.
func TestOneDefaultPerFlag(t *testing.T) {
	app := newApp(&bytes.Buffer{}, &bytes.Buffer{})
	var walk func(path string, flags []cli.Flag, cmds []*cli.Command)
	checked := 0
	walk = func(path string, flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			checked++
			s := f.String()
			if n := strings.Count(s, "(default"); n > 1 {
				t.Errorf("%s: %s shows %d defaults", path, s, n)
			}
		}
		for _, c := range cmds {
			walk(path+" "+c.Name, c.Flags, c.Subcommands)
		}
	}
	walk("mediactl", app.Flags, app.Commands)
	if checked < 50 {
		t.Fatalf("only %d flags checked", checked)
	}
	for _, c := range app.Commands {
		if c.Name != "scan" {
			continue
		}
		for _, f := range c.Flags {
			if f.Names()[0] == "jobs" && !strings.Contains(f.String(), "(default: number of CPUs)") {
				t.Errorf("scan --jobs: %s", f.String())
			}
		}
	}
}

func TestOneDefaultMovesTheUsageDefault(t *testing.T) {
	for _, tc := range []struct {
		flag              cli.Flag
		usage, defaultTxt string
	}{
		{&cli.IntFlag{Name: "jobs", Usage: "workers (default: number of CPUs)"}, "workers", "number of CPUs"},
		{&cli.StringFlag{Name: "min-age", Usage: "fence (default 24h; 0 for none) in gc"}, "fence in gc", "24h; 0 for none"},
		{&cli.StringFlag{Name: "tpl", Usage: "{url} (default), {key}"}, "{url} (default), {key}", ""},
		{&cli.IntFlag{Name: "n", Usage: "count (default: 3)", DefaultText: "kept"}, "count (default: 3)", "kept"},
	} {
		oneDefault(tc.flag)
		var usage, def string
		switch f := tc.flag.(type) {
		case *cli.IntFlag:
			usage, def = f.Usage, f.DefaultText
		case *cli.StringFlag:
			usage, def = f.Usage, f.DefaultText
		}
		if usage != tc.usage || def != tc.defaultTxt {
			t.Errorf("%s: usage %q default %q, want %q and %q", tc.flag.Names()[0], usage, def, tc.usage, tc.defaultTxt)
		}
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"output", "o", "quiet", "sessions", "store", "delete", "dry-run", "keep-within", "jobs", "restore", "runs", "purge"}
	for typed, want := range map[string]string{
		"sesions":    "sessions",
		"stroe":      "store", // a transposition is one edit
		"delte":      "delete",
		"dryrun":     "dry-run",
		"keep-withn": "keep-within",
		"jbos":       "jobs",
		"Quiet":      "quiet",
		"restroe":    "restore",
		"bogus":      "", // nothing near: the nearest, "o", is not a typo of it
		"x":          "", // one-letter words are never near misses
		"frobnicate": "", // too far from everything
		"run":        "runs",
		"":           "",
	} {
		if got := suggest(typed, names); got != want {
			t.Errorf("suggest(%q) = %q, want %q", typed, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"store", "stroe", 1}, {"ca", "abc", 3}, {"sessions", "sessions", 0},
		{"é", "e", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetry)", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestFishCompletionHasNoRepeats: each completion line once, although
// urfave/cli adds --help and --version a second time.
func TestFishCompletionHasNoRepeats(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"mediactl", "completion", "fish"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	seen := map[string]bool{}
	n := 0
	for _, l := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(l, "complete ") {
			continue
		}
		n++
		if seen[l] {
			t.Errorf("repeated: %s", l)
		}
		seen[l] = true
	}
	if n < 50 || !seen["complete -c mediactl -n '__fish_seen_subcommand_from gc' -f -l dry-run -d 'show the plan and change nothing: the default, said explicitly (contradicts --delete)'"] {
		t.Errorf("%d completion lines, gc --dry-run among them: %v", n, seen["x"])
	}
}

// FuzzEditDistance: a command line is whatever was typed; the distance never
// panics, is symmetric, zero only for equal words and at most the longer
// word's length.
func FuzzEditDistance(f *testing.F) {
	f.Add("sesions", "sessions")
	f.Add("", "x")
	f.Add("\xff\xfe", "é")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := editDistance(a, b)
		if d != editDistance(b, a) {
			t.Fatalf("not symmetric for %q, %q", a, b)
		}
		ra, rb := []rune(a), []rune(b)
		if (d == 0) != (string(ra) == string(rb)) || d > max(len(ra), len(rb)) {
			t.Fatalf("editDistance(%q, %q) = %d", a, b, d)
		}
		if s := suggest(a, []string{b}); s != "" && s != b {
			t.Fatalf("suggested %q, not a candidate", s)
		}
	})
}
