package migrate

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A wait for the rate ends as soon as the run is cancelled: at 1 KiB/s, 1 MiB
// would otherwise take 17 minutes (an operator's Ctrl-C took 52 s before).
func TestLimiterWaitEndsWithTheContext(t *testing.T) {
	l := newLimiter(1024)
	ctx, cancel := context.WithCancel(context.Background())
	if err := l.wait(ctx, 1024); err != nil { // the first second's burst
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	err := l.wait(ctx, 1<<20)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("wait = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("wait took %s after the cancel", d)
	}
}

// The rate holds: 3 KiB at 1 KiB/s with a one-second burst takes about 2 s.
func TestLimiterKeepsTheRate(t *testing.T) {
	l := newLimiter(1024)
	start := time.Now()
	for range 3 {
		if err := l.wait(context.Background(), 1024); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 1500*time.Millisecond {
		t.Fatalf("3 KiB at 1 KiB/s took %s, want about 2 s", d)
	}
	if newLimiter(0) != nil {
		t.Fatal("a zero rate is unlimited")
	}
}
