package migrate_test

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
)

// TestJournalWriteFailsPartway: a disk that fills in the middle of a
// record takes part of its line. The run appends nothing after that (the
// next record would be written onto the part and make a line no run can
// read, the journal useless for rollback); the next run reads every record
// written whole and goes on. The full disk is a file size limit
// (RLIMIT_FSIZE) in a child process: the write that crosses it is cut short,
// the next fails, as on a full disk.
func TestJournalWriteFailsPartway(t *testing.T) {
	if path := os.Getenv("MEDIACTL_TEST_JOURNAL_FULL"); path != "" {
		journalOnAFullDisk(path)
		return
	}
	path := filepath.Join(t.TempDir(), "j.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestJournalWriteFailsPartway$")
	cmd.Env = append(os.Environ(), "MEDIACTL_TEST_JOURNAL_FULL="+path)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child: ok") {
		t.Fatalf("the run on a full disk: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(path)
	if strings.Count(string(b), "\n") != 2 || !strings.HasSuffix(string(b), "\n") {
		t.Errorf("the journal holds more than the two records written whole (the part of the third is cut off):\n%s", b)
	}
	j, err := migrate.OpenJournal(path)
	if err != nil {
		t.Fatalf("the next run cannot read the journal the full disk left: %v\n%s", err, b)
	}
	defer j.Close()
	if st := j.State(); st.Runs != 1 || st.Copied.Len() != 1 {
		t.Fatalf("the next run reads %d runs and %d proofs, want 1 and 1 (the records written whole)", st.Runs, st.Copied.Len())
	}
	must(t, j.Append(migrate.Record{T: "copied", Key: dC + ".png", Size: 4, SHA256: dC, ModTime: time.Unix(2, 0)}))
}

// journalOnAFullDisk is the child: two records written whole, then the
// disk fills partway through the third, and a fourth after space is back.
func journalOnAFullDisk(path string) {
	fail := func(msg string) {
		os.Stderr.WriteString("child: " + msg + "\n")
		os.Exit(1)
	}
	signal.Ignore(syscall.SIGXFSZ) // a write past the limit fails with EFBIG instead
	j, err := migrate.OpenJournal(path)
	if err != nil {
		fail(err.Error())
	}
	if err := j.Started("/a", "s3://b"); err != nil {
		fail(err.Error())
	}
	if err := j.Append(migrate.Record{T: "copied", Key: dA + ".png", Size: 3, SHA256: dA, ModTime: time.Unix(1, 0)}); err != nil {
		fail(err.Error())
	}
	fi, _ := os.Stat(path)
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
	full := old
	full.Cur = uint64(fi.Size() + 30)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &full); err != nil {
		fail(err.Error())
	}
	err = j.Append(migrate.Record{T: "copied", Key: dB + ".png", Size: 5, SHA256: dB, ModTime: time.Unix(3, 0)})
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	var jb *migrate.JournalBrokenError
	if !errors.As(err, &jb) {
		fail("the write that filled the disk: " + errString(err))
	}
	err = j.Append(migrate.Record{T: "copied", Key: dC + ".png", Size: 4, SHA256: dC, ModTime: time.Unix(2, 0)})
	if !errors.As(err, &jb) {
		fail("a write after the failed one: " + errString(err))
	}
	if j.Broken() == nil {
		fail("Broken() is nil after a failed write")
	}
	j.Close()
	os.Stdout.WriteString("child: ok\n")
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
