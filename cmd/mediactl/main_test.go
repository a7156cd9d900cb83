package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/sessions/sessionstest"
	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mediactl": func() { os.Exit(run(os.Args, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI end to end: each testdata/script/*.txtar file is one
// topic, with its files, commands, expected output and exit codes.
func TestScripts(t *testing.T) {
	s3 := startS3(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Condition:           condition,
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("NO_COLOR", "1")
			// An S3 server (gofakes3, in this process) every script may use;
			// each script gets its own bucket.
			bucket := fmt.Sprintf("e2e-%d", s3.next.Add(1))
			if err := s3.Backend.CreateBucket(bucket); err != nil {
				return err
			}
			env.Setenv("S3_BUCKET", bucket)
			env.Setenv("S3_QUERY", s3.Query())
			// The same server through a proxy that "stall hold" stops,
			// given up on after 1s without data; the runs that expect
			// answers use STALL_QUERY_PATIENT (30s), as a machine busy
			// with the race detector may take longer than 1s to answer.
			stall := s3.stallQuery(bucket)
			env.Setenv("STALL_QUERY", stall+"&io_timeout=1s")
			env.Setenv("STALL_QUERY_PATIENT", stall+"&io_timeout=30s")
			// The subprocesses get the server's static credentials too.
			for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_EC2_METADATA_DISABLED", "AWS_REGION", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"} {
				env.Setenv(k, os.Getenv(k))
			}
			env.Setenv("PGSCHEMA", fmt.Sprintf("e2e_%d_%d", os.Getpid(), s3.next.Load()))
			if pg := os.Getenv(sessionstest.PostgresEnv); pg != "" {
				env.Setenv("PG_URL", pg)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":        cmdExits,
			"mkblob":       cmdMkblob,
			"expand":       cmdExpand,
			"sqlite":       cmdSQLite,
			"interrupt":    cmdInterrupt,
			"pgexec":       cmdPgexec,
			"s3put":        cmdS3put,
			"s3versioning": cmdS3Versioning,
			"s3versions":   cmdS3Versions,
			"stall":        s3.cmdStall,
			"jsonkeys":     cmdJSONKeys,
			"metric":       cmdMetric,
			"holdjournal":  cmdHoldJournal,
			"stalelock":    cmdStaleLock,
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

// holdJournal is the journals holdjournal keeps open, by script.
var holdJournal sync.Map // *testscript.TestScript → *os.File

// holdjournal PATH: hold the migrate journal at PATH as a run that is still
// going holds it (open, with the exclusive lock on the file that a migrate or
// rollback takes), until "holdjournal release" or the script's end.
func cmdHoldJournal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: holdjournal PATH | holdjournal release")
	}
	if args[0] == "release" {
		if f, ok := holdJournal.LoadAndDelete(ts); ok {
			ts.Check(f.(*os.File).Close())
		}
		return
	}
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_RDWR|os.O_APPEND, 0o600)
	ts.Check(err)
	if err := lockJournalFile(f); err != nil {
		f.Close()
		ts.Fatalf("holdjournal %s: %v", args[0], err)
	}
	holdJournal.Store(ts, f)
	ts.Defer(func() {
		if f, ok := holdJournal.LoadAndDelete(ts); ok {
			f.(*os.File).Close()
		}
	})
}

