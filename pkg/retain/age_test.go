package retain_test

import (
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/retain"
)

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "36h": 36 * time.Hour,
		"1d12h": 36 * time.Hour, "0": 0, " 90m ": 90 * time.Minute, "1.5d": 36 * time.Hour,
	} {
		if got, err := retain.ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "-1d", "3x", "1d-2h", "1e9d", "1e5w", "999999999999h", "-5m", "+3h"} {
		if got, err := retain.ParseAge(bad); err == nil {
			t.Errorf("ParseAge(%q) = %v, want an error", bad, got)
		}
	}
	for _, d := range []time.Duration{30 * 24 * time.Hour, 36 * time.Hour, 90 * time.Minute, 1500 * time.Millisecond} {
		if back, err := retain.ParseAge(retain.FormatAge(d)); err != nil || back != d {
			t.Errorf("FormatAge(%v) = %q reads back as %v, %v", d, retain.FormatAge(d), back, err)
		}
	}
}

// FuzzParseAge: no input panics, and what parses is never negative.
func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"30d", "2w", "1d12h", "0", "-5m", "1.5d3h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := retain.ParseAge(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseAge(%q) = %v", s, d)
		}
	})
}
