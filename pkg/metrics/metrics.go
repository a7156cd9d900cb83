// Package metrics records what a mediactl run came to as Prometheus gauges in
// the text exposition format, for node_exporter's textfile collector.
//
// One file may be shared by several runs: two cron jobs on two stores, or
// verify and gc on one store. [Write] therefore merges by series: it reads
// the file, replaces only the series of the runs it is given (identified by
// their command, store and dry_run labels) and keeps every other series as it
// was. The file is replaced atomically (temporary file, fsync, rename), so
// the collector never reads half of it, and writers on one host take turns
// through a lock file beside it, so none of them loses another's series.
//
// mediactl_last_success_timestamp_seconds moves only for a run that did its
// job (not a dry run) and came to [outcome.OK]; a dry run that came to OK
// moves mediactl_last_dry_run_timestamp_seconds instead. An alert on the
// first therefore fires for a cron job that forgot --delete.
package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/mediactl/mediactl/pkg/outcome"
)

// Gauge names one count a run reports. Only the gauges below are written.
type Gauge string

// The counts an alert needs. A command reports those that apply to it; a
// gauge a run does not report is absent from its series (not zero).
const (
	Blobs        Gauge = "mediactl_blobs"
	Bytes        Gauge = "mediactl_bytes"
	Checked      Gauge = "mediactl_checked_blobs"
	Referenced   Gauge = "mediactl_referenced_blobs"
	References   Gauge = "mediactl_references"
	Corrupt      Gauge = "mediactl_corrupt_blobs"
	Unreadable   Gauge = "mediactl_unreadable_blobs"
	Dangling     Gauge = "mediactl_dangling_references"
	Orphans      Gauge = "mediactl_orphan_blobs"
	OrphanBytes  Gauge = "mediactl_orphan_bytes"
	Planned      Gauge = "mediactl_planned_blobs"
	PlannedBytes Gauge = "mediactl_planned_bytes"
	Removed      Gauge = "mediactl_removed_blobs"
	RemovedBytes Gauge = "mediactl_removed_bytes"
	Trashed      Gauge = "mediactl_trashed_blobs"
	Deleted      Gauge = "mediactl_deleted_blobs"
	Copied       Gauge = "mediactl_copied_blobs"
	CopiedBytes  Gauge = "mediactl_copied_bytes"
	Conflicts    Gauge = "mediactl_conflict_blobs"
	Failed       Gauge = "mediactl_failed"
	Problems     Gauge = "mediactl_problems"
	StillLocal   Gauge = "mediactl_still_local_references"
	Unresolved   Gauge = "mediactl_unresolved_references"
	// Written by report: the space, its growth, and who holds it.
	ReferencedBytes   Gauge = "mediactl_referenced_bytes"
	GrowthBytesPerDay Gauge = "mediactl_growth_bytes_per_day"
	DaysUntilFull     Gauge = "mediactl_days_until_full"
	OwnerReferenced   Gauge = "mediactl_owner_referenced_bytes"
	OwnerExclusive    Gauge = "mediactl_owner_exclusive_bytes"
	Quarantined       Gauge = "mediactl_quarantined_blobs"
	Restored          Gauge = "mediactl_restored_blobs"
	Marked            Gauge = "mediactl_marked_blobs"
	exitCode          Gauge = "mediactl_exit_code"
	duration          Gauge = "mediactl_duration_seconds"
	runOutcome        Gauge = "mediactl_outcome"
	lastRun           Gauge = "mediactl_last_run_timestamp_seconds"
	lastSuccess       Gauge = "mediactl_last_success_timestamp_seconds"
	lastDryRun        Gauge = "mediactl_last_dry_run_timestamp_seconds"
	labelCommand            = "command"
	labelStore              = "store"
	labelDryRun             = "dry_run"
	labelShard              = "shard"
	labelOutcome            = "outcome"
	labelOwner              = "owner"
	legacyGCPrefix          = "mediactl_gc_"
)

