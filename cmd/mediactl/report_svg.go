package main

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mediactl/mediactl/pkg/report"
)

// The few SVG primitives the HTML page draws with: rectangles, text and
// one polyline, laid out here and written by html/template (which escapes
// every label and tooltip: owner ids and keys are untrusted).

type chart struct {
	W, H  int
	Label string // the chart's accessible name
	Rects []svgRect
	Texts []svgText
	Line  string // polyline points, "x,y x,y …"
}

type svgRect struct {
	X, Y, W, H float64
	Class, Tip string
}

type svgText struct {
	X, Y          float64
	Anchor, Class string
	S             string
}

// short cuts a label to n characters, with an ellipsis.
func short(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// ageChart is a stacked bar per age bucket: referenced below, orphaned on
// top.
func ageChart(label string, buckets []report.AgeBucket) chart {
	c := chart{W: 520, H: 230, Label: label}
	const left, bottom, top = 10.0, 40.0, 24.0
	var most int64 = 1
	for _, b := range buckets {
		most = max(most, b.Referenced.Bytes+b.Orphaned.Bytes)
	}
	slot := (float64(c.W) - 2*left) / float64(len(buckets))
	plot := float64(c.H) - bottom - top
	for i, b := range buckets {
		x := left + float64(i)*slot + slot*0.15
		w := slot * 0.7
		y := float64(c.H) - bottom
		for _, part := range []struct {
			n     report.Count
			class string
			what  string
		}{{b.Referenced, "ref", "referenced"}, {b.Orphaned, "orph", "orphaned"}} {
			h := plot * float64(part.n.Bytes) / float64(most)
			if h > 0 {
				y -= h
				c.Rects = append(c.Rects, svgRect{X: x, Y: y, W: w, H: h, Class: part.class,
					Tip: fmt.Sprintf("%s: %s %s blobs (%s)", b.Bucket, part.what, commaOf(part.n.Blobs), ibytes(part.n.Bytes))})
			}
		}
		c.Texts = append(c.Texts, svgText{X: x + w/2, Y: float64(c.H) - bottom + 16, Anchor: "middle", S: b.Bucket},
			svgText{X: x + w/2, Y: y - 4, Anchor: "middle", Class: "val", S: ibytes(b.Referenced.Bytes + b.Orphaned.Bytes)})
	}
	c.Texts = append(c.Texts, svgText{X: left, Y: float64(c.H) - 6, Class: "key ref-key", S: "■ referenced"},
		svgText{X: left + 110, Y: float64(c.H) - 6, Class: "key orph-key", S: "■ orphaned"})
	return c
}

// hbar is one bar of a horizontal bar chart: value, of which part is drawn
// darker (an owner's exclusive bytes).
type hbar struct {
	Label       string
	Value, Part int64
	Tip         string
}

func hbarChart(label string, bars []hbar) chart {
	const row, labelW, right = 24.0, 190.0, 80.0
	c := chart{W: 620, H: int(row*float64(len(bars))) + 10, Label: label}
	var most int64 = 1
	for _, b := range bars {
		most = max(most, b.Value)
	}
	plot := float64(c.W) - labelW - right
	for i, b := range bars {
		y := 5 + float64(i)*row
		w := plot * float64(b.Value) / float64(most)
		c.Texts = append(c.Texts, svgText{X: labelW - 6, Y: y + 15, Anchor: "end", S: short(b.Label, 28)})
		if w > 0 {
			c.Rects = append(c.Rects, svgRect{X: labelW, Y: y + 3, W: w, H: row - 8, Class: "ref", Tip: b.Tip})
		}
		if p := plot * float64(b.Part) / float64(most); p > 0 {
			c.Rects = append(c.Rects, svgRect{X: labelW, Y: y + 3, W: p, H: row - 8, Class: "excl", Tip: b.Tip})
		}
		c.Texts = append(c.Texts, svgText{X: labelW + w + 6, Y: y + 15, Class: "val", S: ibytes(b.Value)})
	}
	return c
}

// growthChart is the bytes the store gained, added up day by day over the
// window: a line that climbs as fast as the store grows.
func growthChart(label string, days []report.Period) chart {
	c := chart{W: 620, H: 220, Label: label}
	const left, right, top, bottom = 70.0, 20.0, 16.0, 30.0
	var total int64
	for _, d := range days {
		total += d.Bytes
	}
	most := float64(max(total, 1))
	plotW, plotH := float64(c.W)-left-right, float64(c.H)-top-bottom
	var pts []string
	var sum int64
	for i, d := range days {
		sum += d.Bytes
		x := left + plotW*float64(i)/float64(max(len(days)-1, 1))
		y := top + plotH*(1-float64(sum)/most)
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
	}
	c.Line = strings.Join(pts, " ")
	c.Rects = append(c.Rects, svgRect{X: left, Y: top, W: plotW, H: plotH, Class: "frame", Tip: fmt.Sprintf("%s added in %d days", ibytes(total), len(days))})
	if len(days) > 0 {
		c.Texts = append(c.Texts,
			svgText{X: left, Y: float64(c.H) - 10, Anchor: "start", S: days[0].Start},
			svgText{X: left + plotW, Y: float64(c.H) - 10, Anchor: "end", S: days[len(days)-1].Start})
	}
	c.Texts = append(c.Texts, svgText{X: left - 6, Y: top + 10, Anchor: "end", Class: "val", S: ibytes(total)},
		svgText{X: left - 6, Y: top + plotH, Anchor: "end", Class: "val", S: "0 B"})
	return c
}
