package report_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/report"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

// Options that cannot make a report are refused before anything is read, by
// Validate and by Run alike: a size cap is not evaluated on a shard.
func TestValidate(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src, err := sessions.Open(ctx, t.TempDir(), sessions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sh, err := shard.Parse("1/4", nil)
	if err != nil {
		t.Fatal(err)
	}
	stores, srcs := []scan.Target{{Store: st}}, []sessions.Source{src}
	for _, c := range []struct {
		opts report.Options
		want string // "" for valid
	}{
		{report.Options{Stores: stores, Sources: srcs}, ""},
		{report.Options{Stores: stores, Sources: srcs, Shard: sh}, ""},
		{report.Options{Stores: stores, Sources: srcs, MaxSize: 1 << 20}, ""},
		{report.Options{Sources: srcs}, "no store"},
		{report.Options{Stores: stores}, "no session source"},
		{report.Options{Stores: stores, Sources: srcs, Shard: sh, MaxSize: 1 << 20}, "size cap"},
	} {
		err := c.opts.Validate()
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.opts, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate: %v, want %q", err, c.want)
		}
		if _, runErr := report.Run(ctx, c.opts); !errors.Is(runErr, err) && (runErr == nil || runErr.Error() != err.Error()) {
			t.Errorf("Run: %v, want Validate's %v", runErr, err)
		}
	}
}
