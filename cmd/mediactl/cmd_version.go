package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/outcome"
)

// Set at release time (goreleaser.yaml, scripts/release-check.sh) with
// -ldflags "-X main.buildVersion=v1.2.3 -X main.buildCommit=… -X main.buildDate=…".
// Left empty, they are read from the build information the Go toolchain
// records: the module version with 'go install …@version', the VCS revision
// and time when built from a checkout.
var (
	buildVersion = ""
	buildCommit  = ""
	buildDate    = ""
)

// buildInfo is what this binary knows about how it was built.
type buildInfo struct {
	Version string
	Commit  string
	Date    string
	// Modified is true when the checkout it was built from had uncommitted
	// changes (vcs.modified), so Commit alone does not name its source.
	Modified bool
}

// unknown stands for a commit or date this binary was built without.
const unknown = "unknown"

// currentBuild is this binary's build information.
func currentBuild() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return resolveBuild(buildVersion, buildCommit, buildDate, bi)
}

// resolveBuild prefers the values set by the linker, then the toolchain's
// build information; what neither has is "devel" (version) or "unknown".
func resolveBuild(version, commit, date string, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: version, Commit: commit, Date: date}
	if bi != nil {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				if b.Date == "" {
					b.Date = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	if b.Commit == "" {
		b.Commit = unknown
	}
	if b.Date == "" {
		b.Date = unknown
	}
	return b
}

// version is the version every JSON envelope and --version carry.
func version() string {
	return currentBuild().Version
}

// versionDoc is the -o json document of 'mediactl version'.
type versionDoc struct {
	envelope
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, commit and build date of mediactl and the Go it was built with",
		Action: func(c *cli.Context) error {
			g, err := globals(c)
			if err != nil {
				return err
			}
			b := currentBuild()
			v := versionDoc{
				envelope: g.envelope("mediactl.version/v2", outcome.OK),
				Version:  b.Version, Commit: b.Commit, Date: b.Date, Modified: b.Modified,
				Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
			}
			if g.output != "text" {
				return g.document(v)
			}
			fmt.Fprintln(g.stdout, versionLine(v))
			if b.Commit == unknown {
				g.note("this binary records no commit: it was built outside a git checkout, or with -buildvcs=false (GOFLAGS may set it); " +
					"build it in the checkout with 'go build -buildvcs=true ./cmd/mediactl', or install a release, whose version names its commit")
			}
			return nil
		},
	}
}

// versionLine is the text form: "mediactl v1.2.3 (commit abc123, built
// 2026-12-01T16:00:00Z; go1.26.8 linux/amd64)".
func versionLine(v versionDoc) string {
	commit := v.Commit
	if v.Modified {
		commit += ", modified"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mediactl %s (commit %s, built %s; %s %s/%s)", v.Version, commit, v.Date, v.Go, v.OS, v.Arch)
	return b.String()
}
