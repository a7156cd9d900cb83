package main

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

// TestResolveBuild: linker values win; else the module version and the VCS
// settings 'go build' records in a checkout; else devel and unknown.
func TestResolveBuild(t *testing.T) {
	fromCheckout := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/mediactl/mediactl", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "CGO_ENABLED", Value: "0"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "1a499b4f0c2e9d7b6a5f4e3d2c1b0a9f8e7d6c5b"},
			{Key: "vcs.time", Value: "2026-11-30T09:12:44Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	goInstalled := &debug.BuildInfo{Main: debug.Module{Path: "github.com/mediactl/mediactl", Version: "v0.9.0"}}

	for _, tc := range []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  buildInfo
	}{
		{"ldflags", "v1.2.3", "0123abc", "2026-12-01T10:00:00Z", fromCheckout,
			buildInfo{Version: "v1.2.3", Commit: "0123abc", Date: "2026-12-01T10:00:00Z", Modified: true}},
		{"checkout", "", "", "", fromCheckout,
			buildInfo{Version: "devel", Commit: "1a499b4f0c2e9d7b6a5f4e3d2c1b0a9f8e7d6c5b", Date: "2026-11-30T09:12:44Z", Modified: true}},
		{"go install @version", "", "", "", goInstalled,
			buildInfo{Version: "v0.9.0", Commit: unknown, Date: unknown}},
		{"nothing recorded", "", "", "", nil,
			buildInfo{Version: "devel", Commit: unknown, Date: unknown}},
	} {
		if got := resolveBuild(tc.version, tc.commit, tc.date, tc.bi); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestVersionCarriesLinkerValues: the values a release sets with -X reach
// the JSON document, its envelope and the text line.
func TestVersionCarriesLinkerValues(t *testing.T) {
	saved := [3]string{buildVersion, buildCommit, buildDate}
	t.Cleanup(func() { buildVersion, buildCommit, buildDate = saved[0], saved[1], saved[2] })
	buildVersion, buildCommit, buildDate = "v1.4.0", "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", "2026-12-01T16:05:00Z"

	var v versionV2
	runJSON(t, exitOK, &v, "version", "-o", "json")
	checkEnvelope(t, v.envelopeV1, "mediactl.version/v2", exitOK)
	if v.Version != "v1.4.0" || v.envelopeV1.Version != "v1.4.0" || v.Commit != buildCommit || v.Date != buildDate || v.Go == "" || v.OS == "" || v.Arch == "" {
		t.Fatalf("version document %+v", v)
	}

	var stdout, stderr bytes.Buffer
	if code := run([]string{"mediactl", "version"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := "mediactl v1.4.0 (commit 9f8e7d6c5b4a39281706f5e4d3c2b1a098765432, built 2026-12-01T16:05:00Z; "
	if !strings.HasPrefix(stdout.String(), want) {
		t.Fatalf("text %q, want it to start with %q", stdout.String(), want)
	}

	// -o ndjson is the same document on one line.
	stdout.Reset()
	if code := run([]string{"mediactl", "version", "-o", "ndjson"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("ndjson exit %d: %s", code, stderr.String())
	}
	var line versionV2
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &line); err != nil || line.Commit != buildCommit {
		t.Fatalf("ndjson %q: %v", stdout.String(), err)
	}
}
