package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/trash"
)

// A sweep without the trash that deleted most blobs and left some in a trash
// run reports both: the deletions are not hidden behind the run's line, and
// the run is named with the command that puts its blobs back.
func TestPrintGCNoTrashWithBlobsLeftInARun(t *testing.T) {
	r := &gcStoreJSON{
		StoreReport: &gc.StoreReport{
			Store:  "/srv/agent/.forge/files/inbound",
			Plan:   &gc.Plan{Store: "/srv/agent/.forge/files/inbound", Policy: gc.Refcount},
			Result: &trash.Result{Run: "20261203T120000Z-7-no-trash", Deleted: 2, Trashed: 1, Bytes: 42},
		},
		ExitCode: exitIncomplete,
	}
	var out bytes.Buffer
	printGC(&out, r, gc.RunOptions{Delete: true, NoTrash: true}, false, "")
	got := out.String()
	for _, want := range []string{
		"deleted 2 blobs permanently; 1 more were taken out of the store but not deleted and are in trash run 20261203T120000Z-7-no-trash (42 B in all)",
		"mediactl gc restore --store /srv/agent/.forge/files/inbound 20261203T120000Z-7-no-trash",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "moved 1 blobs (42 B) to the trash") {
		t.Errorf("report counts all bytes as moved to the trash:\n%s", got)
	}
}
