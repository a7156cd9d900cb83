package verify_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/verify"
)

// A store where every blob is an anomaly (named .png, not a PNG) lists the
// first --max-listed of them in key order, and counts all of them, in memory
// that does not grow with the store.
func TestManyAnomaliesListedFirstInKeyOrder(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	must(t, err)
	defer st.Close()
	var keys []string
	for i := range 300 {
		c := []byte(fmt.Sprint("not a picture ", i))
		k := name(c, ".png")
		put(t, st, k, c)
		keys = append(keys, k)
	}
	put(t, st, "empty.bin", nil) // a second kind, from the hashers
	keys = append(keys, "empty.bin")
	sort.Strings(keys)
	rep := run(t, verify.Options{Store: st, MaxListed: 25})
	if rep.AnomalyCount != 301 || !rep.Truncated || len(rep.Anomalies) != 25 {
		t.Fatalf("count %d, truncated %v, listed %d; want 301, true, 25", rep.AnomalyCount, rep.Truncated, len(rep.Anomalies))
	}
	var got []string
	for _, a := range rep.Anomalies {
		got = append(got, a.Key)
	}
	if !slices.Equal(got, keys[:25]) {
		t.Errorf("listed %v\nwant the first 25 by key %v", got, keys[:25])
	}
	all := run(t, verify.Options{Store: st})
	if all.AnomalyCount != 301 || all.Truncated || len(all.Anomalies) != 301 {
		t.Errorf("unbounded: count %d, truncated %v, listed %d", all.AnomalyCount, all.Truncated, len(all.Anomalies))
	}
}
