package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The documented schemas of the documents the other commands write (docs/*.md).
// Decoding with DisallowUnknownFields makes an undocumented field a failure.

type scanReportV1 struct {
	Shard   string `json:"shard,omitempty"`
	Sources []struct {
		Source        string `json:"source"`
		Documents     int64  `json:"documents"`
		Rows          int64  `json:"rows"`
		Skipped       int64  `json:"skipped"`
		Bytes         int64  `json:"bytes"`
		References    int64  `json:"references"`
		DistinctBlobs int64  `json:"distinct_blobs"`
		Problems      int64  `json:"problems"`
		Complete      bool   `json:"complete"`
		Excluded      int64  `json:"excluded"`
		Leftovers     int64  `json:"leftovers"`
		Unread        int64  `json:"unread"`
		LeftoversText int64  `json:"leftovers_as_text"`
	} `json:"sources"`
	Stores             []string         `json:"stores"`
	References         int64            `json:"references"`
	DistinctBlobs      int64            `json:"distinct_blobs"`
	ByStatus           map[string]int64 `json:"by_status"`
	DanglingBlobs      int64            `json:"dangling_blobs"`
	DanglingReferences int64            `json:"dangling_references"`
	Dangling           []foundV1        `json:"dangling"`
	Outside            []foundV1        `json:"outside"`
	Problems           []struct {
		Place placeV1 `json:"place"`
		Error string  `json:"error"`
	} `json:"problems"`
	Truncated   bool `json:"truncated"`
	Complete    bool `json:"complete"`
	Interrupted bool `json:"interrupted"`
}

type candidateV1 struct {
	Key        string    `json:"key"`
	Size       int64     `json:"size"`
	ModTime    time.Time `json:"mod_time"`
	Referenced bool      `json:"referenced"`
}

type skipV1 struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

type trashResultV1 struct {
	Run          string   `json:"run"`
	Trashed      int64    `json:"trashed"`
	Deleted      int64    `json:"deleted"`
	Bytes        int64    `json:"bytes"`
	Skipped      []skipV1 `json:"skipped"`
	Failed       []skipV1 `json:"failed"`
	NotAttempted int64    `json:"not_attempted"`
}

type planV1 struct {
	Store                string        `json:"store"`
	Policy               string        `json:"policy"`
	Shard                string        `json:"shard,omitempty"`
	Fence                time.Time     `json:"fence"`
	Cutoff               time.Time     `json:"cutoff"`
	Blobs                int64         `json:"blobs"`
	Bytes                int64         `json:"bytes"`
	Referenced           int64         `json:"referenced"`
	Candidates           []candidateV1 `json:"candidates"`
	CandidateBytes       int64         `json:"candidate_bytes"`
	ReferencedCandidates int64         `json:"referenced_candidates"`
	Oldest               time.Time     `json:"oldest"`
	Newest               time.Time     `json:"newest"`
	MaxSize              int64         `json:"max_size"`
	SizeAfter            int64         `json:"size_after"`
	CapMet               bool          `json:"cap_met"`
	SessionsRead         bool          `json:"sessions_read"`
	Scan                 *scanReportV1 `json:"scan"`
	Complete             bool          `json:"complete"`
	Problems             []string      `json:"problems"`
	Nested               []string      `json:"nested_stores"`
}

type gcV2 struct {
	envelopeV1
	DryRun bool `json:"dry_run"`
	Stores []struct {
		Store    string         `json:"store"`
		Plan     *planV1        `json:"plan"`
		Result   *trashResultV1 `json:"result"`
		Outcome  string         `json:"outcome"`
		Refused  string         `json:"refused"`
		Override string         `json:"override"`
		Error    string         `json:"error"`
		ExitCode int            `json:"exit_code"`
		// TrashCheck: with --delete and a policy that keeps referenced
		// blobs, the trash checked against the sessions.
		TrashCheck *trashCheckV1 `json:"trash_check"`
		PutBack    int64         `json:"put_back"`
		// Marks: on a bucket, the deferred deletes (docs/gc.md).
		Marks *struct {
			Run         string         `json:"run"`
			Marked      int64          `json:"marked"`
			MarkedBytes int64          `json:"marked_bytes"`
			Pending     int64          `json:"pending"`
			Grace       string         `json:"grace"`
			Deleted     *trashResultV1 `json:"deleted"`
			DeletedRun  string         `json:"deleted_run"`
			Unmarked    []skipV1       `json:"unmarked"`
		} `json:"marks"`
		// DeletedRun: the record of a --no-trash sweep's deletes on a
		// bucket whose service keeps deleted objects (docs/gc.md).
		DeletedRun string `json:"deleted_run"`
		// DeleteRecovery: on a bucket, what its service keeps of a
		// deleted blob (docs/gc.md); absent for a local store.
		DeleteRecovery *struct {
			Kind      string `json:"kind"`
			Retention string `json:"retention"`
			Detail    string `json:"detail"`
		} `json:"delete_recovery"`
	} `json:"stores"`
}

type trashCheckV1 struct {
	Runs     int64 `json:"runs"`
	Blobs    int64 `json:"blobs"`
	Restored []struct {
		Run    string `json:"run"`
		Key    string `json:"key"`
		Size   int64  `json:"size"`
		Reason string `json:"reason"`
	} `json:"restored"`
	Kept     []skipV1 `json:"kept_in_trash"`
	Complete bool     `json:"complete"`
	Problems []string `json:"problems"`
}

type verifyV1 struct {
	envelopeV1
	Stores []struct {
		Store        string            `json:"store"`
		Shard        string            `json:"shard,omitempty"`
		Mode         string            `json:"mode"`
		Blobs        int64             `json:"blobs"`
		Selected     int64             `json:"selected"`
		Fraction     float64           `json:"fraction"`
		Counts       map[string]int64  `json:"counts"`
		NotAttempted int64             `json:"not_attempted"` // new in v2
		BytesRead    int64             `json:"bytes_read"`
		Seconds      float64           `json:"seconds"`
		Corrupt      []json.RawMessage `json:"corrupt"`
		Unreadable   []json.RawMessage `json:"unreadable"`
		Anomalies    []json.RawMessage `json:"anomalies"`
		AnomalyCount int64             `json:"anomaly_count"`
		Sessions     *struct {
			Scan              scanReportV1 `json:"scan"`
			Orphans           int64        `json:"orphans"`
			OrphanBytes       int64        `json:"orphan_bytes"`
			ReferencedCorrupt int64        `json:"referenced_corrupt"`
		} `json:"sessions"`
		ListError   string `json:"list_error"`
		Truncated   bool   `json:"truncated"`
		Complete    bool   `json:"complete"`
		Interrupted bool   `json:"interrupted"`
	} `json:"stores"`
	Quarantine []json.RawMessage `json:"quarantine"`
	Refused    []string          `json:"refused"`
}

type gcPlanFileV1 struct {
	Schema string    `json:"schema"`
	Plans  []*planV1 `json:"plans"`
}

type versionV2 struct {
	envelopeV1
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

type catV1 struct {
	envelopeV1
	Ref  string `json:"ref"`
	Info *struct {
		SHA256      string `json:"sha256"`
		Size        int64  `json:"size"`
		ContentType string `json:"content_type"`
		Source      string `json:"source"`
		Location    string `json:"location"`
		Verified    bool   `json:"verified"`
	} `json:"info"`
	Bytes   int64  `json:"bytes"`
	Refused string `json:"refused"`
	Error   string `json:"error"`
}

type gcRunsV1 struct {
	envelopeV1
	Store string `json:"store"`
	Runs  []struct {
		Run   string    `json:"run"`
		Time  time.Time `json:"time"`
		Blobs int64     `json:"blobs"`
		Bytes int64     `json:"bytes"`
		Shard string    `json:"shard,omitempty"`
	} `json:"runs"`
	Marks []struct {
		Run   string    `json:"run"`
		Time  time.Time `json:"time"`
		Blobs int64     `json:"blobs"`
		Bytes int64     `json:"bytes"`
		Shard string    `json:"shard,omitempty"`
	} `json:"marks"`
	// Deleted: a bucket's deleted runs, where its service keeps deleted
	// objects (docs/gc.md).
	Deleted []struct {
		Run        string    `json:"run"`
		Time       time.Time `json:"time"`
		Blobs      int64     `json:"blobs"`
		Bytes      int64     `json:"bytes"`
		Shard      string    `json:"shard,omitempty"`
		Recovery   string    `json:"recovery"`
		KeptUntil  time.Time `json:"kept_until"`
		Restorable bool      `json:"restorable"`
	} `json:"deleted"`
	Splits []struct {
		N    int `json:"n"`
		Runs []struct {
			Run   string    `json:"run"`
			Time  time.Time `json:"time"`
			Blobs int64     `json:"blobs"`
			Bytes int64     `json:"bytes"`
			Shard string    `json:"shard"`
		} `json:"runs"`
		Blobs   int64 `json:"blobs"`
		Bytes   int64 `json:"bytes"`
		Missing []int `json:"missing_shards"`
	} `json:"splits"`
}

type gcRestoreV1 struct {
	envelopeV1
	Run          string   `json:"run"`
	Restored     int64    `json:"restored"`
	Bytes        int64    `json:"bytes"`
	Kept         []skipV1 `json:"kept"`
	NotAttempted int64    `json:"not_attempted"`
	Refused      string   `json:"refused"`
	// Unmarked: a mark run's blobs no longer marked; NotRecoverable: a
	// deleted run's blobs whose version the service no longer keeps.
	Unmarked       int64    `json:"unmarked"`
	NotRecoverable []skipV1 `json:"not_recoverable"`
	// PurgedIn: the deleted run holding what an interrupted gc purge
	// deleted of the trash run.
	PurgedIn string `json:"purged_in"`
}

type gcPurgeV1 struct {
	envelopeV1
	Runs       []string      `json:"runs"`
	Blobs      int64         `json:"blobs"`
	Bytes      int64         `json:"bytes"`
	TrashCheck *trashCheckV1 `json:"trash_check"`
	Refused    string        `json:"refused"`
	// New in v2: what a bucket's service keeps of the purged blobs.
	DeleteRecovery *struct {
		Kind      string `json:"kind"`
		Retention string `json:"retention"`
		Detail    string `json:"detail"`
	} `json:"delete_recovery"`
	// DeletedRun: the record of the trashed blobs purged from a bucket
	// whose service keeps deleted objects (docs/gc.md).
	DeletedRun string `json:"deleted_run"`
}

type rollbackV1 struct {
	envelopeV1
	Journal  string          `json:"journal"`
	From     string          `json:"from"`
	To       string          `json:"to"`
	Sessions json.RawMessage `json:"rollback"`
	Restored []struct {
		Run          string   `json:"run"`
		Restored     int64    `json:"restored"`
		Bytes        int64    `json:"bytes"`
		Kept         []skipV1 `json:"kept"`
		NotAttempted int64    `json:"not_attempted"`
	} `json:"restored"`
	FromCopies []string    `json:"restored_from_copies"`
	Missing    []problemV1 `json:"missing_sources"`
	Notes      []string    `json:"notes"`
	Refused    string      `json:"refused"`
}

// exampleStore is a copy of the shipped forge example, its blobs three days old.
func exampleStore(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "agent")
	if err := os.CopyFS(root, os.DirFS("../../examples/forge")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-72 * time.Hour)
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	es, err := os.ReadDir(inbound)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if err := os.Chtimes(filepath.Join(inbound, e.Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// runJSON runs a command line and decodes its stdout strictly into doc.
func runJSON(t *testing.T, want int, doc any, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"mediactl"}, args...), &stdout, &stderr); code != want {
		t.Fatalf("%s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		t.Fatalf("%s: the document does not match its schema: %v\n%s", strings.Join(args, " "), err, stdout.String())
	}
	return stdout.String()
}

func checkEnvelope(t *testing.T, e envelopeV1, schema string, code int) {
	t.Helper()
	if e.Schema != schema || e.ExitCode != code || e.Version == "" || e.Outcome == "" || e.Settings == nil {
		t.Fatalf("envelope %+v, want schema %s, exit %d", e, schema, code)
	}
}

// TestSchemasOfEveryCommand: gc (dry run and --delete), gc runs, restore,
// purge, verify and rollback documents match their documented schemas and
// carry the envelope.
func TestSchemasOfEveryCommand(t *testing.T) {
	root := exampleStore(t)
	store := filepath.Join(root, ".forge", "files", "inbound")

	var v versionV2
	runJSON(t, exitOK, &v, "version", "-o", "json")
	checkEnvelope(t, v.envelopeV1, "mediactl.version/v2", exitOK)

	var plan gcV2
	planFile := filepath.Join(t.TempDir(), "plan.json")
	runJSON(t, exitOK, &plan, "gc", "--root", root, "--layout", "forge", "-o", "json", "--plan-out", planFile)
	pf, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(pf))
	dec.DisallowUnknownFields()
	var planDoc gcPlanFileV1
	if err := dec.Decode(&planDoc); err != nil || planDoc.Schema != "mediactl.gc-plan/v1" || len(planDoc.Plans) != 1 || len(planDoc.Plans[0].Candidates) != 1 {
		t.Fatalf("--plan-out: %v %+v", err, planDoc)
	}
	checkEnvelope(t, plan.envelopeV1, "mediactl.gc/v2", exitOK)
	if !plan.DryRun || len(plan.Stores) != 1 || plan.Stores[0].Plan == nil || len(plan.Stores[0].Plan.Candidates) != 1 || plan.Stores[0].Outcome != "ok" {
		t.Fatalf("gc plan: %+v", plan)
	}
	if d := plan.Stores[0].DeleteRecovery; d != nil {
		t.Errorf("gc of a local store reports delete_recovery %+v", d)
	}

	var done gcV2
	runJSON(t, exitOK, &done, "gc", "--root", root, "--layout", "forge", "--delete", "-o", "json")
	r := done.Stores[0].Result
	if done.DryRun || r == nil || r.Trashed != 1 || r.Run == "" || r.Skipped == nil || r.Failed == nil {
		t.Fatalf("gc --delete: %+v", done.Stores[0])
	}

	var runs gcRunsV1
	runJSON(t, exitOK, &runs, "gc", "runs", "--store", store, "-o", "json")
	checkEnvelope(t, runs.envelopeV1, "mediactl.gc-runs/v1", exitOK)
	if len(runs.Runs) != 1 || runs.Runs[0].Run != r.Run || runs.Runs[0].Blobs != 1 {
		t.Fatalf("gc runs: %+v", runs)
	}

	var restored gcRestoreV1
	runJSON(t, exitOK, &restored, "gc", "restore", "--store", store, "-o", "json", r.Run)
	checkEnvelope(t, restored.envelopeV1, "mediactl.gc-restore/v1", exitOK)
	if restored.Restored != 1 || restored.Kept == nil || restored.Run != r.Run {
		t.Fatalf("gc restore: %+v", restored)
	}

	var purged gcPurgeV1
	runJSON(t, exitOK, &purged, "gc", "purge", "--store", store, "--sessions", filepath.Join(root, ".forge", "sessions"), "-o", "json")
	checkEnvelope(t, purged.envelopeV1, "mediactl.gc-purge/v2", exitOK)
	if purged.Runs == nil || purged.TrashCheck == nil || !purged.TrashCheck.Complete || purged.TrashCheck.Restored == nil {
		t.Fatalf("gc purge: %+v", purged)
	}

	blobs, err := filepath.Glob(filepath.Join(store, "*.png"))
	if err != nil || len(blobs) == 0 {
		t.Fatalf("no blob to cat: %v", err)
	}
	var cat catV1
	runJSON(t, exitOK, &cat, "cat", "--layout", "forge", "--root", root, "-o", "json", blobs[0])
	checkEnvelope(t, cat.envelopeV1, "mediactl.cat/v1", exitOK)
	if cat.Info == nil || !cat.Info.Verified || cat.Info.Source != "local" || cat.Bytes == 0 || cat.Bytes != cat.Info.Size {
		t.Fatalf("cat: %+v", cat)
	}

	var verified verifyV1
	runJSON(t, exitOK, &verified, "verify", "--root", root, "--layout", "forge", "-o", "json")
	checkEnvelope(t, verified.envelopeV1, "mediactl.verify/v2", exitOK)
	if len(verified.Stores) != 1 || verified.Stores[0].Counts["ok"] != 4 || verified.Stores[0].Sessions == nil {
		t.Fatalf("verify: %+v", verified)
	}

	bucket := filepath.Join(t.TempDir(), "bucket")
	if err := os.Mkdir(bucket, 0o700); err != nil {
		t.Fatal(err)
	}
	var migrated migrateV1
	runJSON(t, exitOK, &migrated, "migrate", "--root", root, "--layout", "forge", "--to", "file://"+bucket, "--rewrite", "--runtime-reads-urls", "--rewrite-min-idle", "0", "--delete-source", "--min-age", "0", "-o", "json")
	var rolled rollbackV1
	runJSON(t, exitOK, &rolled, "migrate", "rollback", "--root", root, "--layout", "forge", "--journal", migrated.Journal, "-o", "json")
	checkEnvelope(t, rolled.envelopeV1, "mediactl.migrate-rollback/v1", exitOK)
	if len(rolled.Restored) != 1 || rolled.Restored[0].Restored != 4 || rolled.FromCopies == nil || rolled.Missing == nil || len(rolled.Sessions) == 0 {
		t.Fatalf("rollback: %+v", rolled)
	}
}

// TestNDJSONEveryCommand: with -o ndjson every line of every command is one
// typed record, the last one the summary with the command's schema.
func TestNDJSONEveryCommand(t *testing.T) {
	root := exampleStore(t)
	store := filepath.Join(root, ".forge", "files", "inbound")
	bucket := filepath.Join(t.TempDir(), "bucket")
	if err := os.Mkdir(bucket, 0o700); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args   []string
		schema string
		types  map[string]bool // record types that must appear before the summary
	}{
		{[]string{"scan", "--root", root, "--layout", "forge"}, "mediactl.scan/v1", map[string]bool{"reference": true}},
		{[]string{"verify", "--root", root, "--layout", "forge"}, "mediactl.verify/v2", nil},
		{[]string{"gc", "--root", root, "--layout", "forge"}, "mediactl.gc/v2", map[string]bool{"candidate": true}},
		{[]string{"gc", "runs", "--store", store}, "mediactl.gc-runs/v1", nil},
		{[]string{"gc", "purge", "--store", store, "--sessions", filepath.Join(root, ".forge", "sessions")}, "mediactl.gc-purge/v2", nil},
		{[]string{"migrate", "--root", root, "--layout", "forge", "--to", "file://" + bucket, "--dry-run"}, "mediactl.migrate/v3", nil},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		if code := run(append(append([]string{"mediactl"}, c.args...), "-o", "ndjson"), &stdout, &stderr); code != exitOK {
			t.Fatalf("%v: exit %d\n%s", c.args, code, stderr.String())
		}
		seen := map[string]bool{}
		var last map[string]any
		sc := bufio.NewScanner(&stdout)
		sc.Buffer(nil, 1<<20)
		lines := 0
		for sc.Scan() {
			lines++
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%v: line %d is not one JSON object: %v\n%s", c.args, lines, err, sc.Text())
			}
			typ, _ := rec["type"].(string)
			if typ == "" {
				t.Fatalf("%v: line %d has no type: %s", c.args, lines, sc.Text())
			}
			if last != nil {
				t.Fatalf("%v: a record after the summary: %s", c.args, sc.Text())
			}
			if typ == "summary" {
				last = rec
			}
			seen[typ] = true
		}
		if last == nil || last["schema"] != c.schema || last["exit_code"] != float64(0) || last["outcome"] != "ok" {
			t.Fatalf("%v: summary %v, want schema %s", c.args, last, c.schema)
		}
		for typ := range c.types {
			if !seen[typ] {
				t.Errorf("%v: no %q record", c.args, typ)
			}
		}
	}
}

// TestSchemaOfBucketMarks: gc --delete on a bucket reports its marks as
// documented, and gc runs lists the mark run.
func TestSchemaOfBucketMarks(t *testing.T) {
	bucket, sessions := t.TempDir(), t.TempDir()
	old := time.Now().Add(-72 * time.Hour)
	for _, name := range []string{"used.png", "orphan.png"} {
		p := filepath.Join(bucket, name)
		if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(sessions, "s.json"), []byte(`{"parts":[{"uri":"used.png"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var done gcV2
	runJSON(t, exitOK, &done, "gc", "--store", "file://"+bucket, "--sessions", sessions, "--delete", "--max-delete", "100%", "-o", "json")
	m := done.Stores[0].Marks
	if m == nil || m.Marked != 1 || m.Run == "" || m.Grace != "1d" || m.Unmarked == nil || done.Stores[0].Result != nil {
		t.Fatalf("marks: %+v", done.Stores[0])
	}
	if d := done.Stores[0].DeleteRecovery; d == nil || d.Kind != "none" || d.Retention != "" || d.Detail == "" {
		t.Fatalf("delete_recovery of a file:// bucket: %+v, want kind none with a detail", d)
	}
	var runs gcRunsV1
	runJSON(t, exitOK, &runs, "gc", "runs", "--store", "file://"+bucket, "-o", "json")
	if len(runs.Marks) != 1 || runs.Marks[0].Run != m.Run || runs.Marks[0].Blobs != 1 {
		t.Fatalf("gc runs: %+v", runs)
	}
}

// countV1 is a report's count of blobs and bytes.
type countV1 struct {
	Blobs int64 `json:"blobs"`
	Bytes int64 `json:"bytes"`
}

type periodV1 struct {
	Start string `json:"start"`
	countV1
}

// reportV2 is mediactl.report/v2 (docs/report.md): v1's fields and shard,
// merged, notes.
type reportV2 struct {
	reportV1
	Shard  string `json:"shard"`
	Merged *struct {
		Of      int      `json:"of"`
		Shards  []string `json:"shards"`
		Missing []string `json:"missing"`
	} `json:"merged"`
	Notes []string `json:"notes"`
}

// reportV1 is mediactl.report/v1, which report no longer writes.
type reportV1 struct {
	envelopeV1
	Now     time.Time `json:"now"`
	Sources []struct {
		Source        string `json:"source"`
		Documents     int64  `json:"documents"`
		Rows          int64  `json:"rows"`
		Skipped       int64  `json:"skipped"`
		Bytes         int64  `json:"bytes"`
		References    int64  `json:"references"`
		DistinctBlobs int64  `json:"distinct_blobs"`
		Problems      int64  `json:"problems"`
		Complete      bool   `json:"complete"`
		Excluded      int64  `json:"excluded"`
		Leftovers     int64  `json:"leftovers"`
		Unread        int64  `json:"unread"`
		LeftoversText int64  `json:"leftovers_as_text"`
	} `json:"sources"`
	Stores []struct {
		Store      string   `json:"store"`
		Kind       string   `json:"kind"`
		Stored     countV1  `json:"stored"`
		Referenced countV1  `json:"referenced"`
		Orphaned   countV1  `json:"orphaned"`
		Shared     countV1  `json:"shared"`
		TrashRuns  int      `json:"trash_runs"`
		InTrash    countV1  `json:"in_trash"`
		Marked     countV1  `json:"marked"`
		Corrupt    *countV1 `json:"corrupt"`
		ByModified []struct {
			Bucket     string  `json:"bucket"`
			Referenced countV1 `json:"referenced"`
			Orphaned   countV1 `json:"orphaned"`
		} `json:"by_modified"`
		ByLastReference []struct {
			Bucket     string  `json:"bucket"`
			Referenced countV1 `json:"referenced"`
			Orphaned   countV1 `json:"orphaned"`
		} `json:"by_last_reference"`
		ByMediaType []struct {
			Type string `json:"type"`
			countV1
		} `json:"by_media_type"`
		BySize []struct {
			Class string `json:"class"`
			countV1
		} `json:"by_size"`
		Growth struct {
			Days        []periodV1 `json:"days"`
			Weeks       []periodV1 `json:"weeks"`
			BytesPerDay float64    `json:"bytes_per_day"`
			Filesystem  *struct {
				Size          uint64   `json:"size"`
				Free          uint64   `json:"free"`
				DaysUntilFull *float64 `json:"days_until_full"`
			} `json:"filesystem"`
		} `json:"growth"`
		Policies []struct {
			Name       string  `json:"name"`
			Free       countV1 `json:"free"`
			Referenced int64   `json:"referenced"`
			CapMet     *bool   `json:"cap_met"`
		} `json:"policies"`
		Problems []string `json:"problems"`
		Complete bool     `json:"complete"`
	} `json:"stores"`
	Totals struct {
		Stored             countV1  `json:"stored"`
		Referenced         countV1  `json:"referenced"`
		Orphaned           countV1  `json:"orphaned"`
		InTrash            countV1  `json:"in_trash"`
		Marked             countV1  `json:"marked"`
		Shared             countV1  `json:"shared"`
		DanglingReferences int64    `json:"dangling_references"`
		DanglingBlobs      int64    `json:"dangling_blobs"`
		Corrupt            *countV1 `json:"corrupt"`
	} `json:"totals"`
	Owners []struct {
		ID           string     `json:"id"`
		Agent        string     `json:"agent"`
		Units        int64      `json:"units"`
		References   int64      `json:"references"`
		Referenced   countV1    `json:"referenced"`
		Exclusive    countV1    `json:"exclusive"`
		LastActivity *time.Time `json:"last_activity"`
	} `json:"owners"`
	OwnerCount   int `json:"owner_count"`
	Unattributed struct {
		Units      int64     `json:"units"`
		UnitList   []placeV1 `json:"unit_list"`
		References int64     `json:"references"`
		Referenced countV1   `json:"referenced"`
		TextOnly   countV1   `json:"text_only"`
		Exclusive  countV1   `json:"exclusive"`
	} `json:"unattributed"`
	Rule        string   `json:"owner_rule"`
	Problems    []string `json:"problems"`
	Truncated   bool     `json:"truncated"`
	Complete    bool     `json:"complete"`
	Interrupted bool     `json:"interrupted"`
}

// forgetV1 is mediactl.forget/v1 (docs/forget.md).
type forgetV1 struct {
	envelopeV1
	Owners   []string  `json:"owners"`
	Unknown  []string  `json:"unknown"`
	DryRun   bool      `json:"dry_run"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Stores   []string  `json:"stores"`
	Units    int64     `json:"units"`
	Erased   []struct {
		Store      string     `json:"store"`
		Key        string     `json:"key"`
		SHA256     string     `json:"sha256"`
		Size       int64      `json:"size"`
		Where      []string   `json:"where"`
		RemovedAt  *time.Time `json:"removed_at"`
		References int64      `json:"references"`
		Marked     []string   `json:"marked"`
	} `json:"erased"`
	Kept []struct {
		Store  string `json:"store"`
		Key    string `json:"key"`
		Size   int64  `json:"size"`
		Reason string `json:"reason"`
	} `json:"kept"`
	ErasedBytes     int64    `json:"erased_bytes"`
	Dangling        int64    `json:"dangling_references"`
	AlreadyDangling int64    `json:"already_dangling_references"`
	PutBack         int64    `json:"put_back"`
	Runs            []string `json:"runs"`
	Problems        []string `json:"problems"`
	Refused         string   `json:"refused"`
	Complete        bool     `json:"complete"`
	Interrupted     bool     `json:"interrupted"`
}

// TestSchemaOfReportAndForget: report's document, forget's dry run and
// forget's receipt match their documented schemas.
func TestSchemaOfReportAndForget(t *testing.T) {
	root := exampleStore(t)

	var rep reportV2
	runJSON(t, exitOK, &rep, "report", "--root", root, "--layout", "forge", "-o", "json")
	checkEnvelope(t, rep.envelopeV1, "mediactl.report/v2", exitOK)
	if len(rep.Stores) != 1 || rep.OwnerCount == 0 || len(rep.Owners) != rep.OwnerCount || !rep.Complete {
		t.Fatalf("report: %+v", rep)
	}
	// A shard's report and the merged one.
	var files []string
	for k := range 2 {
		var sh reportV2
		doc := runJSON(t, exitOK, &sh, "report", "--root", root, "--layout", "forge", "--shard", fmt.Sprintf("%d/2", k), "-o", "json")
		if sh.Shard != fmt.Sprintf("%d/2", k) || len(sh.Notes) == 0 {
			t.Fatalf("shard %d/2: %+v", k, sh)
		}
		files = append(files, filepath.Join(t.TempDir(), "shard.json"))
		if err := os.WriteFile(files[k], []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var merged reportV2
	runJSON(t, exitOK, &merged, append([]string{"report", "merge", "-o", "json"}, files...)...)
	checkEnvelope(t, merged.envelopeV1, "mediactl.report/v2", exitOK)
	if merged.Merged == nil || merged.Merged.Of != 2 || len(merged.Merged.Missing) != 0 || merged.Totals.Stored != rep.Totals.Stored {
		t.Fatalf("merged: %+v", merged)
	}

	id := rep.Owners[0].ID
	var dry forgetV1
	runJSON(t, exitOK, &dry, "forget", "--root", root, "--layout", "forge", "--owner", id, "-o", "json")
	checkEnvelope(t, dry.envelopeV1, "mediactl.forget/v1", exitOK)
	if !dry.DryRun || dry.Erased == nil || dry.Kept == nil || len(dry.Owners) != 1 {
		t.Fatalf("forget dry run: %+v", dry)
	}

	receipt := filepath.Join(t.TempDir(), "receipt")
	var done forgetV1
	runJSON(t, exitOK, &done, "forget", "--root", root, "--layout", "forge", "--owner", id, "--delete", "--receipt", receipt, "-o", "json")
	if done.DryRun || len(done.Erased) != len(dry.Erased) {
		t.Fatalf("forget: %+v", done)
	}
	f, err := os.ReadFile(receipt + ".json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(f))
	dec.DisallowUnknownFields()
	var onDisk forgetV1
	if err := dec.Decode(&onDisk); err != nil || onDisk.Schema != "mediactl.forget/v1" {
		t.Fatalf("receipt: %v %+v", err, onDisk)
	}
}
