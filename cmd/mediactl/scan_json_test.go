package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// scanV1 is the documented schema of `scan -o json` (docs/scan.md). Decoding
// with DisallowUnknownFields makes any undocumented field a test failure.
type scanV1 struct {
	envelopeV1
	scanReportV1
}

// envelopeV1 opens every document (output.go, rule 3).
type envelopeV1 struct {
	Schema   string `json:"schema"`
	Version  string `json:"mediactl_version"`
	ExitCode int    `json:"exit_code"`
	Outcome  string `json:"outcome"`
	Settings []struct {
		Flag  string `json:"flag"`
		Value string `json:"value"`
		From  string `json:"from"`
	} `json:"settings"`
}

type foundV1 struct {
	Reference struct {
		Raw    string `json:"raw"`
		Kind   string `json:"kind"`
		Path   string `json:"path"`
		Scheme string `json:"scheme"`
		Bucket string `json:"bucket"`
	} `json:"reference"`
	Place   placeV1 `json:"place"`
	Status  string  `json:"status"`
	Store   string  `json:"store"`
	Key     string  `json:"key"`
	Missing bool    `json:"missing"`
}

type placeV1 struct {
	Source   string `json:"source"`
	Document string `json:"document"`
	Table    string `json:"table"`
	Key      string `json:"key"`
	Column   string `json:"column"`
	Pointer  string `json:"pointer"`
	Offset   int64  `json:"offset"`
}

// TestScanJSONSchemaOnExample runs the README's command on the shipped example
// store and checks the JSON document against the documented schema.
func TestScanJSONSchemaOnExample(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"mediactl", "scan", "--layout", "forge", "--root", "../../examples/forge", "-o", "json"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	var doc scanV1
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("scan -o json does not match the documented schema: %v", err)
	}
	if doc.Schema != "mediactl.scan/v1" || doc.ExitCode != 0 || doc.Outcome != "ok" || !doc.Complete || doc.Interrupted {
		t.Fatalf("header: %+v", doc)
	}
	if len(doc.Sources) != 1 || doc.Sources[0].Documents != 2 || doc.Sources[0].Leftovers != 1 || doc.Sources[0].LeftoversText != 1 || !doc.Sources[0].Complete {
		t.Fatalf("sources: %+v", doc.Sources)
	}
	// t-1: the cat; t-2: the invoice twice (part and tool call) and the dog.
	if doc.References != 4 || doc.DistinctBlobs != 3 || doc.ByStatus["inside"] != 4 || doc.DanglingReferences != 0 {
		t.Fatalf("counts: %+v", doc)
	}
	if doc.Dangling == nil || doc.Outside == nil || doc.Problems == nil {
		t.Fatal("lists must be [] rather than null so that consumers can iterate them")
	}
}
