package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/report"
)

// fixedReport is a report with every section filled, the same on every run.
func fixedReport() *report.Report {
	c := func(blobs, bytes int64) report.Count { return report.Count{Blobs: blobs, Bytes: bytes} }
	last := time.Date(2026, 11, 30, 8, 15, 0, 0, time.UTC)
	days := 1234.5
	s := &report.StoreReport{Store: "/srv/agent/.forge/files/inbound", Kind: "local",
		Stored: c(5, 5<<20), Referenced: c(3, 3<<20), Orphaned: c(2, 2<<20), Shared: c(1, 1<<20),
		TrashRuns: 1, InTrash: c(4, 4096), Marked: c(0, 0), Complete: true, Problems: []string{}}
	for i, a := range report.Ages {
		s.ByModified = append(s.ByModified, report.AgeBucket{Bucket: a.Name})
		s.ByLastReference = append(s.ByLastReference, report.AgeBucket{Bucket: a.Name})
		if i == 1 {
			s.ByModified[i].Referenced, s.ByModified[i].Orphaned = c(3, 3<<20), c(2, 2<<20)
			s.ByLastReference[i].Referenced = c(3, 3<<20)
		}
	}
	s.ByLastReference = append(s.ByLastReference, report.AgeBucket{Bucket: "unknown"}, report.AgeBucket{Bucket: "never", Orphaned: c(2, 2<<20)})
	s.ByMediaType = []report.TypeCount{{Type: "image/png", Count: c(4, 4<<20)}, {Type: "application/pdf", Count: c(1, 1<<20)}}
	for i, z := range report.Sizes {
		s.BySize = append(s.BySize, report.SizeClass{Class: z.Name})
		if i == 3 {
			s.BySize[i].Count = c(5, 5<<20)
		}
	}
	s.Growth = report.Growth{BytesPerDay: 58254, Filesystem: &report.Filesystem{Size: 100 << 30, Free: 40 << 30, DaysUntilFull: &days}}
	met := false
	s.Policies = []report.Policy{{Name: "refcount", Free: c(2, 2<<20)}, {Name: "age 7d", Free: c(5, 5<<20), Referenced: 3},
		{Name: "max-size 1.0 MiB", Free: c(2, 2<<20), CapMet: &met}}
	return &report.Report{Now: last, Stores: []*report.StoreReport{s}, Complete: true, Problems: []string{}, Rule: "forge: the task",
		Totals: report.Totals{Stored: c(5, 5<<20), Referenced: c(3, 3<<20), Orphaned: c(2, 2<<20), DanglingReferences: 1, DanglingBlobs: 1},
		Owners: []*report.OwnerStats{
			{ID: "t-1", Units: 1, References: 4, Referenced: c(2, 2<<20), Exclusive: c(1, 1<<20), LastActivity: &last},
			{ID: "slack:C1:2\x1b[31m", Agent: "codex", Units: 2, References: 2, Referenced: c(2, 2<<20), Exclusive: c(1, 1<<20)},
		},
		OwnerCount:   2,
		Unattributed: report.Unattributed{Units: 1, UnitList: []owner.Unit{{Source: "/s", Document: "/s/x.json"}}, TextOnly: c(1, 10)},
	}
}

const textGolden = `store /srv/agent/.forge/files/inbound (local): 5 blobs (5.0 MiB)
  referenced         3  3.0 MiB
  orphaned           2  2.0 MiB
  shared by owners   1  1.0 MiB
  in trash (1 runs)  4  4.0 KiB
  marked             0      0 B
  by age            modified: referenced  orphaned   last reference: referenced
    24h          0 B      0 B      0 B
    7d       3.0 MiB  2.0 MiB  3.0 MiB
    30d          0 B      0 B      0 B
    90d          0 B      0 B      0 B
    1y           0 B      0 B      0 B
    older        0 B      0 B      0 B
    unknown                        0 B
  by media type
    image/png        4  4.0 MiB
    application/pdf  1  1.0 MiB
  by size
    <16 KiB   0      0 B
    <256 KiB  0      0 B
    <1 MiB    0      0 B
    <16 MiB   5  5.0 MiB
    <256 MiB  0      0 B
    ≥256 MiB  0      0 B
  growth: 57 KiB/day over 90 days; file system 40 GiB free of 100 GiB, full in 1,234 days at that rate
  gc would free now
    refcount          2  2.0 MiB
    age 7d            5  5.0 MiB    3 referenced: their references dangle
    max-size 1.0 MiB  2  2.0 MiB    the cap is not met: referenced and young blobs exceed it
owners (forge: the task): 2 of 2, by referenced bytes
  OWNER                         UNITS  BLOBS  REFERENCED  EXCLUSIVE  LAST ACTIVITY
  t-1                           1      2      2.0 MiB     1.0 MiB    2026-11-30 08:15
  "slack:C1:2\x1b[31m" (codex)  2      2      2.0 MiB     1.0 MiB    -
  unattributed                  1      1      10 B        0 B        -
unattributed  /s/x.json
report: 1 stores, 5 blobs (5.0 MiB): 3 blobs (3.0 MiB) referenced, 2 blobs (2.0 MiB) orphaned; 2 owners; 1 dangling references
`

// TestReportTextGolden pins the terminal summary (without a terminal: no
// bars), control characters of an owner id escaped.
func TestReportTextGolden(t *testing.T) {
	var b bytes.Buffer
	if err := printReport(&b, fixedReport(), 20, false, false); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != textGolden {
		t.Errorf("got:\n%s\nwant:\n%s", got, textGolden)
	}
	b.Reset()
	printReport(&b, fixedReport(), 1, true, false)
	if !strings.Contains(b.String(), "  referenced         3  3.0 MiB  ████████████") || strings.Contains(b.String(), "slack") {
		t.Errorf("on a terminal, with --top 1:\n%s", b.String())
	}
}

// TestReportHTMLEscapes: owner ids and unit names are untrusted.
func TestReportHTMLEscapes(t *testing.T) {
	rep := fixedReport()
	rep.Owners[0].ID = `<script>alert(1)</script>"'&`
	rep.Unattributed.UnitList[0].Document = `<img src=x onerror=alert(1)>`
	page, err := renderReportHTML(&reportJSON{envelope: envelope{Schema: reportSchema, Version: "devel"}, Report: rep}, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script>alert", "<img src=x"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if !bytes.Contains(page, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) {
		t.Errorf("the owner id is not shown escaped")
	}
}

// TestReportTextQuiet pins -q on a report that is not ok: the problem lines
// (escaped) and the summary line, none of the tables, notes or owners.
func TestReportTextQuiet(t *testing.T) {
	rep := fixedReport()
	rep.Complete = false
	rep.Problems = []string{"session /s/cut.json: invalid JSON\x1b[2J"}
	rep.Notes = []string{"a note"}
	var b bytes.Buffer
	if err := printReport(&b, rep, 20, true, true); err != nil {
		t.Fatal(err)
	}
	want := `problem   "session /s/cut.json: invalid JSON\x1b[2J"
report: 1 stores, 5 blobs (5.0 MiB): 3 blobs (3.0 MiB) referenced, 2 blobs (2.0 MiB) orphaned; 2 owners; 1 dangling references; INCOMPLETE: 1 problems, counts are partial
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
