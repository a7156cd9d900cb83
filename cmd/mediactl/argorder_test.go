package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// Flags after positional arguments are put before them, each with its value
// (as rclone and restic take them); "--" ends the flags.
func TestFlagsFirst(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	for _, c := range []struct{ in, want string }{
		{"mediactl gc restore RUN --store X", "mediactl gc restore --store X RUN"},
		{"mediactl gc restore RUN --store=X -o json", "mediactl gc restore --store=X -o json RUN"},
		{"mediactl -q gc restore RUN -q --store X", "mediactl -q gc restore -q --store X RUN"},
		{"mediactl cat REF --allow-root D --allow-unverified-local", "mediactl cat --allow-root D --allow-unverified-local REF"},
		{"mediactl cat REF --allow-unverified-local OTHER", "mediactl cat --allow-unverified-local REF OTHER"},
		{"mediactl cat REF -- --allow-root D", "mediactl cat REF -- --allow-root D"},
		{"mediactl cat - --allow-root D", "mediactl cat --allow-root D -"},
		{"mediactl scan --store S", "mediactl scan --store S"},
		{"mediactl nosuch X --store S", "mediactl nosuch X --store S"},
		{"mediactl cat REF --unknown V", "mediactl cat --unknown REF V"},
		{"mediactl", "mediactl"},
	} {
		got := strings.Join(flagsFirst(app, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("flagsFirst(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// The same words, whatever their order.
	in := strings.Fields("mediactl gc restore RUN --store X")
	out := flagsFirst(app, in)
	slices.Sort(in)
	slices.Sort(out)
	if !slices.Equal(in, out) {
		t.Errorf("words lost or added: %v", out)
	}
}
