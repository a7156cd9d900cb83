package main

import (
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress draws a byte-counting bar on stderr. It is only drawn when stderr is
// a terminal and neither --quiet nor --no-progress is given, so that cron logs
// and CI output stay clean.
type progress struct {
	bar *progressbar.ProgressBar
}

// progressWanted reports whether newProgress draws a bar: a command can skip
// work that only a bar needs.
func progressWanted(g *global) bool {
	f, ok := g.stderr.(*os.File)
	return !g.quiet && !g.noProgress && ok && term.IsTerminal(int(f.Fd()))
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
