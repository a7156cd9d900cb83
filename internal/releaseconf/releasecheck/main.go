// Command releasecheck checks a binary goreleaser built: a static binary
// (for Linux targets) whose 'version -o json' carries the version, commit and
// date it was given. scripts/release-check.sh runs it in CI on goreleaser's
// snapshot build:
//
//	releasecheck -binary .release/dist/mediactl_linux_amd64_v1/mediactl -goos linux -goarch amd64 \
//	    -version 0.0.1-next -commit $(git rev-parse HEAD) -date 2026-12-01T16:00:00Z
//
// Without -binary it first builds the target from goreleaser.yaml's build
// section the way goreleaser's build step would (same env, flags and
// ldflags), for a machine where goreleaser cannot be installed, into -out.
//
// With -print-hooks it prints the before hooks, one a line, and with
// -print-repo the URL of the repository releases go to; it builds nothing.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mediactl/mediactl/internal/releaseconf"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "releasecheck:", err)
		os.Exit(1)
	}
}

func run() error {
	config := flag.String("config", "goreleaser.yaml", "release configuration")
	buildID := flag.String("build", "mediactl", "id of the build in the configuration")
	goos := flag.String("goos", runtime.GOOS, "target operating system")
	goarch := flag.String("goarch", runtime.GOARCH, "target architecture")
	version := flag.String("version", "", "version to build in (goreleaser's .Version, no leading v)")
	commit := flag.String("commit", "", "full commit hash to build in")
	date := flag.String("date", "", "commit date to build in, RFC 3339")
	out := flag.String("out", ".release/snapshot", "directory for the binary")
	binary := flag.String("binary", "", "check this binary instead of building one")
	printHooks := flag.Bool("print-hooks", false, "print the before hooks and stop")
	printRepo := flag.Bool("print-repo", false, "print the release repository's URL and stop")
	flag.Parse()

	c, err := releaseconf.Load(*config)
	if err != nil {
		return err
	}
	if *printHooks {
		for _, h := range c.Before.Hooks {
			fmt.Println(h)
		}
		return nil
	}
	if *printRepo {
		r := c.Publish.GitHub
		if r.Owner == "" || r.Name == "" {
			return errors.New("release.github names no owner and name")
		}
		fmt.Printf("https://github.com/%s/%s.git\n", r.Owner, r.Name)
		return nil
	}
	if *version == "" || *commit == "" || *date == "" {
		return errors.New("-version, -commit and -date are all needed")
	}
	if *binary != "" {
		return check(*binary, *goos, *goarch, *version, *commit, *date)
	}
	when, err := time.Parse(time.RFC3339, *date)
	if err != nil {
		return fmt.Errorf("-date: %w", err)
	}
	b, err := c.Build(*buildID)
	if err != nil {
		return err
	}
	name := b.Binary
	if *goos == "windows" {
		name += ".exe"
	}
	bin, err := filepath.Abs(filepath.Join(*out, *goos+"_"+*goarch, name))
	if err != nil {
		return err
	}
	gb, err := b.Command(*goos, *goarch, bin, releaseconf.Release{
		ProjectName: c.ProjectName, Version: *version, FullCommit: *commit,
		CommitDate: *date, CommitTimestamp: fmt.Sprint(when.Unix()),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "releasecheck: %v go %q\n", gb.Env, gb.Args)
	start := time.Now()
	cmd := exec.Command("go", gb.Args...)
	cmd.Env = append(os.Environ(), gb.Env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s/%s: %w", *goos, *goarch, err)
	}
	// goreleaser's mod_timestamp: the binary's time is the commit's.
	if b.ModTimestamp != "" {
		if err := os.Chtimes(bin, when, when); err != nil {
			return err
		}
	}
	st, err := os.Stat(bin)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "releasecheck: built %s, %.1f MiB, in %s\n", bin, float64(st.Size())/(1<<20), time.Since(start).Round(100*time.Millisecond))
	return check(bin, *goos, *goarch, *version, *commit, *date)
}

// check proves bin static (a Linux target) and, when it runs here, that it
// reports the version, commit and date it was built with.
func check(bin, goos, goarch, version, commit, date string) error {
	if goos == "linux" {
		if err := releaseconf.CheckStatic(bin); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "releasecheck: %s is statically linked\n", bin)
	}
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		fmt.Fprintf(os.Stderr, "releasecheck: %s/%s does not run here; version not checked\n", goos, goarch)
		return nil
	}
	return checkVersion(bin, version, commit, date)
}

// checkVersion runs 'bin version -o json' and compares what it says with
// what the build was given.
func checkVersion(bin, version, commit, date string) error {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "version", "-o", "json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s version -o json: %w\n%s", bin, err, stderr.String())
	}
	var doc struct {
		Schema          string `json:"schema"`
		EnvelopeVersion string `json:"mediactl_version"`
		Version         string `json:"version"`
		Commit          string `json:"commit"`
		Date            string `json:"date"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		return fmt.Errorf("version -o json: %w\n%s", err, stdout.String())
	}
	if doc.Version != version || doc.EnvelopeVersion != version || doc.Commit != commit || doc.Date != date {
		return fmt.Errorf("version -o json says version %q (envelope %q), commit %q, date %q; the build was given %q, %q, %q",
			doc.Version, doc.EnvelopeVersion, doc.Commit, doc.Date, version, commit, date)
	}
	fmt.Fprintf(os.Stderr, "releasecheck: %s: version %s, commit %s, date %s\n", doc.Schema, doc.Version, doc.Commit, doc.Date)
	return nil
}
