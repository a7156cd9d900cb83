package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseAge reads Go durations and the day and week units operators use for
// retention: 30d, 2w, 36h, 1d12h.
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var total time.Duration
	for s != "" {
		i := strings.IndexAny(s, "dw")
		if i < 0 {
			d, err := time.ParseDuration(s)
			return total + d, err
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		unit := 24 * time.Hour
		if s[i] == 'w' {
			unit *= 7
		}
		total += time.Duration(n * float64(unit))
		s = s[i+1:]
	}
	return total, nil
}

// fmtAge renders a retention age the way operators write it: 30d, 36h, 90m.
func fmtAge(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	case d >= time.Hour && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d >= time.Minute && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}
