package main

import "testing"

// No bar in CI (any value but false or 0) nor on a dumb terminal.
func TestTerminalRedraws(t *testing.T) {
	for _, c := range []struct {
		ci, term string
		want     bool
	}{
		{"", "xterm-256color", true},
		{"true", "xterm-256color", false},
		{"1", "", false},
		{"false", "xterm", true},
		{"0", "xterm", true},
		{"", "dumb", false},
		{"", "", true},
	} {
		env := map[string]string{"CI": c.ci, "TERM": c.term}
		if got := terminalRedraws(func(k string) string { return env[k] }); got != c.want {
			t.Errorf("CI=%q TERM=%q: bar %v, want %v", c.ci, c.term, got, c.want)
		}
	}
}
