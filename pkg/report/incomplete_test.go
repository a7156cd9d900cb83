package report_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/metrics"
	"github.com/mediactl/mediactl/pkg/owner"
)

// A session that cannot be read leaves every store's counts partial: the
// store says so itself (complete false, the problem in its list), and so
// does its problems gauge, not only the report as a whole.
func TestStoreOfIncompleteRead(t *testing.T) {
	root := t.TempDir()
	sess := filepath.Join(root, ".forge", "sessions")
	for _, d := range []string{sess, filepath.Join(root, ".forge", "files", "inbound"), filepath.Join(root, ".forge", "files", "generated")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(sess, "cut.json"), []byte(`{"task_id": "cut", "messages": [{"role": "user", "co`), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := run(t, "forge", root, owner.Rule{})
	if rep.Complete || len(rep.Stores) != 2 {
		t.Fatalf("complete %v, %d stores", rep.Complete, len(rep.Stores))
	}
	for _, s := range rep.Stores {
		cut := slices.ContainsFunc(s.Problems, func(p string) bool { return strings.Contains(p, "cut.json") })
		if s.Complete || !cut || s.MetricCounts()[metrics.Problems] < 1 {
			t.Errorf("%s: complete %v, problems %v, gauge %d", s.Store, s.Complete, s.Problems, s.MetricCounts()[metrics.Problems])
		}
	}
	if n := strings.Count(strings.Join(rep.Problems, "\n"), "cut.json"); n != len(rep.Stores) {
		t.Errorf("the report's problems name cut.json %d times: %v", n, rep.Problems)
	}
}
