package releaseconf

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCheckStatic: a cgo binary (when a C compiler is there) is refused, the
// same program built with CGO_ENABLED=0 passes, and a file that is not ELF
// is an error.
func TestCheckStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ELF binaries are built on Linux")
	}
	dir := t.TempDir()
	// net's cgo resolver makes the default build dynamic when cgo is on.
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"net\"\n\nfunc main() { _, _ = net.LookupHost(\"localhost\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(cgo, out string) error {
		cmd := exec.Command("go", "build", "-o", out, src)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo, "GO111MODULE=off")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Logf("go build CGO_ENABLED=%s: %v\n%s", cgo, err, b)
		}
		return err
	}
	static := filepath.Join(dir, "static")
	if err := build("0", static); err != nil {
		t.Fatal(err)
	}
	if err := CheckStatic(static); err != nil {
		t.Errorf("CGO_ENABLED=0 binary: %v", err)
	}
	if _, err := exec.LookPath("gcc"); err == nil {
		dynamic := filepath.Join(dir, "dynamic")
		if err := build("1", dynamic); err != nil {
			t.Fatal(err)
		}
		if err := CheckStatic(dynamic); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("cgo binary: %v, want dynamically linked", err)
		}
	} else {
		t.Log("no gcc: the dynamic case is not built")
	}
	if err := CheckStatic(src); err == nil {
		t.Error("a Go source file passed as a static binary")
	}
}
