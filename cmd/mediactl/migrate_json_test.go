package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// migrateV1 is the documented schema of `migrate -o json` (docs/migrate.md).
// Decoding with DisallowUnknownFields makes any undocumented field a failure.
type migrateV1 struct {
	envelopeV1
	Journal string `json:"journal"`
	Shard   string `json:"shard,omitempty"`
	Copy    struct {
		From, To                   string
		DryRun                     bool `json:"dry_run"`
		Selected                   int64
		SelectedBytes              int64 `json:"selected_bytes"`
		Copied                     int64
		CopiedBytes                int64 `json:"copied_bytes"`
		Existing                   int64
		ExistingBytes              int64 `json:"existing_bytes"`
		Resumed                    int64
		ResumedBytes               int64 `json:"resumed_bytes"`
		Conflicts, Corrupt, Failed int64
		Skipped                    int64
		ConflictList               []problemV1 `json:"conflict_list"`
		CorruptList                []problemV1 `json:"corrupt_list"`
		FailedList                 []problemV1 `json:"failed_list"`
		SkippedList                []problemV1 `json:"skipped_list"`
		Seconds                    float64
		BytesRead                  int64 `json:"bytes_read"`
		Interrupted                bool
		Unfinished                 int64
	} `json:"copy"`
	Estimate *struct {
		Bytes   int64   `json:"bytes"`
		Rate    float64 `json:"bytes_per_second"`
		Seconds float64 `json:"seconds"`
		Basis   string  `json:"basis"`
	} `json:"estimate"`
	Rewrite *struct {
		Units, Changed, References, Retried int64
		Kept                                int64
		KeptList                            []noteV1 `json:"kept_list"`
		Busy                                int64
		BusyList                            []noteV1 `json:"busy_list"`
		Problems                            int64
		ProblemList                         []noteV1 `json:"problem_list"`
		Interrupted                         bool
	} `json:"rewrite"`
	Check *struct {
		StillLocal int64     `json:"still_local"`
		List       []foundV1 `json:"still_local_list"`
		Complete   bool      `json:"complete"`
		Problems   []string  `json:"problems"`
		// New in v2: the read back of the references to the copies.
		ReadBack      int64 `json:"read_back"`
		ReadBackOther int64 `json:"read_back_other"`
		// New in v3.
		ReadBackLeftAlone int64          `json:"read_back_left_alone"`
		ReadBackFull      bool           `json:"read_back_full"`
		Unresolved        int64          `json:"unresolved"`
		UnresolvedUnknown int64          `json:"unresolved_unknown"`
		UnresolvedList    []unresolvedV1 `json:"unresolved_list"`
	} `json:"check"`
	Delete *struct {
		Candidates int64 `json:"candidates"`
		Kept       int64 `json:"kept_referenced"`
		Retained   int64 `json:"kept_retention_rule"`
		Young      int64 `json:"kept_young"`
		// New in v3.
		Temporary int64       `json:"kept_temporary"`
		Unlisted  int64       `json:"kept_unlisted"`
		MinAge    string      `json:"min_age"`
		CopyGone  []problemV1 `json:"kept_copy_gone"`
		Result    *struct {
			Run     string                         `json:"run"`
			Trashed int64                          `json:"trashed"`
			Deleted int64                          `json:"deleted"`
			Bytes   int64                          `json:"bytes"`
			Skipped []struct{ Key, Reason string } `json:"skipped"`
			Failed  []struct{ Key, Reason string } `json:"failed"`
			Left    int64                          `json:"not_attempted"`
		} `json:"result"`
		TrashCheck *trashCheckV1 `json:"trash_check"`
		PutBack    int64         `json:"put_back"`
		Refused    string        `json:"refused"`
	} `json:"delete_source"`
	Notes   []string `json:"notes"`
	Refused string   `json:"refused"`
	Undo    string   `json:"undo"`
}

type problemV1 struct {
	Key      string `json:"key"`
	Reason   string `json:"reason"`
	Expected string `json:"expected_sha256"`
	Actual   string `json:"actual_sha256"`
}

type noteV1 struct {
	Place  placeV1 `json:"place"`
	Reason string  `json:"reason"`
}

// TestMigrateJSONSchema migrates a copy of the example store into a file://
// bucket with every step and checks the document against the documented schema.
func TestMigrateJSONSchema(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "agent"), os.DirFS("../../examples/forge")); err != nil {
		t.Fatal(err)
	}
	bucket := filepath.Join(root, "bucket")
	if err := os.Mkdir(bucket, 0o700); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"mediactl", "migrate", "--layout", "forge", "--root", filepath.Join(root, "agent"),
		"--to", "file://" + bucket + "?prefix=inbound/", "--rewrite", "--runtime-reads-urls", "--rewrite-min-idle", "0", "--delete-source", "--min-age", "0", "-o", "json"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	var doc migrateV1
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("migrate -o json does not match the documented schema: %v\n%s", err, stdout.String())
	}
	if doc.Schema != "mediactl.migrate/v3" || doc.ExitCode != 0 || doc.Outcome != "ok" || doc.Journal == "" {
		t.Fatalf("header: %+v", doc)
	}
	if doc.Copy.Copied != 4 || doc.Copy.CopiedBytes != 306 || doc.Copy.ConflictList == nil || doc.Copy.SkippedList == nil {
		t.Fatalf("copy: %+v", doc.Copy)
	}
	if doc.Rewrite == nil || doc.Rewrite.References != 4 || doc.Rewrite.KeptList == nil || doc.Rewrite.BusyList == nil {
		t.Fatalf("rewrite: %+v", doc.Rewrite)
	}
	if doc.Check == nil || doc.Check.StillLocal != 0 || !doc.Check.Complete || doc.Check.List == nil {
		t.Fatalf("check: %+v", doc.Check)
	}
	if doc.Delete == nil || doc.Delete.Result == nil || doc.Delete.Result.Trashed != 4 || doc.Delete.Retained != 0 || doc.Delete.MinAge != "0s" || doc.Notes == nil {
		t.Fatalf("delete: %+v", doc.Delete)
	}
}

type unresolvedV1 struct {
	Place     placeV1 `json:"place"`
	Reference string  `json:"reference"`
	Key       string  `json:"key"`
	Reason    string  `json:"reason"`
}
