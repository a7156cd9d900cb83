package main

import (
	"bytes"
	"html/template"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/mediactl/mediactl/pkg/report"
)

// The HTML page of `report --html FILE`: one self-contained file (no
// network, no external script or font; a Content-Security-Policy that
// forbids any fetch), inline SVG charts drawn by report_svg.go, a sortable
// owner table with a small inline script, light and dark by
// prefers-color-scheme, a print style. html/template escapes every string
// from the stores and sessions.

type htmlPage struct {
	Doc      *reportJSON
	Version  string
	Now      string
	Stores   []htmlStore
	Owners   []*report.OwnerStats
	Top      int
	Cut      bool
	OwnersBy chart
}

type htmlStore struct {
	*report.StoreReport
	AgeChart     chart
	LastRefChart chart
	GrowthChart  chart
	PolicyChart  chart
	TypeChart    chart
}

func commaOf(n int64) string { return humanize.Comma(n) }

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"ibytes": ibytes,
	"comma":  commaOf,
	"days": func(d *float64) string {
		if d == nil {
			return "not growing"
		}
		if *d > 36500 {
			return "more than 100 years"
		}
		return humanize.Comma(int64(*d)) + " days"
	},
	"when": func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04")
	},
	"unix": func(t *time.Time) int64 {
		if t == nil {
			return 0
		}
		return t.Unix()
	},
	"pct": func(part, whole int64) string {
		if whole <= 0 {
			return "0%"
		}
		return humanize.FtoaWithDigits(100*float64(part)/float64(whole), 1) + "%"
	},
	"add":    func(a, b int64) int64 { return a + b },
	"int64":  func(u uint64) int64 { return int64(min(u, 1<<62)) },
	"perday": func(f float64) string { return ibytes(int64(f)) },
}).Parse(reportHTML))

// renderReportHTML is the page for a report, its owner lists cut at top
// (0: all).
func renderReportHTML(doc *reportJSON, top int) ([]byte, error) {
	rep := doc.Report
	p := htmlPage{Doc: doc, Version: doc.Version, Now: rep.Now.UTC().Format("2006-01-02 15:04 UTC"), Owners: rep.Owners, Top: top}
	if top > 0 && len(p.Owners) > top {
		p.Owners, p.Cut = p.Owners[:top], true
	}
	var bars []hbar
	for _, o := range p.Owners {
		bars = append(bars, hbar{Label: o.ID, Value: o.Referenced.Bytes, Part: o.Exclusive.Bytes,
			Tip: o.ID + ": " + ibytes(o.Referenced.Bytes) + " referenced, " + ibytes(o.Exclusive.Bytes) + " exclusive"})
	}
	u := rep.Unattributed
	if n := u.Referenced.Bytes + u.TextOnly.Bytes; n > 0 {
		bars = append(bars, hbar{Label: "(unattributed)", Value: n, Part: u.Exclusive.Bytes, Tip: "unattributed: " + ibytes(n)})
	}
	p.OwnersBy = hbarChart("referenced bytes by owner (exclusive darker)", bars)
	for _, s := range rep.Stores {
		hs := htmlStore{StoreReport: s,
			AgeChart:     ageChart("bytes by age of modification", s.ByModified),
			LastRefChart: ageChart("bytes by age of last reference", s.ByLastReference),
			GrowthChart:  growthChart("bytes added over the last 90 days", s.Growth.Days)}
		var pol, types []hbar
		for _, x := range s.Policies {
			pol = append(pol, hbar{Label: x.Name, Value: x.Free.Bytes, Tip: x.Name + ": " + commaOf(x.Free.Blobs) + " blobs, " + ibytes(x.Free.Bytes)})
		}
		for _, t := range s.ByMediaType {
			types = append(types, hbar{Label: t.Type, Value: t.Bytes, Tip: t.Type + ": " + commaOf(t.Blobs) + " blobs"})
		}
		hs.PolicyChart = hbarChart("what each gc policy would free now", pol)
		hs.TypeChart = hbarChart("bytes by media type", types)
		p.Stores = append(p.Stores, hs)
	}
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeReportHTML renders the page and writes it atomically.
func writeReportHTML(path string, doc *reportJSON, top int) error {
	b, err := renderReportHTML(doc, top)
	if err != nil {
		return err
	}
	return writeReportFile(path, b)
}
