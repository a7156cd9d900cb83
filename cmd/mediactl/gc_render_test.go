package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/store"
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

// Every kind of what a bucket keeps of a deleted blob has its own line,
// saying how long where the service said so, and the line comes after the
// plan line of a bucket's run, not with -q.
func TestRecoveryNote(t *testing.T) {
	for _, c := range []struct {
		r    gc.Recovery
		want string
	}{
		{gc.Recovery{Kind: store.RecoveryS3Versioning}, "note: the bucket keeps deleted objects (S3 versioning, noncurrent versions kept with no known expiry): a blob gc deletes can be recovered from its noncurrent version"},
		{gc.Recovery{Kind: store.RecoveryS3Versioning, Retention: "30d"}, "(S3 versioning, noncurrent versions kept 30d)"},
		{gc.Recovery{Kind: store.RecoveryS3VersioningSuspended}, "note: S3 versioning is suspended on the bucket (noncurrent versions kept with no known expiry): a blob gc deletes can be recovered from its noncurrent version if it was written while versioning was enabled; one written since is deleted for good"},
		{gc.Recovery{Kind: store.RecoveryGCSVersioning}, "note: the bucket keeps deleted objects (GCS object versioning, noncurrent versions kept with no known expiry)"},
		{gc.Recovery{Kind: store.RecoveryGCSSoftDelete, Retention: "7d"}, "note: the bucket keeps deleted objects (GCS soft delete, 7d): a blob gc deletes can be restored within 7d (gcloud storage restore)"},
		{gc.Recovery{Kind: store.RecoveryAzureVersioning}, "note: the container keeps deleted blobs (Azure blob versioning, versions kept with no known expiry)"},
		{gc.Recovery{Kind: store.RecoveryAzureSoftDelete, Retention: "14d"}, "note: the storage account keeps deleted blobs (Azure soft delete, 14d): a blob gc deletes can be undeleted within 14d"},
		{gc.Recovery{Kind: store.RecoveryNone}, "note: no versioning or soft delete on this bucket: --no-trash and marked deletes are final"},
		{gc.Recovery{Kind: store.RecoveryUnknown, Detail: "GetBucketVersioning: AccessDenied\x1b[2J"}, `note: whether the bucket keeps deleted objects is not known ("GetBucketVersioning: AccessDenied\x1b[2J"): count --no-trash and marked deletes as final`},
		{gc.Recovery{Kind: store.RecoveryUnknown, Detail: "GetBucketVersioning: AccessDenied"}, `not known (GetBucketVersioning: AccessDenied): count`},
	} {
		if got := recoveryNote(&c.r); !strings.Contains(got, c.want) {
			t.Errorf("%+v:\n got %s\nwant %s", c.r, got, c.want)
		}
	}

	r := &gcStoreJSON{StoreReport: &gc.StoreReport{
		Store:          "s3://media/",
		Plan:           &gc.Plan{Store: "s3://media/", Policy: gc.Refcount},
		DeleteRecovery: &gc.Recovery{Kind: store.RecoveryS3Versioning, Retention: "30d"},
	}}
	for _, quiet := range []bool{false, true} {
		var out bytes.Buffer
		printGC(&out, r, gc.RunOptions{}, quiet, "")
		lines := strings.Split(out.String(), "\n")
		if quiet {
			if strings.Contains(out.String(), "note:") {
				t.Errorf("-q prints the note:\n%s", out.String())
			}
			continue
		}
		if len(lines) < 2 || !strings.HasPrefix(lines[0], "gc s3://media/") || !strings.HasPrefix(lines[1], "note: the bucket keeps deleted objects") {
			t.Errorf("the note is not the line after the plan's:\n%s", out.String())
		}
	}
}
