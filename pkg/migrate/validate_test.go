package migrate_test

import (
	"errors"
	"testing"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/usage"
)

// Options that cannot be used are refused before anything is opened:
// usage errors (and ErrShardedSessionStep for a shard that would rewrite).
func TestValidate(t *testing.T) {
	src := openStore(t, t.TempDir())
	dst := openStore(t, "file://"+t.TempDir())
	var srcs []sessions.Source
	rd, err := sessions.Open(t.Context(), t.TempDir(), sessions.Options{})
	must(t, err)
	defer rd.Close()
	srcs = append(srcs, rd)
	base := func() migrate.RunOptions { return migrate.RunOptions{Options: migrate.Options{From: src, To: dst}} }
	cases := map[string]func(*migrate.RunOptions){
		"no source":                 func(o *migrate.RunOptions) { o.From = nil },
		"rewrite without sessions":  func(o *migrate.RunOptions) { o.Rewrite = true },
		"delete without sessions":   func(o *migrate.RunOptions) { o.DeleteSource = true },
		"rewrite without rewriters": func(o *migrate.RunOptions) { o.Rewrite, o.Sessions = true, srcs },
		"trash dir without delete":  func(o *migrate.RunOptions) { o.TrashDir = "/tmp/x" },
		"negative idle":             func(o *migrate.RunOptions) { o.MinIdle = -1 },
	}
	for name, f := range cases {
		o := base()
		f(&o)
		if err := o.Validate(); !errors.Is(err, usage.Err) {
			t.Errorf("%s: Validate = %v, want a usage error", name, err)
		}
	}
	o := base()
	o.Select.Include = []string{"[x"}
	var pe *migrate.PatternError
	if err := o.Validate(); !errors.As(err, &pe) {
		t.Errorf("a bad pattern: Validate = %v, want a *PatternError", err)
	}
	o = base()
	o.DeleteSource, o.Sessions, o.Select.Shard = true, srcs, shard.Spec{K: 0, N: 2}
	if err := o.Validate(); !errors.Is(err, migrate.ErrShardedSessionStep) {
		t.Errorf("a shard that deletes: Validate = %v, want ErrShardedSessionStep", err)
	}
	o = base()
	o.DeleteSource, o.Sessions = true, srcs
	if err := o.Validate(); err != nil {
		t.Errorf("delete-source with sessions: %v", err)
	}
	if _, err := migrate.Run(t.Context(), func() migrate.RunOptions { o := base(); o.Rewrite = true; return o }()); !errors.Is(err, usage.Err) {
		t.Errorf("Run with a rewrite and no sessions = %v, want the usage error", err)
	}
}
