package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mediactl/mediactl/pkg/ref"
)

// diskFullChildEnv, when set, makes TestRewriteFilesDiskFull the child process of
// its RLIMIT_FSIZE variant: it rewrites the folder named there and prints the
// result as JSON.
const diskFullChildEnv = "MEDIACTL_TEST_REWRITE_FSIZE_DIR"

// diskFullLimit is the room left for new files: the small session fits, the big
// rewrite does not.
const diskFullLimit = 64 << 10

type diskFullResult struct {
	Counts RewriteCounts
	Err    string
	Places []string // places the error names
}

// diskFullFolder makes a folder with a session whose rewrite is too big to fit
// and one whose rewrite fits.
func diskFullFolder(t *testing.T, dir string) (big, small string) {
	t.Helper()
	big, small = filepath.Join(dir, "big.json"), filepath.Join(dir, "small.json")
	writeMode(t, big, forgeSession("big", localRef), 0o600)
	writeMode(t, small, forgeSession("small", localRef), 0o600)
	return big, small
}

// diskFullEdit makes big.json grow past the limit and small.json change a little.
func diskFullEdit(p ref.Place, old []byte) ([]byte, error) {
	if filepath.Base(p.Document) == "big.json" {
		return append(old, strings.Repeat(" ", 4*diskFullLimit)...), nil
	}
	return []byte(strings.ReplaceAll(string(old), localRef, bucketRef)), nil
}

func runDiskFull(dir string) diskFullResult {
	w, err := OpenRewriter(context.Background(), dir, Options{})
	if err != nil {
		return diskFullResult{Err: err.Error()}
	}
	defer w.Close()
	c, err := w.Rewrite(context.Background(), diskFullEdit, RewriteOptions{})
	res := diskFullResult{Counts: c}
	if err != nil {
		res.Err = err.Error()
		var re *RewriteError
		if errors.As(err, &re) {
			for _, u := range re.Units {
				res.Places = append(res.Places, u.Place.Document)
			}
		}
	}
	return res
}

// checkDiskFull: the big session is untouched and named in the error, the small
// one rewritten, no temporary file left.
func checkDiskFull(t *testing.T, dir, big, small string, res diskFullResult, wantErr string) {
	t.Helper()
	if res.Counts != (RewriteCounts{Units: 2, Changed: 1, Failed: 1}) {
		t.Errorf("counts = %+v (err %s)", res.Counts, res.Err)
	}
	if len(res.Places) != 1 || res.Places[0] != big || !strings.Contains(res.Err, wantErr) || !strings.Contains(res.Err, "the file is unchanged") {
		t.Errorf("error %q names %q; want %s named, with %q", res.Err, res.Places, big, wantErr)
	}
	if got := readString(t, big); got != forgeSession("big", localRef) {
		t.Errorf("big.json changed: %d bytes", len(got))
	}
	if got := readString(t, small); got != forgeSession("small", bucketRef) {
		t.Errorf("small.json = %q", got)
	}
	checkNoLeftovers(t, dir)
}

