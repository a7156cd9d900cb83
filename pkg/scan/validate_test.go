package scan_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// Options that cannot make a scan are refused before anything is read, by
// Validate and by Run alike.
func TestValidate(t *testing.T) {
	ctx := context.Background()
	src, err := sessions.Open(ctx, t.TempDir(), sessions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	st, err := store.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	many := make([]sessions.Source, scan.MaxSources+1)
	for i := range many {
		many[i] = src
	}
	for _, c := range []struct {
		opts scan.Options
		want string // "" for valid
	}{
		{scan.Options{Sources: []sessions.Source{src}}, ""},
		{scan.Options{}, "no session source"},
		{scan.Options{Sources: []sessions.Source{src}, CountOnly: true, Stores: []scan.Target{{Store: st}}}, "CountOnly checks no store"},
		{scan.Options{Sources: many}, "at most"},
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
		if _, runErr := scan.Run(ctx, c.opts); runErr == nil || runErr.Error() != err.Error() {
			t.Errorf("Run: %v, want Validate's %v", runErr, err)
		}
	}
}
