package metrics

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/mediactl/mediactl/pkg/outcome"
)

// value finds the one series of name carrying labels (all of them) and
// fails the test unless there is exactly one.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no %s in the file", name)
	}
	var found []float64
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		match := len(got) == len(labels)
		for k, v := range labels {
			match = match && got[k] == v
		}
		if match {
			found = append(found, m.GetGauge().GetValue())
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%v: %d series, want 1", name, labels, len(found))
	}
	return found[0]
}

func absent(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) {
	t.Helper()
	for _, m := range fams[name].GetMetric() {
		n := 0
		for _, l := range m.Label {
			if labels[l.GetName()] == l.GetValue() {
				n++
			}
		}
		if n == len(labels) {
			t.Fatalf("%s%v is in the file: %v", name, labels, m)
		}
	}
}

func read(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fams, err := Parse(data)
	if err != nil {
		t.Fatalf("the written file does not parse: %v\n%s", err, data)
	}
	return fams
}

func run(cmd, store string, dry bool, o outcome.Outcome, counts map[Gauge]int64) Report {
	return Report{Command: cmd, Store: store, DryRun: dry, Outcome: o, ExitCode: int(o), Duration: 1500 * time.Millisecond, Counts: counts}
}

func key(cmd, store string, dry bool) map[string]string {
	return map[string]string{"command": cmd, "store": store, "dry_run": map[bool]string{true: "true", false: "false"}[dry]}
}

func TestLastSuccessOnlyForARealOKRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mediactl.prom")
	t0 := time.Unix(1_700_000_000, 0)
	if err := Write(path, t0, run("gc", "/srv/a", false, outcome.OK, map[Gauge]int64{Removed: 3})); err != nil {
		t.Fatal(err)
	}
	stampKey := map[string]string{"command": "gc", "store": "/srv/a"}
	if v := value(t, read(t, path), string(lastSuccess), stampKey); v != 1_700_000_000 {
		t.Fatalf("last success = %v after an ok run", v)
	}
	// A dry run, a refused run and an incomplete run later: none moves it.
	for i, r := range []Report{
		run("gc", "/srv/a", true, outcome.OK, map[Gauge]int64{Planned: 9, Removed: 0}),
		run("gc", "/srv/a", false, outcome.Refused, nil),
		run("gc", "/srv/a", false, outcome.Incomplete, nil),
	} {
		if err := Write(path, t0.Add(time.Duration(i+1)*time.Hour), r); err != nil {
			t.Fatal(err)
		}
	}
	fams := read(t, path)
	if v := value(t, fams, string(lastSuccess), stampKey); v != 1_700_000_000 {
		t.Fatalf("last success = %v, moved by a run that did not do its job", v)
	}
	if v := value(t, fams, string(lastDryRun), stampKey); v != 1_700_003_600 {
		t.Fatalf("last dry run = %v, want the dry run's time", v)
	}
	// The dry run's series sit beside the real run's, not over them.
	if v := value(t, fams, string(Planned), key("gc", "/srv/a", true)); v != 9 {
		t.Fatalf("planned (dry run) = %v", v)
	}
	if v := value(t, fams, string(exitCode), key("gc", "/srv/a", false)); v != float64(outcome.Incomplete) {
		t.Fatalf("exit code of the real run = %v, want the last one's", v)
	}
	if v := value(t, fams, string(runOutcome), map[string]string{"command": "gc", "store": "/srv/a", "dry_run": "false", "outcome": "incomplete"}); v != 1 {
		t.Fatalf("outcome incomplete = %v", v)
	}
	absent(t, fams, string(runOutcome), map[string]string{"command": "gc", "store": "/srv/a", "dry_run": "false", "outcome": "ok"})
	// The incomplete run reported no removals: the ok run's 3 must not linger.
	absent(t, fams, string(Removed), key("gc", "/srv/a", false))
}

func TestTwoStoresTwoCommandsMergeBySeries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mediactl.prom")
	now := time.Unix(1_800_000_000, 0)
	steps := []Report{
		run("gc", "/srv/a", false, outcome.OK, map[Gauge]int64{Removed: 1}),
		run("gc", "s3://media?prefix=b/", false, outcome.OK, map[Gauge]int64{Removed: 2}),
		run("verify", "/srv/a", false, outcome.Found, map[Gauge]int64{Corrupt: 4}),
	}
	for _, r := range steps {
		if err := Write(path, now, r); err != nil {
			t.Fatal(err)
		}
	}
	fams := read(t, path)
	if a, b := value(t, fams, string(Removed), key("gc", "/srv/a", false)), value(t, fams, string(Removed), key("gc", "s3://media?prefix=b/", false)); a != 1 || b != 2 {
		t.Fatalf("removed = %v and %v, want 1 and 2 (one series per store)", a, b)
	}
	if v := value(t, fams, string(Corrupt), key("verify", "/srv/a", false)); v != 4 {
		t.Fatalf("corrupt = %v", v)
	}
	absent(t, fams, string(lastSuccess), map[string]string{"command": "verify"})
	// The same store again replaces its own series only.
	if err := Write(path, now, run("gc", "/srv/a", false, outcome.OK, map[Gauge]int64{Removed: 7})); err != nil {
		t.Fatal(err)
	}
	fams = read(t, path)
	if a, b := value(t, fams, string(Removed), key("gc", "/srv/a", false)), value(t, fams, string(Removed), key("gc", "s3://media?prefix=b/", false)); a != 7 || b != 2 {
		t.Fatalf("removed = %v and %v after a rerun on the first store, want 7 and 2", a, b)
	}
}