// TestRewriteFilesDiskFull: writing the new version fails for lack of space. The
// original stays as it was, the temporary file is removed, the error names the
// session, and the other sessions are still rewritten. Two ways to run out of
// space: a tiny tmpfs (needs the right to mount, as root in CI), and a child
// process whose file size limit (RLIMIT_FSIZE) is tiny, which any user can run.
// Under CI at least one of them must run; the log says which ran.
func TestRewriteFilesDiskFull(t *testing.T) {
	if dir := os.Getenv(diskFullChildEnv); dir != "" {
		// The child: writes past the limit fail with EFBIG instead of killing us.
		signal.Ignore(syscall.SIGXFSZ)
		lim := unix.Rlimit{Cur: diskFullLimit, Max: diskFullLimit}
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatalf("setrlimit: %v", err)
		}
		b, _ := json.Marshal(runDiskFull(dir))
		os.Stdout.Write(append([]byte("RESULT "), append(b, '\n')...))
		return
	}
	ran := 0
	t.Run("tmpfs", func(t *testing.T) {
		dir := t.TempDir()
		if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0755"); err != nil {
			t.Skipf("cannot mount a tmpfs (%v): the RLIMIT_FSIZE variant covers disk full", err)
		}
		t.Cleanup(func() {
			if err := unix.Unmount(dir, 0); err != nil {
				t.Errorf("unmount %s: %v", dir, err)
			}
		})
		big, small := diskFullFolder(t, dir)
		res := runDiskFull(dir)
		checkDiskFull(t, dir, big, small, res, "no space left on device")
		t.Logf("disk full on a %d KiB tmpfs: %s", diskFullLimit>>10, res.Err)
		ran++
	})
	t.Run("rlimit-fsize", func(t *testing.T) {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		big, small := diskFullFolder(t, dir)
		cmd := exec.Command(exe, "-test.run=^TestRewriteFilesDiskFull$", "-test.count=1")
		cmd.Env = append(os.Environ(), diskFullChildEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		var res diskFullResult
		_, line, ok := strings.Cut(string(out), "RESULT ")
		if !ok {
			t.Fatalf("child printed no result:\n%s", out)
		}
		line, _, _ = strings.Cut(line, "\n")
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			t.Fatalf("child result %q: %v", line, err)
		}
		checkDiskFull(t, dir, big, small, res, "file too large")
		t.Logf("file size limit of %d KiB in a child process: %s", diskFullLimit>>10, res.Err)
		ran++
	})
	if ran == 0 {
		t.Error("no disk-full variant ran")
	}
}

// TestRewriteFilesLeavesAFileHeldOpen: a runtime that keeps its JSON Lines
// session open and appends to it would go on writing into the replaced
// version, which no name leads to: the rewrite leaves a file another process
// holds open as it is (ErrInUse, counted InUse) and rewrites it once it is
// closed. Before, the runtime's next turn was lost with no error.
func TestRewriteFilesLeavesAFileHeldOpen(t *testing.T) {
	exchangeModes(t, func(t *testing.T, noExchange bool) {
		ctx := context.Background()
		dir := t.TempDir()
		path := filepath.Join(dir, "t-1.jsonl")
		writeMode(t, path, `{"role":"user","media":"`+localRef+`"}`+"\n", 0o600)
		// The runtime's handle: another open file description of the
		// file, in a process of its own, as a runtime has it.
		writer := exec.Command("sh", "-c", `exec 3>>"$1"; read line; printf '%s\n' "$line" >&3`, "sh", path)
		stdin, err := writer.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := writer.Start(); err != nil {
			t.Fatal(err)
		}
		defer writer.Process.Kill()
		waitOpen(t, writer.Process.Pid, path)

		w := openRewriter(t, dir)
		filesRewriterOf(t, w).noExchange.Store(noExchange)
		edit := func(p ref.Place, old []byte) ([]byte, error) {
			return []byte(strings.ReplaceAll(string(old), localRef, bucketRef)), nil
		}
		c, err := w.Rewrite(ctx, edit, RewriteOptions{})
		if c.InUse != 1 || c.Changed != 0 || !errors.Is(err, ErrInUse) {
			t.Fatalf("rewrite of a file held open: %+v, %v; want it left as it is, in use", c, err)
		}

		// The runtime's next turn lands in the file the name leads to.
		stdin.Write([]byte(`{"role":"assistant","content":"turn 2"}` + "\n"))
		stdin.Close()
		if err := writer.Wait(); err != nil {
			t.Fatal(err)
		}
		if got := readString(t, path); !strings.Contains(got, "turn 2") || !strings.Contains(got, localRef) {
			t.Fatalf("the session after the runtime's append:\n%s", got)
		}
		c, err = w.Rewrite(ctx, edit, RewriteOptions{})
		if err != nil || c.Changed != 1 || c.InUse != 0 {
			t.Fatalf("rewrite once closed: %+v, %v", c, err)
		}
		if got := readString(t, path); !strings.Contains(got, "turn 2") || !strings.Contains(got, bucketRef) {
			t.Fatalf("the session rewritten once closed:\n%s", got)
		}
	})
}

// waitOpen waits until process pid has path open.
func waitOpen(t *testing.T, pid int, path string) {
	t.Helper()
	for range 500 {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && target == path {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d did not open %s", pid, path)
}
