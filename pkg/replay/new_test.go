package replay_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/store"
)

// TestNewRefused: a configuration that cannot be held to is an error of New,
// not a Replayer that allows more or less than it says.
func TestNewRefused(t *testing.T) {
	dir := t.TempDir()
	s3 := "s3://media?endpoint=http://127.0.0.1:1&region=us-east-1&use_path_style=true&anonymous=true"
	for _, c := range []struct {
		name string
		cfg  replay.Config
		want string
	}{
		{"missing root", replay.Config{Roots: []string{filepath.Join(dir, "nope")}}, "nope"},
		{"empty root", replay.Config{Roots: []string{""}}, "empty root"},
		{"bad URL", replay.Config{Buckets: []replay.Bucket{{URL: "s3://media?nosuch=1", Prefixes: []string{""}}}}, "nosuch"},
		{"mem bucket", replay.Config{Buckets: []replay.Bucket{{URL: "mem://", Prefixes: []string{""}}}}, "mem://"},
		{"partial placeholder", replay.Config{Buckets: []replay.Bucket{{URL: s3, Prefixes: []string{"u-{user}/"}}}}, "whole segment"},
		{"bad placeholder", replay.Config{Buckets: []replay.Bucket{{URL: s3, Prefixes: []string{"{us er}/"}}}}, "placeholder"},
		{"traversal prefix", replay.Config{Buckets: []replay.Bucket{{URL: s3, Prefixes: []string{"inbound/../"}}}}, `".."`},
		{"absolute prefix", replay.Config{Buckets: []replay.Bucket{{URL: s3, Prefixes: []string{"/inbound/"}}}}, `"/"`},
	} {
		r, err := replay.New(c.cfg)
		if err == nil {
			r.Close()
			t.Errorf("%s: New succeeded", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: New = %v, want it to say %s", c.name, err, c.want)
		}
	}
	if _, err := replay.New(replay.Config{Buckets: []replay.Bucket{{URL: "s3://media?nosuch=1"}}}); !errors.Is(err, store.ErrUsage) {
		t.Errorf("a malformed bucket URL = %v, want it to wrap store.ErrUsage", err)
	}

	// No prefix allows nothing; "" allows the whole bucket (but never the
	// internal folder).
	r := newReplayer(t, replay.Config{Buckets: []replay.Bucket{{URL: s3}}})
	_, _, err := r.Open(ctx, "s3://media/inbound/x.png")
	wantRefused(t, "s3://media/inbound/x.png", err, replay.ErrPrefixNotAllowed)
	r = newReplayer(t, replay.Config{Buckets: []replay.Bucket{{URL: s3, Prefixes: []string{""}}}})
	_, _, err = r.Open(ctx, "s3://media/.mediactl/journal")
	wantRefused(t, "s3://media/.mediactl/journal", err, replay.ErrInvalidReference)

	// Vars given in parts are merged.
	r = newReplayer(t, replay.Config{Buckets: []replay.Bucket{{URL: s3, Prefixes: []string{"agent-inputs/{user}/{thread}/uploads/"}}}})
	_, _, err = r.OpenObject(ctx, "media", "agent-inputs/u1/t2/uploads/f.png", replay.Vars{"user": "u1"}, replay.Vars{"thread": "t1"})
	wantRefused(t, "media/agent-inputs/u1/t2/uploads/f.png", err, replay.ErrPrefixNotAllowed)
	var re *replay.RefusedError
	if errors.As(err, &re) && !strings.Contains(re.Error(), "agent-inputs/{user}/{thread}/uploads/") {
		t.Errorf("the refusal %q does not name the allowed prefixes", re.Error())
	}
}
