package storelock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// TestLockAcrossProcesses: two processes that take the lock of one file://
// bucket at the same instant never both hold it. fileblob's conditional
// write is a lock within one process (then a stat and a rename): before, two
// processes both got the lock in every try.
func TestLockAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("MEDIACTL_TEST_LOCK_DIR"); dir != "" {
		lockChild(dir, os.Getenv("MEDIACTL_TEST_LOCK_AT"))
		return
	}
	const tries = 10
	both := 0
	for i := range tries {
		dir := t.TempDir()
		at := strconv.FormatInt(time.Now().Add(150*time.Millisecond).UnixNano(), 10)
		var cmds []*exec.Cmd
		var outs []*strings.Builder
		for range 2 {
			cmd := exec.Command(os.Args[0], "-test.run=^TestLockAcrossProcesses$")
			cmd.Env = append(os.Environ(), "MEDIACTL_TEST_LOCK_DIR="+dir, "MEDIACTL_TEST_LOCK_AT="+at)
			out := &strings.Builder{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outs = append(cmds, cmd), append(outs, out)
		}
		var held [][2]int64 // when each holder took the lock and let it go
		for j, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("try %d, process %d: %v\n%s", i, j, err, outs[j])
			}
			var from, to int64
			if _, err := fmt.Sscanf(outs[j].String()[strings.Index(outs[j].String(), "child:"):], "child: held %d %d", &from, &to); err == nil {
				held = append(held, [2]int64{from, to})
			} else if !strings.Contains(outs[j].String(), "child: locked") {
				t.Fatalf("try %d, process %d said:\n%s", i, j, outs[j])
			}
		}
		// One after the other is fine (a child that started late); at the
		// same time is not.
		if len(held) == 2 && held[0][0] < held[1][1] && held[1][0] < held[0][1] {
			both++
		}
	}
	if both > 0 {
		t.Fatalf("both processes held the lock in %d of %d tries", both, tries)
	}
}

// lockChild takes the lock of the file:// bucket dir at the instant at (Unix
// nanoseconds), holds it a moment and says whether it got it.
func lockChild(dir, at string) {
	ctx := context.Background()
	st, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		fmt.Println("child: open:", err)
		os.Exit(1)
	}
	n, _ := strconv.ParseInt(at, 10, 64)
	time.Sleep(time.Until(time.Unix(0, n)))
	l, err := storelock.Acquire(ctx, st, "test")
	switch {
	case errors.Is(err, storelock.ErrLocked):
		fmt.Println("child: locked")
	case err != nil:
		fmt.Println("child: acquire:", err)
		os.Exit(1)
	default:
		from := time.Now().UnixNano()
		time.Sleep(100 * time.Millisecond)
		to := time.Now().UnixNano()
		l.Release(ctx)
		fmt.Println("child: held", from, to)
	}
}
