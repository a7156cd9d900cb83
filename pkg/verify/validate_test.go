package verify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/verify"
)

// Options that cannot make a check are refused before anything is read, by
// Validate and by Run alike.
func TestValidate(t *testing.T) {
	st, err := store.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts verify.Options
		want string // "" for valid
	}{
		{verify.Options{Store: st}, ""},
		{verify.Options{Store: st, Subset: verify.Subset{N: 7, T: 7}, Sample: 1}, ""},
		{verify.Options{}, "no store"},
		{verify.Options{Store: st, Subset: verify.Subset{N: 0, T: 7}}, "subset 0/7"},
		{verify.Options{Store: st, Subset: verify.Subset{N: 8, T: 7}}, "subset 8/7"},
		{verify.Options{Store: st, Sample: 1.5}, "sample 1.5"},
		{verify.Options{Store: st, Sample: -0.1}, "sample -0.1"},
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
		if _, runErr := verify.Run(context.Background(), c.opts); runErr == nil || runErr.Error() != err.Error() {
			t.Errorf("Run: %v, want Validate's %v", runErr, err)
		}
	}
}
