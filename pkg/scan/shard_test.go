package scan_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

// The shards of a split report every reference exactly once: present,
// dangling, outside the store, relative.
func TestShardsReportEveryReferenceOnce(t *testing.T) {
	var contents []string
	for i := range 80 {
		contents = append(contents, fmt.Sprint("picture ", i))
	}
	root, names := forgeDir(t, contents...)
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	var parts []string
	for i, n := range names {
		switch i % 4 {
		case 0:
			parts = append(parts, fmt.Sprintf(`{"type": "image", "media": {"mimeType": "image/png", "uri": %q}}`, filepath.Join(inbound, n)))
		case 1:
			parts = append(parts, fmt.Sprintf(`{"type": "image", "media": {"mimeType": "image/png", "uri": ".forge/files/inbound/%s"}}`, n))
		case 2:
			parts = append(parts, fmt.Sprintf(`{"type": "image", "media": {"mimeType": "image/png", "uri": %q}}`, filepath.Join(inbound, missingName(fmt.Sprint("gone ", i)))))
		case 3:
			parts = append(parts, fmt.Sprintf(`{"type": "image", "media": {"mimeType": "image/png", "uri": "/etc/agent/%d.png"}}`, i))
		}
	}
	writeSession(t, root, "t-1.json", `{"task_id": "t-1", "messages": [{"role": "user", "content": "a \u0026 b", "parts": [`+strings.Join(parts, ", ")+`]}]}`)

	ctx := context.Background()
	st, err := store.Open(ctx, inbound)
	must(t, err)
	defer st.Close()
	src, err := sessions.Open(ctx, filepath.Join(root, ".forge", "sessions"), sessions.Options{})
	must(t, err)
	defer src.Close()
	scanShard := func(s shard.Spec) (*scan.Report, []string) {
		var seen []string
		rep, err := scan.Run(ctx, scan.Options{
			Sources:     []sessions.Source{src},
			Stores:      []scan.Target{{Store: st, Resolver: scan.NewResolver(st, []string{root})}},
			Shard:       s,
			OnReference: func(f scan.Found) { seen = append(seen, f.Ref.Raw) },
		})
		must(t, err)
		return rep, seen
	}
	whole, wholeSeen := scanShard(shard.All)
	slices.Sort(wholeSeen)
	if whole.DanglingReferences == 0 || len(whole.Outside) == 0 {
		t.Fatalf("whole: %d dangling, %d outside: the fixture tells nothing", whole.DanglingReferences, len(whole.Outside))
	}
	for _, n := range []int{2, 3, 7, 16} {
		var seen []string
		var refs, dangling, outside int64
		for k := range n {
			rep, s := scanShard(shard.Spec{K: k, N: n})
			seen = append(seen, s...)
			refs += rep.References
			dangling += rep.DanglingReferences
			outside += int64(len(rep.Outside))
		}
		slices.Sort(seen)
		if !slices.Equal(seen, wholeSeen) {
			t.Errorf("N=%d: the shards saw\n %q\nthe whole scan\n %q", n, seen, wholeSeen)
		}
		if refs != whole.References || dangling != whole.DanglingReferences || outside != int64(len(whole.Outside)) {
			t.Errorf("N=%d: %d references, %d dangling, %d outside; whole %d, %d, %d", n, refs, dangling, outside, whole.References, whole.DanglingReferences, len(whole.Outside))
		}
	}
}
