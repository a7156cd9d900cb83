package main

// The man page: made from the same definitions as --help, with the sections
// a man page has that --help does not (exit status, environment, files).

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

func runMan(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("write it as: mediactl man", "unexpected argument %q", c.Args().First())
	}
	// The page is made from markdown: the description's <words> and indented
	// examples must read there as they do in --help.
	c.App.Description = manMarkdown(c.App.Description)
	// urfave/cli's page shows a command's usage line but not its
	// description: append the description there, without the exit code
	// table, which the page has once.
	var describe func(cmds []*cli.Command)
	describe = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			desc := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cmd.Description), exitCodesHelp))
			if desc != "" {
				cmd.Usage += "\n\n" + manMarkdown(desc)
			}
			describe(cmd.Subcommands)
		}
	}
	describe(c.App.Commands)
	page, err := c.App.ToManWithSection(1)
	if err != nil {
		return fmt.Errorf("making the man page: %w", err)
	}
	_, err = fmt.Fprint(c.App.Writer, roffASCII(finishMan(page, currentBuild(), manDate())))
	return err
}

// manDate is the page's date: SOURCE_DATE_EPOCH when set (a reproducible
// build sets it to the commit's time), else the commit date the binary
// records, else none.
func manDate() string {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC().Format("2006-01-02")
		}
	}
	if t, err := time.Parse(time.RFC3339, currentBuild().Date); err == nil {
		return t.UTC().Format("2006-01-02")
	}
	return ""
}

// finishMan completes urfave/cli's page (each command a section after
// COMMANDS, each subcommand a subsection of it): a .TH line with the date,
// version and manual name, and the EXIT STATUS, ENVIRONMENT, FILES and SEE
// ALSO sections.
func finishMan(page string, b buildInfo, date string) string {
	th := fmt.Sprintf(".TH MEDIACTL 1 %q %q \"User Commands\"", date, "mediactl "+b.Version)
	lines := strings.Split(page, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".TH ") {
			lines[i] = th
		}
	}
	var extra strings.Builder
	extra.WriteString("\n.SH EXIT STATUS\n")
	for _, l := range strings.Split(strings.TrimSpace(exitCodesHelp), "\n")[1:] {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		code, what, _ := strings.Cut(l, " ")
		if _, err := strconv.Atoi(code); err != nil {
			fmt.Fprintf(&extra, ".PP\n%s\n", l)
			continue
		}
		fmt.Fprintf(&extra, ".TP\n.B %s\n%s\n", code, strings.TrimSpace(what))
	}
	extra.WriteString(manEnvironmentFilesSeeAlso)
	return strings.Join(lines, "\n") + extra.String()
}

// manEnvironmentFilesSeeAlso are the sections after EXIT STATUS.
const manEnvironmentFilesSeeAlso = `
.SH ENVIRONMENT
.TP
.B MEDIACTL_<FLAG>
sets a flag, e.g. MEDIACTL_STORE, MEDIACTL_OUTPUT; never the switches that remove or overwrite data, nor the settings that widen what is removed (see DESCRIPTION).
.TP
.B AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE, AWS_REGION
credentials and region of s3:// stores.
.TP
.B GOOGLE_APPLICATION_CREDENTIALS
credentials of gs:// stores.
.TP
.B AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN
credentials of azblob:// stores.
.TP
.B PGPASSWORD, PGSSLMODE
and the other libpq variables: PostgreSQL session sources.
.TP
.B TMPDIR
where file:// buckets are written before each object is renamed into place (beside it when TMPDIR is on another file system).
.TP
.B CI, TERM
no progress bar when CI is set or TERM is dumb.
.TP
.B SOURCE_DATE_EPOCH
the date of this page when it is made.
.SH FILES
.TP
.I STORE/.mediactl/lock
the store's lock, held by gc, migrate and verify --quarantine.
.TP
.I STORE/.mediactl/trash/RUN/
a gc or migrate trash run; gc restore puts it back, gc purge deletes it.
.TP
.I STORE/.mediactl/migrate/DESTINATION.jsonl
migrate's journal: proven copies and rewrites, read by rollback.
.SH SEE ALSO
.BR rclone (1),
.BR restic (1);
the documentation in docs/ of the source: scan.md, verify.md, gc.md, migrate.md, report.md, retention.md, output.md.
`

// roffASCII writes each non-ASCII character (the help's dashes and ellipses)
// as a roff escape: troff without a preprocessor reads bytes, not UTF-8.
func roffASCII(page string) string {
	var b strings.Builder
	for _, r := range page {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\[u%04X]`, r)
	}
	return b.String()
}

// manMarkdown is help text written for a terminal, as markdown that renders
// the same: indented lines become code blocks (a blank line before each), and
// angle brackets elsewhere are escaped rather than read as HTML.
func manMarkdown(text string) string {
	var b strings.Builder
	prevIndented, prevBlank := false, true
	for _, l := range strings.Split(text, "\n") {
		indented := strings.HasPrefix(l, "   ") && strings.TrimSpace(l) != ""
		switch {
		case indented && !prevIndented && !prevBlank:
			b.WriteString("\n    " + l + "\n")
		case indented:
			b.WriteString("    " + l + "\n")
		case prevIndented && strings.TrimSpace(l) != "":
			b.WriteString("\n" + escapeMarkdown(l) + "\n")
		default:
			b.WriteString(escapeMarkdown(l) + "\n")
		}
		prevIndented, prevBlank = indented, strings.TrimSpace(l) == ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

var markdownEscaper = strings.NewReplacer("<", "\\<", ">", "\\>", "*", "\\*")

func escapeMarkdown(s string) string { return markdownEscaper.Replace(s) }
