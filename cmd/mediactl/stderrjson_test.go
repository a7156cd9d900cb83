package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Under --log-format json, what other code writes through os.Stderr (the AWS
// SDK's credential chain logs its IMDS warnings there) comes out as JSON
// records, and os.Stderr is the real one again afterwards.
func TestJSONStderr(t *testing.T) {
	var real bytes.Buffer
	before := os.Stderr
	restore := jsonStderr(&real)
	fmt.Fprintln(os.Stderr, "SDK 2026/12/01 18:44:13 WARN falling back to IMDSv1: operation error ec2imds: getToken, 403")
	fmt.Fprintln(os.Stderr, "some library's plain line")
	fmt.Fprint(os.Stderr, "a last line without its newline")
	restore()
	if os.Stderr != before {
		t.Fatal("os.Stderr not restored")
	}
	lines := strings.Split(strings.TrimSpace(real.String()), "\n")
	want := []struct{ level, msg string }{
		{"WARN", "falling back to IMDSv1: operation error ec2imds: getToken, 403"},
		{"WARN", "some library's plain line"},
		{"WARN", "a last line without its newline"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), real.String())
	}
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %d is not JSON: %q", i, l)
		}
		if rec["level"] != want[i].level || rec["msg"] != want[i].msg || rec["kind"] != "library" {
			t.Errorf("line %d: %v, want %+v", i, rec, want[i])
		}
	}
}
