package main

import (
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mediactl/mediactl/pkg/metrics"
)

// metric FILE NAME [LABEL=VALUE...] WANT: FILE, parsed with the Prometheus
// text parser, holds exactly one series of NAME whose labels are exactly the
// given ones, with value WANT: a number, * for any value, or @OTHER for the
// value of the same series in the file OTHER. With !, no series with those
// labels has that value (! ... * : no such series).
func cmdMetric(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 {
		ts.Fatalf("usage: metric FILE NAME [LABEL=VALUE...] WANT")
	}
	want := map[string]string{}
	for _, kv := range args[2 : len(args)-1] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			ts.Fatalf("metric: label %q is not LABEL=VALUE", kv)
		}
		want[k] = v
	}
	values := func(file string) []float64 {
		fams, err := metrics.Parse([]byte(ts.ReadFile(file)))
		ts.Check(err)
		var out []float64
		for _, m := range fams[args[1]].GetMetric() {
			match := len(m.Label) == len(want)
			for _, l := range m.Label {
				match = match && want[l.GetName()] == l.GetValue()
			}
			if match {
				out = append(out, m.GetGauge().GetValue())
			}
		}
		return out
	}
	got := values(args[0])
	w := args[len(args)-1]
	matches := func(v float64) bool {
		switch {
		case w == "*":
			return true
		case strings.HasPrefix(w, "@"):
			other := values(w[1:])
			return len(other) == 1 && other[0] == v
		}
		n, err := strconv.ParseFloat(w, 64)
		ts.Check(err)
		return v == n
	}
	if neg {
		for _, v := range got {
			if matches(v) {
				ts.Fatalf("%s%v = %v, want no such series or another value than %s", args[1], want, v, w)
			}
		}
		return
	}
	if len(got) != 1 {
		ts.Fatalf("%s%v: %d series, want 1", args[1], want, len(got))
	}
	if !matches(got[0]) {
		ts.Fatalf("%s%v = %v, want %s", args[1], want, got[0], w)
	}
}
