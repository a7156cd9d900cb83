//go:build unix

package sessions

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// nobodyEnv names, in a child process started by runAsNobody, the test it
// runs as the unprivileged user.
const nobodyEnv = "MEDIACTL_TEST_AS_NOBODY"

// nobodyUID is the conventional unprivileged user and group (nobody, nogroup).
const nobodyUID = 65534

// asNobodyChild reports whether this process is the child runAsNobody started
// for this test.
func asNobodyChild(t *testing.T) bool { return os.Getenv(nobodyEnv) == t.Name() }

// runAsNobody runs this test again in a child process as uid and gid 65534,
// with env added, and fails the test if the child fails: permission bits do
// not stop root, so a test of what an operator without write access sees runs
// as somebody they stop. The test binary is copied to a folder everyone can
// read, since go test's build folder is private. Skips unless running as root.
func runAsNobody(t *testing.T, env ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot start a process as another user")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := publicTempDir(t)
	bin := filepath.Join(dir, "sessions.test")
	copyFile(t, exe, bin, 0o755)
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), nobodyEnv+"="+t.Name(), "HOME="+dir, "TMPDIR="+os.TempDir())
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", nobodyUID, out)
	if err != nil {
		t.Fatalf("the test as uid %d failed: %v", nobodyUID, err)
	}
}

// publicTempDir is a temporary folder that every user can enter and read but
// only its owner can write.
func publicTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mediactl-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
