package main

import (
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress draws a byte-counting bar on stderr. It is only drawn when stderr is
// a terminal that can redraw a line, neither --quiet nor --no-progress is
// given and no CI is running, so that cron logs and CI output stay clean.
type progress struct {
	bar *progressbar.ProgressBar
}

// progressWanted reports whether newProgress draws a bar: a command can skip
// work that only a bar needs.
func progressWanted(g *global) bool {
	f, ok := g.stderr.(*os.File)
	return !g.quiet && !g.noProgress && ok && term.IsTerminal(int(f.Fd())) && terminalRedraws(os.Getenv)
}

// terminalRedraws reports whether the environment says a bar would be seen
// as one: CI services (GitHub Actions, GitLab, Jenkins with a pseudo-terminal)
// set CI and keep every redraw as a line of the log, and TERM=dumb (Emacs'
// shell, some editors' terminals) cannot move the cursor back.
func terminalRedraws(getenv func(string) string) bool {
	if ci := getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		return false
	}
	return getenv("TERM") != "dumb"
}

func newProgress(g *global, description string, total int64) *progress {
	if !progressWanted(g) {
		return nil
	}
	f := g.stderr.(*os.File)
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowBytes(true),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSpinnerType(14),
	)
	return &progress{bar: bar}
}

// Add implements scan.Progress; a nil *progress draws nothing.
func (p *progress) Add(n int64) {
	if p != nil {
		p.bar.Add64(n)
	}
}

func (p *progress) Finish() {
	if p != nil {
		p.bar.Finish()
	}
}
