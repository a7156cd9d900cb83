package sha256pair

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestAssemblyUpToDate checks that block_amd64.s is what gen_asm.py writes.
func TestAssemblyUpToDate(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	want, err := exec.Command("python3", "gen_asm.py").Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("block_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("block_amd64.s differs from the output of gen_asm.py: run go generate ./pkg/sha256pair")
	}
}
