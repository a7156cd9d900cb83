package retain_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mediactl/mediactl/internal/realworld"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

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

// markedSets runs the retention model over one store and returns the keys it
// keeps and those it does not, whatever their age.
func markedSets(t *testing.T, dir, sessionSpec string) (kept, unmarked []string) {
	t.Helper()
	ctx := context.Background()
	st, src := openPair(t, dir, sessionSpec)
	r, err := retain.Mark(ctx, st, []sessions.Source{src}, retain.MarkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete {
		t.Fatalf("retention read of %s incomplete: %v", dir, r.Problems)
	}
	for id := range r.Len() {
		if r.KeptID(id) {
			kept = append(kept, r.Key(id))
		} else {
			unmarked = append(unmarked, r.Key(id))
		}
	}
	return kept, unmarked
}

// The retention model's own sets, before any age: forge keeps exactly the
// blobs some session needs plus the orphans a conservative name rule rightly
// keeps (a digest in prose, a digest shared across stores); coffer keeps the
// attached and the mentioned files, and nothing else.
func TestRealWorldRetentionSets(t *testing.T) {
	root, truth := realworld.Forge(t)
	var kept, unmarked []string
	for _, d := range []string{"inbound", "generated"} {
		k, u := markedSets(t, filepath.Join(root, ".forge", "files", d), filepath.Join(root, ".forge", "sessions"))
		for _, key := range k {
			kept = append(kept, d+"/"+key)
		}
		for _, key := range u {
			unmarked = append(unmarked, d+"/"+key)
		}
	}
	present := map[string]bool{}
	for _, k := range append(append([]string{}, kept...), unmarked...) {
		present[k] = true
	}
	wantKept := slices.DeleteFunc(append(stringList(truth["needed"]), stringList(truth["orphans_kept_by_token_rule"])...), func(k string) bool { return !present[k] })
	checkSet(t, "forge needed ∪ orphans_kept_by_token_rule", kept, slices.Compact(slices.Sorted(slices.Values(wantKept))))
	wantUnmarked := slices.DeleteFunc(stringList(truth["orphans"]), func(k string) bool { return slices.Contains(stringList(truth["orphans_kept_by_token_rule"]), k) })
	checkSet(t, "forge orphans − orphans_kept_by_token_rule", unmarked, wantUnmarked)

	home, ctruth := realworld.Coffer(t)
	legacy := ctruth["legacy"].(map[string]any)
	media := legacy["stores"].([]any)[0].(string)
	sets := legacy["per_store"].(map[string]any)[media].(map[string]any)
	k, u := markedSets(t, media, "sqlite:"+filepath.Join(home, ".coffer", "coffer.db"))
	// A temporary-like name (a user's "….tmp") is never a blob of the
	// listing, so never a candidate: kept by construction, not by a mark.
	notTemp := func(l []string) []string {
		return slices.DeleteFunc(l, func(k string) bool { return slices.Contains(stringList(sets["temporary_like_names"]), k) })
	}
	checkSet(t, "coffer attached ∪ mentioned_only", k, notTemp(append(stringList(sets["attached"]), stringList(sets["mentioned_only"])...)))
	checkSet(t, "coffer orphans", u, notTemp(stringList(sets["orphans"])))
}
