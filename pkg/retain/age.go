package retain

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseAge reads a retention age as operators write it: Go durations plus
// days and weeks (30d, 2w, 36h, 1d12h, 0). An age is never negative.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "-+") {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	var total time.Duration
	for s != "" {
		i := strings.IndexAny(s, "dw")
		if i < 0 {
			d, err := time.ParseDuration(s)
			if err == nil && (d > maxAge || total > maxAge) {
				err = fmt.Errorf("bad duration %q", s)
			}
			return total + d, err
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		unit := 24 * time.Hour
		if s[i] == 'w' {
			unit *= 7
		}
		// Ages beyond a century are typos; they must not overflow.
		if err != nil || n < 0 || n*float64(unit) > float64(maxAge) || total > maxAge {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		total += time.Duration(n * float64(unit))
		s = s[i+1:]
	}
	return total, nil
}

// maxAge is the longest age ParseAge accepts: a hundred years.
const maxAge = 100 * 365 * 24 * time.Hour

// FormatAge writes a retention age the way ParseAge reads it: 30d, 36h, 90m.
func FormatAge(d time.Duration) string {
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
