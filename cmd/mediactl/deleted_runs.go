package main

// Deleted runs: the record of a bucket's deletes for good where its service
// keeps deleted objects, as gc runs lists them and gc restore brings them back.

import (
	"fmt"
	"io"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
)

// deletedRunJSON is a deleted run in gc runs.
type deletedRunJSON struct {
	Run   string    `json:"run"`
	Time  time.Time `json:"time"`
	Blobs int64     `json:"blobs"`
	Bytes int64     `json:"bytes"`
	Shard string    `json:"shard,omitempty"`
	// Recovery is what the service said it keeps (a delete_recovery kind);
	// KeptUntil, when it named a retention, when that ends.
	Recovery  string    `json:"recovery"`
	KeptUntil time.Time `json:"kept_until,omitzero"`
	// Restorable says whether gc restore brings the run back from the
	// service's versions (S3 versions, GCS object versions); elsewhere the
	// docs' recipe does.
	Restorable bool `json:"restorable"`
}

func deletedRunsJSON(runs []trash.DeletedRun) []deletedRunJSON {
	var out []deletedRunJSON
	for _, r := range runs {
		out = append(out, deletedRunJSON{Run: r.Run, Time: r.Header.Time, Blobs: r.Blobs, Bytes: r.Bytes, Shard: r.Shard,
			Recovery: r.Header.Recovery, KeptUntil: r.Header.KeptUntil, Restorable: restoresFromVersions(r.Header.Recovery)})
	}
	return out
}

// restoresFromVersions says whether gc restore brings back a deleted run
// whose service keeps deleted objects as kind says.
func restoresFromVersions(kind string) bool { return store.RestoresKind(kind) }

// keptBy names, for a gc runs line, what keeps a deleted run's blobs.
var keptBy = map[string]string{
	store.RecoveryS3Versioning:          "s3 versions",
	store.RecoveryS3VersioningSuspended: "s3 versions (those written while versioning was enabled)",
	store.RecoveryGCSVersioning:         "gcs object versions",
	store.RecoveryGCSSoftDelete:         "gcs soft delete",
	store.RecoveryAzureVersioning:       "azure versions",
	store.RecoveryAzureSoftDelete:       "azure soft delete",
}

func printDeletedRuns(w io.Writer, runs []deletedRunJSON) {
	for _, r := range runs {
		until := ", until someone or a lifecycle rule removes them"
		if !r.KeptUntil.IsZero() {
			until = " until " + r.KeptUntil.Format(time.DateOnly)
		}
		how := "recoverable from " + keptBy[r.Recovery] + until
		if !r.Restorable {
			how = "kept by " + keptBy[r.Recovery] + until + "; gc restore cannot bring them back here: see docs/gc.md for the recipe"
		}
		line := fmt.Sprintf("%s  %s blobs  %s  deleted, %s", r.Run, humanize.Comma(r.Blobs), humanize.IBytes(uint64(r.Bytes)), how)
		if r.Shard != "" {
			line += "  (shard " + r.Shard + ")"
		}
		fmt.Fprintln(w, line)
	}
}

// printDeletedRestore says what gc restore of a deleted run did.
func printDeletedRestore(w io.Writer, d *trash.DeletedRestore, run string) {
	for _, k := range d.Kept {
		fmt.Fprintf(w, "kept            %s  %s\n", printable(k.Key), k.Reason)
	}
	for _, k := range d.NotRecoverable {
		fmt.Fprintf(w, "not recoverable %s  %s\n", printable(k.Key), k.Reason)
	}
	fmt.Fprintf(w, "restored %s blobs (%s) of deleted run %s from the bucket's versions\n", humanize.Comma(d.Restored), humanize.IBytes(uint64(d.Bytes)), run)
}

// versionRecipe is how to bring a blob back by hand from what a service
// keeps, by kind, where gc restore does not (docs/gc.md's table).
var versionRecipe = map[string]string{
	store.RecoveryGCSSoftDelete:   "gcloud storage ls --soft-deleted gs://B/KEY, then gcloud storage restore 'gs://B/KEY#GENERATION'",
	store.RecoveryAzureVersioning: "az storage blob list --container-name C --prefix KEY --include v, then az storage blob copy start --destination-container C --destination-blob KEY --source-uri 'https://A.blob.core.windows.net/C/KEY?versionid=V'",
	store.RecoveryAzureSoftDelete: "az storage blob undelete --container-name C --name KEY",
}

// versionRestoreHint is the hint for what gc restore does not bring back.
func versionRestoreHint(e *store.VersionRestoreUnsupportedError) string {
	h := "gc restore brings deleted runs back from S3 versions and GCS object versions only; the run's record, .mediactl/deleted/RUN/*.jsonl in the store, lists each key"
	if r, ok := versionRecipe[e.Kind]; ok {
		h += "; recover each by hand: " + r
	}
	return h
}