// stalelock STORE [claimed]: leave in the local store STORE the lock of a gc
// on this host whose process is gone, as an OOM kill does; with "claimed",
// also the claim on breaking it of a run that died too, and set $CLAIM to
// the claim's file name (storelock's: "break-" + lock name + "-" + the first
// 8 bytes of the lock's SHA-256 in hex).
func cmdStaleLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 || (len(args) == 2 && args[1] != "claimed") {
		ts.Fatalf("usage: stalelock STORE [claimed]")
	}
	gone := func(command string) []byte {
		cmd := exec.Command("true")
		ts.Check(cmd.Run())
		host, _ := os.Hostname()
		ns, _ := os.Readlink("/proc/self/ns/pid")
		raw, err := json.Marshal(map[string]any{"command": command, "pid": cmd.Process.Pid, "host": host, "started": "2026-11-29T03:00:00Z", "pid_ns": ns})
		ts.Check(err)
		return raw
	}
	dir := filepath.Join(ts.MkAbs(args[0]), ".mediactl")
	ts.Check(os.MkdirAll(dir, 0o700))
	lock := gone("mediactl gc")
	ts.Check(os.WriteFile(filepath.Join(dir, "lock"), lock, 0o600))
	if len(args) == 2 {
		sum := sha256.Sum256(lock)
		claim := "break-lock-" + hex.EncodeToString(sum[:8])
		ts.Check(os.WriteFile(filepath.Join(dir, claim), gone("mediactl migrate"), 0o600))
		ts.Setenv("CLAIM", claim)
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

// sqlite DB SQL...: run statements against a SQLite database file (created if
// missing), to build coffer-style fixtures. An argument @FILE runs the
// statements in FILE (separated by ";" at the end of a line), with $VARIABLES
// expanded.
func cmdSQLite(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: sqlite DB SQL...")
	}
	db, err := sql.Open("sqlite", ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	var stmts []string
	for _, a := range args[1:] {
		if f, ok := strings.CutPrefix(a, "@"); ok {
			stmts = append(stmts, strings.Split(os.Expand(ts.ReadFile(f), ts.Getenv), ";\n")...)
			continue
		}
		stmts = append(stmts, a)
	}
	for _, q := range stmts {
		if strings.TrimSpace(q) == "" {
			continue
		}
		if _, err := db.Exec(q); err != nil {
			ts.Fatalf("sqlite: %s: %v", q, err)
		}
	}
}

// interrupt [-TERM] AFTER CODE prog args...: start prog, send it SIGINT (or SIGTERM) after AFTER,
// and require exit code CODE. Its stdout and stderr are written to the files
// interrupt.stdout and interrupt.stderr in the work directory.
func cmdInterrupt(ts *testscript.TestScript, neg bool, args []string) {
	sig := syscall.SIGINT
	if len(args) > 0 && args[0] == "-TERM" {
		sig, args = syscall.SIGTERM, args[1:]
	}
	if neg || len(args) < 3 {
		ts.Fatalf("usage: interrupt [-TERM] AFTER CODE prog [args...]")
	}
	after, err := time.ParseDuration(args[0])
	ts.Check(err)
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	prog, err := exec.LookPath(args[2])
	if err != nil {
		// The test binary installs mediactl in a directory on the script's PATH.
		for _, dir := range strings.Split(ts.Getenv("PATH"), string(os.PathListSeparator)) {
			if p := filepath.Join(dir, args[2]); fileExists(p) {
				prog = p
				break
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args[3:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = []string{"PATH=" + ts.Getenv("PATH"), "HOME=" + ts.Getenv("HOME")}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ts.Check(cmd.Start())
	time.Sleep(after)
	ts.Check(cmd.Process.Signal(sig))
	err = cmd.Wait()
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("%s: %v", args[2], err)
	}
	ts.Check(os.WriteFile(ts.MkAbs("interrupt.stdout"), stdout.Bytes(), 0o600))
	ts.Check(os.WriteFile(ts.MkAbs("interrupt.stderr"), stderr.Bytes(), 0o600))
	if got != want {
		ts.Fatalf("%s exited %d after %v, want %d\nstdout: %s\nstderr: %s", args[2], got, sig, want, stdout.String(), stderr.String())
	}
}

// jsonkeys OUT MEMBER FILE...: write to OUT, sorted, one per line, every
// string value of a member named MEMBER at any depth of the JSON documents in
// the FILEs (a FILE may hold several, as JSON lines do). Scripts compare such
// lists with cmp: the keys gc plans to delete, the keys a trash manifest holds.
func cmdJSONKeys(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: jsonkeys OUT MEMBER FILE...")
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && k == args[1] {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, f := range args[2:] {
		dec := json.NewDecoder(strings.NewReader(ts.ReadFile(f)))
		for {
			var v any
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				break
			}
			ts.Check(err)
			walk(v)
		}
	}
	sort.Strings(out)
	var b strings.Builder
	for _, k := range out {
		b.WriteString(k + "\n")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o600))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
