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

func newProgress(g *global, description string, total int64) *progress {
	f, ok := g.stderr.(*os.File)
	if g.quiet || g.noProgress || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowBytes(true),
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