func TestForeignSeriesSurviveAndLegacyGCGoes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mediactl.prom")
	old := "# HELP mediactl_gc_blobs_deleted Blobs deleted permanently by the last run.\n# TYPE mediactl_gc_blobs_deleted gauge\nmediactl_gc_blobs_deleted 5\n" +
		"# TYPE backup_age_seconds gauge\nbackup_age_seconds{job=\"restic\"} 12\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, time.Now(), run("scan", "", false, outcome.OK, map[Gauge]int64{Dangling: 0})); err != nil {
		t.Fatal(err)
	}
	fams := read(t, path)
	if v := value(t, fams, "backup_age_seconds", map[string]string{"job": "restic"}); v != 12 {
		t.Fatalf("a series of another writer changed: %v", v)
	}
	if _, ok := fams["mediactl_gc_blobs_deleted"]; ok {
		t.Fatal("the unlabelled gc series of the earlier format survived")
	}
}

func TestConcurrentWritersKeepEachOthersSeries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mediactl.prom")
	var wg sync.WaitGroup
	stores := []string{"/a", "/b", "/c", "/d", "/e", "/f"}
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Write(path, time.Now(), run("verify", s, false, outcome.OK, map[Gauge]int64{Corrupt: 0})); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	fams := read(t, path)
	for _, s := range stores {
		value(t, fams, string(Corrupt), key("verify", s, false))
	}
}

func TestRefusesToOverwriteAFileItCannotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.prom")
	junk := "this is { not metrics\n"
	if err := os.WriteFile(path, []byte(junk), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(path, time.Now(), run("gc", "/a", false, outcome.OK, nil))
	if !errors.Is(err, ErrNotMetrics) {
		t.Fatalf("err = %v, want ErrNotMetrics", err)
	}
	if data, _ := os.ReadFile(path); string(data) != junk {
		t.Fatalf("the file was changed: %q", data)
	}
}

func TestHostileStoreLabelRoundTrips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mediactl.prom")
	store := "/srv/we\"ird\\dir\nname\xff}"
	if err := Write(path, time.Now(), run("scan", store, false, outcome.OK, map[Gauge]int64{Dangling: 2})); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, time.Now(), run("scan", store, false, outcome.OK, map[Gauge]int64{Dangling: 3})); err != nil {
		t.Fatal(err)
	}
	fams := read(t, path)
	want := strings.ToValidUTF8(store, "\uFFFD")
	if v := value(t, fams, string(Dangling), key("scan", want, false)); v != 3 {
		t.Fatalf("dangling = %v", v)
	}
}

func TestUnknownGaugeIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.prom")
	var ug *UnknownGaugeError
	if err := Write(path, time.Now(), run("gc", "/a", false, outcome.OK, map[Gauge]int64{"mediactl_made_up": 1})); !errors.As(err, &ug) {
		t.Fatalf("err = %v", err)
	}
	if err := Write(path, time.Now(), run("gc", "/a", false, outcome.OK, map[Gauge]int64{lastSuccess: 1})); !errors.As(err, &ug) {
		t.Fatalf("a count may not set the last success: err = %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused write created the file: %v", err)
	}
}

func FuzzParseMerge(f *testing.F) {
	f.Add([]byte("# TYPE x gauge\nx{a=\"b\"} 1\n"))
	f.Add([]byte("mediactl_exit_code{command=\"gc\",store=\"/a\",dry_run=\"false\"} 0\n"))
	f.Add([]byte("# TYPE mediactl_corrupt_blobs counter\nmediactl_corrupt_blobs 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fams, err := Parse(data)
		if err != nil {
			return
		}
		Merge(fams, time.Unix(1, 0), run("verify", "/a", false, outcome.OK, map[Gauge]int64{Corrupt: 1}))
		var buf bytes.Buffer
		if err := Encode(&buf, fams); err != nil {
			return // a family of the input the encoder refuses
		}
		again, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("merged output does not parse: %v\n%s", err, buf.String())
		}
		if v := again[string(Corrupt)]; v == nil || v.GetType() != dto.MetricType_GAUGE {
			t.Fatalf("the report's gauge is missing after the merge:\n%s", buf.String())
		}
	})
}

// The shards of a split are series of their own beside the whole store's,
// each with its own last success.
func TestShardSeries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mediactl.prom")
	now := time.Unix(1_800_000_000, 0)
	for i, shard := range []string{"0/2", "1/2", ""} {
		r := Report{Command: "gc", Store: "/srv/a", Shard: shard, Outcome: outcome.OK, Counts: map[Gauge]int64{Removed: int64(i + 1)}}
		if err := Write(path, now.Add(time.Duration(i)*time.Second), r); err != nil {
			t.Fatal(err)
		}
	}
	fams, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	removed := fams[string(Removed)]
	if removed == nil || len(removed.Metric) != 3 {
		t.Fatalf("removed series: %v, want 3 (two shards and the whole store)", removed)
	}
	for i, shard := range []string{"0/2", "1/2", ""} {
		want := map[string]string{"command": "gc", "store": "/srv/a", "dry_run": "false"}
		if shard != "" {
			want["shard"] = shard
		}
		found := false
		for _, m := range removed.Metric {
			got := map[string]string{}
			for _, l := range m.Label {
				got[l.GetName()] = l.GetValue()
			}
			if maps.Equal(got, want) {
				found = true
				if v := m.GetGauge().GetValue(); v != float64(i+1) {
					t.Errorf("shard %q: removed %v, want %d", shard, v, i+1)
				}
			}
		}
		if !found {
			t.Errorf("no series with labels %v", want)
		}
	}
	if n := len(fams["mediactl_last_success_timestamp_seconds"].Metric); n != 3 {
		t.Errorf("%d last-success series, want 3", n)
	}
}
