package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mediactl": func() { os.Exit(run(os.Args, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI end to end: each testdata/script/*.txtar file is one
// topic, with its files, commands, expected output and exit codes.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":  cmdExits,
			"mkblob": cmdMkblob,
			"expand": cmdExpand,
		},
	})
}

// exits N cmd args...: run cmd and require exit code N (stdout and stderr are
// kept for the next commands, as with exec).
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// mkblob DIR CONTENT EXT VAR: write CONTENT to DIR/<sha256(CONTENT)>EXT (mode
// 0600, as forge writes them) and set $VAR to the file name.
func cmdMkblob(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: mkblob DIR CONTENT EXT VAR")
	}
	d := sha256.Sum256([]byte(args[1]))
	name := hex.EncodeToString(d[:]) + args[2]
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o700))
	ts.Check(os.WriteFile(filepath.Join(dir, name), []byte(args[1]), 0o600))
	ts.Setenv(args[3], name)
}

// expand SRC DST: copy SRC to DST with $VARIABLES expanded, to put absolute
// paths of the work directory into session files.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expand SRC DST")
	}
	b := ts.ReadFile(args[0])
	dst := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(dst), 0o700))
	ts.Check(os.WriteFile(dst, []byte(os.Expand(b, ts.Getenv)), 0o600))
}
