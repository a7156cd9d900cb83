package gc_test

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mediactl/mediactl/internal/realworld"
	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// The stores that forge's and coffer's own code wrote: every gc set their
// generator computed comes out exactly.

func TestRealWorldForgeRefcount(t *testing.T) {
	for _, parent := range []string{"", "My Agent & Co"} {
		t.Run("under "+parent, func(t *testing.T) {
			var root string
			var truth map[string]any
			if parent == "" {
				root, truth = realworld.Forge(t)
			} else {
				root, truth = realworld.ForgeIn(t, filepath.Join(t.TempDir(), parent))
			}
			files := filepath.Join(root, ".forge", "files")
			dirs := []string{"inbound", "generated"}
			for _, tc := range []struct {
				minAge time.Duration
				want   string
			}{
				{24 * time.Hour, "expect_gc_delete_default"},
				{time.Nanosecond, "expect_gc_delete_min_age_0"},
			} {
				var got []string
				for _, d := range dirs {
					for _, k := range planKeys(t, filepath.Join(files, d), filepath.Join(root, ".forge", "sessions"), gc.Options{MinAge: tc.minAge}) {
						got = append(got, d+"/"+k)
					}
				}
				checkSet(t, tc.want, got, stringList(truth[tc.want]))
			}
		})
	}
}

func TestRealWorldCoffer(t *testing.T) {
	home, truth := realworld.Coffer(t)
	legacy := truth["legacy"].(map[string]any)
	media := legacy["stores"].([]any)[0].(string)
	sets := legacy["per_store"].(map[string]any)[media].(map[string]any)
	db := "sqlite:" + filepath.Join(home, ".coffer", "coffer.db")
	base := func(l []string) []string {
		for i, s := range l {
			l[i] = path.Base(s)
		}
		return l
	}
	checkSet(t, "ideal_refcount_gc_candidates", planKeys(t, media, db, gc.Options{}), base(stringList(sets["ideal_refcount_gc_candidates"])))
	checkSet(t, "ideal_age30_keep_referenced", planKeys(t, media, db, gc.Options{Policy: gc.Age, MaxAge: 30 * 24 * time.Hour, KeepReferenced: true}),
		base(stringList(sets["ideal_age30_keep_referenced"])))
}

// openPair opens a local store and a session source, closed when the test ends.
func openPair(t *testing.T, dir, sessionSpec string) (store.Store, sessions.Source) {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	src, err := sessions.Open(context.Background(), sessionSpec, sessions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return st, src
}

// planKeys makes a plan of one store against one session source and returns
// its candidates' keys.
func planKeys(t *testing.T, dir, sessionSpec string, opts gc.Options) []string {
	t.Helper()
	ctx := context.Background()
	st, src := openPair(t, dir, sessionSpec)
	opts.Store, opts.Sessions = st, []sessions.Source{src}
	p, err := gc.MakePlan(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Complete {
		t.Fatalf("plan of %s incomplete: %v", dir, p.Problems)
	}
	var keys []string
	for c := range p.Candidates.All() {
		keys = append(keys, c.Key)
	}
	return keys
}

func checkSet(t *testing.T, name string, got, want []string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", name, got, want)
	}
}

func stringList(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}
