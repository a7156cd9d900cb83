package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/internal/realworld"
)

const chromiumPath = "/usr/bin/chromium"

// chromium runs Debian's Chromium headless on page with extra arguments
// and returns its stdout.
func chromium(t *testing.T, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--window-size=1200,3000"}
	cmd := exec.CommandContext(ctx, chromiumPath, append(append(base, args...), "file://"+page)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}

// TestReportHTMLInBrowser renders the page of a report on the forge store
// in Chromium: the screenshot is not blank and shows the charts' colours,
// and every number the DOM carries is the JSON report's of the same run.
func TestReportHTMLInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is missing (apt-get install -y chromium): %v", err)
		}
		t.Skip("no chromium (apt-get install -y chromium); CI=true requires it")
	}
	root, _ := realworld.Forge(t)
	page := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	code := run([]string{"mediactl", "report", "--layout", "forge", "--root", root, "--html", page, "-o", "json", "--top", "10"}, &stdout, &stderr)
	if code != 1 { // the store has dangling references: found
		t.Fatalf("exit %d: %s", code, stderr.Bytes())
	}
	var rep struct {
		OwnerCount int `json:"owner_count"`
		Totals     map[string]json.RawMessage
		Owners     []struct {
			ID         string
			Referenced struct{ Bytes int64 }
			Exclusive  struct{ Bytes int64 }
		}
		Stores []struct {
			Stored   struct{ Bytes int64 }
			Policies []struct {
				Name string
				Free struct{ Blobs, Bytes int64 }
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}

	shot := filepath.Join(t.TempDir(), "shot.png")
	chromium(t, page, "--screenshot="+shot, "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	colours := map[[3]uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}]++
		}
	}
	if len(colours) < 20 {
		t.Fatalf("the screenshot is blank: %d colours", len(colours))
	}
	// The bars: referenced (#3b73c4 light, #6a9de6 dark), orphaned
	// (#d9822b, #f0a65a).
	bars := colours[[3]uint32{0x3b, 0x73, 0xc4}] + colours[[3]uint32{0x6a, 0x9d, 0xe6}]
	orph := colours[[3]uint32{0xd9, 0x82, 0x2b}] + colours[[3]uint32{0xf0, 0xa6, 0x5a}]
	if bars < 500 || orph < 20 {
		t.Errorf("the charts are not drawn: %d pixels of referenced bars, %d of orphaned", bars, orph)
	}

	dom := string(chromium(t, page, "--dump-dom"))
	value := func(id string) int64 {
		m := regexp.MustCompile(`id="` + id + `"[^>]*data-value="(\d+)"|data-value="(\d+)"[^>]*id="` + id + `"`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("no %s in the DOM", id)
		}
		n, _ := strconv.ParseInt(m[1]+m[2], 10, 64)
		return n
	}
	for id, field := range map[string]string{"total-stored-bytes": "stored", "total-referenced-bytes": "referenced", "total-orphaned-bytes": "orphaned", "total-shared-bytes": "shared"} {
		var c struct{ Bytes int64 }
		json.Unmarshal(rep.Totals[field], &c)
		if got := value(id); got != c.Bytes {
			t.Errorf("%s: the page says %d, the JSON %d", id, got, c.Bytes)
		}
	}
	var dangling int64
	json.Unmarshal(rep.Totals["dangling_references"], &dangling)
	if got := value("total-dangling"); got != dangling {
		t.Errorf("dangling: page %d, JSON %d", got, dangling)
	}
	if got := value("owner-count"); got != int64(rep.OwnerCount) {
		t.Errorf("owner count: page %d, JSON %d", got, rep.OwnerCount)
	}
	// The owner table: the ten largest, in the JSON's order, same bytes.
	rows := regexp.MustCompile(`<tr class="owner"><td data-value="([^"]*)">.*?class="referenced"[^>]*>|<tr class="owner">`).FindAllString(dom, -1)
	cells := regexp.MustCompile(`<tr class="owner"><td data-value="([^"]*)">.*?<td data-value="(\d+)" class="referenced">.*?<td data-value="(\d+)" class="exclusive">`).FindAllStringSubmatch(dom, -1)
	if len(rows) != 10 || len(cells) != 10 {
		t.Fatalf("%d owner rows (%d read) in the page, want 10", len(rows), len(cells))
	}
	for i, c := range cells {
		o := rep.Owners[i]
		if c[1] != o.ID || c[2] != strconv.FormatInt(o.Referenced.Bytes, 10) || c[3] != strconv.FormatInt(o.Exclusive.Bytes, 10) {
			t.Errorf("owner row %d: page %v, JSON %+v", i, c[1:], o)
		}
	}
	// Each store's policies, in order.
	stores := strings.Split(dom, `<section class="store"`)[1:]
	if len(stores) != len(rep.Stores) {
		t.Fatalf("%d stores in the page, %d in the JSON", len(stores), len(rep.Stores))
	}
	for i, s := range stores {
		if n := strings.Count(s, "<svg"); n != 5 {
			t.Errorf("store %d: %d charts, want 5", i, n)
		}
		pol := regexp.MustCompile(`<tr class="policy"><td>([^<]*)(?:<span[^>]*>[^<]*</span>)?</td><td data-value="(\d+)">[^<]*</td><td data-value="(\d+)">`).FindAllStringSubmatch(s, -1)
		if len(pol) != len(rep.Stores[i].Policies) {
			t.Fatalf("store %d: %d policies in the page, %d in the JSON", i, len(pol), len(rep.Stores[i].Policies))
		}
		for j, p := range pol {
			want := rep.Stores[i].Policies[j]
			if strings.TrimSpace(p[1]) != want.Name || p[2] != strconv.FormatInt(want.Free.Blobs, 10) || p[3] != strconv.FormatInt(want.Free.Bytes, 10) {
				t.Errorf("store %d policy %d: page %v, JSON %+v", i, j, p[1:], want)
			}
		}
	}
	// Self-contained: nothing to fetch.
	if m := regexp.MustCompile(`(?i)\s(src|href)=|url\(|@import`).FindString(dom); m != "" {
		t.Errorf("the page fetches something: %q", m)
	}
}