var help = map[Gauge]string{
	Blobs:             "Blobs in the store when the run listed it.",
	Bytes:             "Bytes of those blobs.",
	Checked:           "Blobs the run checked (verify: the selected subset or sample).",
	Referenced:        "Blobs that sessions refer to.",
	References:        "References the run read in the sessions.",
	Corrupt:           "Blobs whose content does not hash to their name.",
	Unreadable:        "Blobs the run could not read.",
	Dangling:          "Session references whose blob is missing from the store.",
	Orphans:           "Blobs no session refers to.",
	OrphanBytes:       "Bytes of those blobs.",
	Planned:           "Blobs the run planned to act on (gc: candidates; migrate --dry-run: blobs it would copy).",
	PlannedBytes:      "Bytes of those blobs.",
	Removed:           "Blobs the run removed (moved to the trash or deleted); 0 in a dry run.",
	RemovedBytes:      "Bytes of those blobs.",
	Trashed:           "Blobs the run moved to the trash.",
	Deleted:           "Blobs the run deleted permanently.",
	Copied:            "Blobs the run copied and proved in the destination; 0 in a dry run.",
	CopiedBytes:       "Bytes of those blobs.",
	Conflicts:         "Blobs whose destination key holds other content.",
	Failed:            "Items the run failed on (removals, uploads, moves).",
	Problems:          "Sources, documents or listings the run could not read in full.",
	StillLocal:        "Session references still pointing at local copies of migrated blobs.",
	Unresolved:        "Session references to copies that do not lead to the proven copy as the runtime reads them.",
	ReferencedBytes:   "Bytes of the blobs sessions name.",
	GrowthBytesPerDay: "Mean bytes per day the store grew by over the last 90 days (report).",
	DaysUntilFull:     "Days until the local store's file system is full at that growth (report; absent when it does not grow).",
	OwnerReferenced:   "Bytes of the blobs an owner's session units name (report; the top owners by exclusive bytes only).",
	OwnerExclusive:    "Bytes only that owner's session units name: what forgetting it would free (report; the top owners only).",
	Quarantined:       "Corrupt blobs moved to the quarantine.",
	Marked:            "Blobs a run on a bucket marked for a later run to delete (gc --delete).",
	Restored:          "Trashed blobs the run put back because a session names them (one saved during the run, or since the run that trashed them).",
	exitCode:          "Exit code of the run.",
	duration:          "Duration of the run in seconds.",
	runOutcome:        "1 for the outcome of the run: ok, found, refused, incomplete or interrupted.",
	lastRun:           "Unix time the run ended.",
	lastSuccess:       "Unix time of the last run that did its job (not a dry run) with outcome ok.",
	lastDryRun:        "Unix time of the last dry run with outcome ok.",
}

