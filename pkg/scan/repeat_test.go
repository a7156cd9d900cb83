package scan_test

import (
	"fmt"
	"path/filepath"
	"testing"
)

// A reference repeated in one document — a tool call reading the file its
// message holds — is counted every time, and a dangling or outside one is
// listed every time, at each place.
func TestRepeatedReferencesCountEveryTime(t *testing.T) {
	root, names := forgeDir(t, "cat")
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	present := filepath.Join(inbound, names[0])
	gone := filepath.Join(inbound, missingName("gone"))
	outside := "/etc/" + names[0]
	args := func(p string) string { return fmt.Sprintf(`"{\"path\":\"%s\",\"mode\":\"read\"}"`, p) }
	writeSession(t, root, "t-1.json", fmt.Sprintf(`{"messages":[
	  {"parts":[{"media":{"uri":%q}}], "tool_calls":[{"function":{"arguments":%s}}]},
	  {"parts":[{"media":{"uri":%q}}], "tool_calls":[{"function":{"arguments":%s}}]},
	  {"parts":[{"media":{"uri":%q}}, {"media":{"uri":%q}}, {"media":{"uri":%q}}]},
	  {"parts":[{"media":{"uri":%q}}, {"media":{"uri":%q}}]}]}`,
		present, args(present), gone, args(gone), present, gone, present, outside, outside))
	writeSession(t, root, "t-2.json", fmt.Sprintf(`{"uri":%q}`, present))
	for _, jobs := range []int{1, 3} {
		rep := run(t, root, jobs)
		if !rep.Complete || rep.References != 10 {
			t.Fatalf("jobs %d: complete %v, %d references, want 10", jobs, rep.Complete, rep.References)
		}
		if rep.ByStatus["inside"] != 8 || rep.ByStatus["outside"] != 2 {
			t.Errorf("jobs %d: by status %v", jobs, rep.ByStatus)
		}
		if rep.DanglingBlobs != 1 || rep.DanglingReferences != 3 || len(rep.Dangling) != 3 || len(rep.Outside) != 2 {
			t.Errorf("jobs %d: %d dangling blobs, %d dangling references, %d listed, %d outside listed",
				jobs, rep.DanglingBlobs, rep.DanglingReferences, len(rep.Dangling), len(rep.Outside))
		}
		if rep.DistinctBlobs != 3 || rep.Sources[0].DistinctBlobs != 3 {
			t.Errorf("jobs %d: %d distinct blobs (source %d), want 3", jobs, rep.DistinctBlobs, rep.Sources[0].DistinctBlobs)
		}
		seen := map[string]bool{}
		for _, f := range rep.Dangling {
			seen[f.Place.String()] = true
		}
		if len(seen) != 3 {
			t.Errorf("jobs %d: dangling places %v, want 3 different", jobs, seen)
		}
	}
}