// Gauges lists every gauge a run may write, sorted by name: alert rules and
// dashboards can be checked against it.
func Gauges() []Gauge {
	out := make([]Gauge, 0, len(help))
	for g := range help {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// Report is one run on one store: one series of each gauge it reports.
type Report struct {
	// Command is the mediactl command: scan, verify, gc, migrate.
	Command string
	// Store names the store in the store label: its redacted location, or
	// the name the operator chose. Two reports of one command with one Store
	// are the same series.
	Store string
	// Shard is the part of the store the run worked on, "K/N": the shards of
	// one split are series of their own (shard="3/16"). Empty for the whole
	// store, whose series carry no shard label.
	Shard string
	// DryRun is set for a run that changed nothing on purpose; its series
	// carry dry_run="true" and it never moves last_success.
	DryRun   bool
	Outcome  outcome.Outcome
	ExitCode int
	Duration time.Duration
	// Counts are the gauges the command reports, by name.
	Counts map[Gauge]int64
	// Owners are series of the same run with an owner label (report's top
	// owners): keep them few, each is a series of its own.
	Owners []OwnerCounts
}

// OwnerCounts are the gauges of one owner.
type OwnerCounts struct {
	Owner  string
	Counts map[Gauge]int64
}

// Succeeded says whether the run moves mediactl_last_success_timestamp_seconds.
func (r Report) Succeeded() bool { return !r.DryRun && r.Outcome == outcome.OK }

// UnknownGaugeError is returned for a count whose name is not one of the
// package's gauges.
type UnknownGaugeError struct{ Gauge Gauge }

func (e *UnknownGaugeError) Error() string { return fmt.Sprintf("unknown gauge %q", string(e.Gauge)) }

// ErrNotMetrics is wrapped by Write's error when the existing file is not in
// the Prometheus text format: it is left as it is rather than overwritten,
// since it may not be mediactl's.
var ErrNotMetrics = errors.New("not a Prometheus text-format file")

// Write merges the reports' series into the file at path (created if
// missing) and replaces it atomically. now is the time the runs ended.
func Write(path string, now time.Time, reports ...Report) error {
	for _, r := range reports {
		if r.Command == "" {
			return errors.New("metrics: a report without a command")
		}
		for g := range r.Counts {
			if _, ok := help[g]; !ok || isRunGauge(g) {
				return &UnknownGaugeError{Gauge: g}
			}
		}
		for _, o := range r.Owners {
			for g := range o.Counts {
				if _, ok := help[g]; !ok || isRunGauge(g) {
					return &UnknownGaugeError{Gauge: g}
				}
			}
		}
	}
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	defer unlock()
	families, err := Read(path)
	if err != nil {
		return err
	}
	Merge(families, now, reports...)
	var buf bytes.Buffer
	if err := Encode(&buf, families); err != nil {
		return err
	}
	return writeAtomic(path, buf.Bytes())
}

// Read parses the file at path; a missing file has no families.
func Read(path string) (map[string]*dto.MetricFamily, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*dto.MetricFamily{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	families, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return families, nil
}

// Parse reads the text format.
func Parse(data []byte) (families map[string]*dto.MetricFamily, err error) {
	defer func() {
		// The parser of prometheus/common v0.71 dereferences nil on some
		// malformed input ("# TYPE a gauge\n{}0"): a bad file is an error,
		// never a crash.
		if r := recover(); r != nil {
			families, err = nil, fmt.Errorf("%w: %v", ErrNotMetrics, r)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err = p.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotMetrics, err)
	}
	return families, nil
}

// Merge replaces in families the series of the reports: every series of the
// run gauges that carries a report's command, store and dry_run labels goes,
// and the report's own are added. The last success and last dry run
// timestamps, labelled by command and store only, are replaced only when the
// report moves them. Series of mediactl's earlier unlabelled gc metrics
// (mediactl_gc_*) are dropped: their values belong to no store.
func Merge(families map[string]*dto.MetricFamily, now time.Time, reports ...Report) {
	for name, f := range families {
		if strings.HasPrefix(name, legacyGCPrefix) && unlabelled(f) {
			delete(families, name)
		}
	}
	stamp := float64(now.UnixMilli()) / 1000
	for _, r := range reports {
		store := strings.ToValidUTF8(r.Store, "\uFFFD")
		// The shard label is empty (absent) for the whole store: a series
		// matches the key only when it has the same shard or none.
		key := []*dto.LabelPair{
			label(labelCommand, r.Command), label(labelStore, store), label(labelShard, r.Shard), label(labelDryRun, fmt.Sprint(r.DryRun)),
		}
		// A gauge an earlier run of this key reported and this run does not
		// would otherwise keep its stale value.
		for name, f := range families {
			if !isRunGauge(Gauge(name)) && !isCount(Gauge(name)) {
				continue
			}
			f.Metric = dropSeries(f.Metric, key)
			if len(f.Metric) == 0 {
				delete(families, name)
			}
		}
		set := func(g Gauge, v float64, extra ...*dto.LabelPair) {
			put(families, g, append(present(key), extra...), v)
		}
		for g, v := range r.Counts {
			set(g, float64(v))
		}
		for _, o := range r.Owners {
			for g, v := range o.Counts {
				set(g, float64(v), label(labelOwner, strings.ToValidUTF8(o.Owner, "\uFFFD")))
			}
		}
		set(exitCode, float64(r.ExitCode))
		set(duration, r.Duration.Seconds())
		set(runOutcome, 1, label(labelOutcome, r.Outcome.String()))
		set(lastRun, stamp)
		stampKey := key[:3]
		switch {
		case r.Succeeded():
			replace(families, lastSuccess, stampKey, stamp)
		case r.DryRun && r.Outcome == outcome.OK:
			replace(families, lastDryRun, stampKey, stamp)
		}
	}
	for _, f := range families {
		sortSeries(f.Metric)
	}
}

// Encode writes the families in the text format, sorted by name.
func Encode(buf *bytes.Buffer, families map[string]*dto.MetricFamily) error {
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := expfmt.MetricFamilyToText(buf, families[n]); err != nil {
			return fmt.Errorf("encode %s: %w", n, err)
		}
	}
	return nil
}

func isRunGauge(g Gauge) bool {
	switch g {
	case exitCode, duration, runOutcome, lastRun, lastSuccess, lastDryRun:
		return true
	}
	return false
}

func isCount(g Gauge) bool {
	_, ok := help[g]
	return ok && !isRunGauge(g)
}

func label(name, value string) *dto.LabelPair {
	return &dto.LabelPair{Name: proto.String(name), Value: proto.String(value)}
}

func unlabelled(f *dto.MetricFamily) bool {
	for _, m := range f.Metric {
		if len(m.Label) > 0 {
			return false
		}
	}
	return true
}

// present is labels without those of empty value, which the text format
// would write but which mean "no such label".
func present(labels []*dto.LabelPair) []*dto.LabelPair {
	out := make([]*dto.LabelPair, 0, len(labels))
	for _, l := range labels {
		if l.GetValue() != "" {
			out = append(out, l)
		}
	}
	return out
}

// hasLabels says whether m carries every one of want; a wanted label of
// empty value is one m must not carry (or carry empty).
func hasLabels(m *dto.Metric, want []*dto.LabelPair) bool {
	for _, w := range want {
		found := w.GetValue() == ""
		for _, l := range m.Label {
			if l.GetName() == w.GetName() {
				found = l.GetValue() == w.GetValue()
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func dropSeries(ms []*dto.Metric, key []*dto.LabelPair) []*dto.Metric {
	out := ms[:0]
	for _, m := range ms {
		if !hasLabels(m, key) {
			out = append(out, m)
		}
	}
	return out
}

func family(families map[string]*dto.MetricFamily, g Gauge) *dto.MetricFamily {
	f := families[string(g)]
	if f == nil || f.GetType() != dto.MetricType_GAUGE {
		// A family of another type under our name cannot hold a gauge: ours
		// replaces it.
		f = &dto.MetricFamily{Name: proto.String(string(g)), Help: proto.String(help[g]), Type: dto.MetricType_GAUGE.Enum()}
		families[string(g)] = f
	}
	return f
}

func put(families map[string]*dto.MetricFamily, g Gauge, labels []*dto.LabelPair, v float64) {
	f := family(families, g)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	f.Metric = append(f.Metric, &dto.Metric{Label: labels, Gauge: &dto.Gauge{Value: proto.Float64(v)}})
}

func replace(families map[string]*dto.MetricFamily, g Gauge, key []*dto.LabelPair, v float64) {
	f := family(families, g)
	kept := f.Metric[:0]
	for _, m := range f.Metric {
		if !(len(m.Label) == len(present(key)) && hasLabels(m, key)) {
			kept = append(kept, m)
		}
	}
	f.Metric = kept
	put(families, g, present(key), v)
}

func sortSeries(ms []*dto.Metric) {
	for _, m := range ms {
		sort.Slice(m.Label, func(i, j int) bool { return m.Label[i].GetName() < m.Label[j].GetName() })
	}
	sort.SliceStable(ms, func(i, j int) bool { return seriesKey(ms[i]) < seriesKey(ms[j]) })
}

func seriesKey(m *dto.Metric) string {
	var b strings.Builder
	for _, l := range m.Label {
		b.WriteString(l.GetName())
		b.WriteByte(0)
		b.WriteString(l.GetValue())
		b.WriteByte(0)
	}
	return b.String()
}

// writeAtomic replaces path with data through a temporary file in the same
// directory, synced before the rename, so a reader sees the old file or the
// new one and a crash leaves one of them whole.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the rename itself; not every system can sync a directory
		d.Close()
	}
	return nil
}
