package gc_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"google.golang.org/api/iterator"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// versioned is an S3 bucket on gofakes3 (in-process), with versioning
// enabled or not, and a session folder that names kept.png.
type versioned struct {
	st  store.Store
	c   *s3.Client
	src sessions.Source
	// blobs are the bytes written, by key.
	blobs map[string]string
	etags map[string]string
}

func newVersioned(t *testing.T, versioning bool, wrap func(http.Handler) http.Handler, keys ...string) *versioned {
	t.Helper()
	ctx := context.Background()
	srv := storetest.StartS3(t, wrap)
	st, err := store.Open(ctx, srv.Bucket(t, "versions"))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	v := &versioned{st: st, blobs: map[string]string{}, etags: map[string]string{}}
	if !st.(*store.BucketStore).Blob().As(&v.c) {
		t.Fatal("no *s3.Client")
	}
	if versioning {
		_, err = v.c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
			Bucket:                  aws.String("versions"),
			VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled},
		})
		must(t, err)
	}
	v.fill(t, keys...)
	return v
}

// fill writes kept.png and keys into the store, and a session folder that
// names kept.png.
func (v *versioned) fill(t *testing.T, keys ...string) {
	t.Helper()
	ctx := context.Background()
	st := v.st
	for _, k := range append([]string{"kept.png"}, keys...) {
		content := fmt.Sprintf("the bytes of %s", k)
		must(t, st.Put(ctx, k, strings.NewReader(content), store.PutOptions{}))
		e, err := st.Stat(ctx, k)
		must(t, err)
		v.blobs[k], v.etags[k] = content, e.ETag
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"messages":[{"parts":[{"media":{"uri":"kept.png"}}]}]}`), 0o600))
	var err error
	v.src, err = sessions.Open(ctx, dir, sessions.Options{})
	must(t, err)
	t.Cleanup(func() { v.src.Close() })
}

// run is gc --delete on the bucket, two days from now (every blob is old
// enough): the first marks, a later one with a grace of a nanosecond
// deletes what the first marked.
func (v *versioned) run(t *testing.T, ctx context.Context, grace time.Duration) *gc.StoreReport {
	t.Helper()
	rep, err := gc.Run(ctx, gc.RunOptions{
		Options: gc.Options{Sessions: []sessions.Source{v.src}, Now: time.Now().Add(48 * time.Hour)},
		Stores:  []store.Store{v.st},
		Delete:  true,
		Grace:   grace,
		Guards:  gc.Guards{MaxDeletePercent: 100},
	})
	must(t, err)
	return rep.Stores[0]
}

// markAndDelete marks every blob but kept.png and deletes them in a later
// run; it returns the report of the deleting run.
func (v *versioned) markAndDelete(t *testing.T, ctx context.Context) *gc.StoreReport {
	t.Helper()
	s := v.run(t, context.Background(), 0)
	if s.Marks == nil || s.Marks.Marked != int64(len(v.blobs)-1) {
		t.Fatalf("first run: %v %v %+v", s.Outcome, s.Err, s.Marks)
	}
	time.Sleep(1100 * time.Millisecond) // the mark run's name is to the second
	return v.run(t, ctx, time.Nanosecond)
}

// has reports whether key holds the bytes and ETag it was written with.
func (v *versioned) has(t *testing.T, key string) bool {
	t.Helper()
	e, err := v.st.Stat(context.Background(), key)
	if err != nil {
		return false
	}
	r, err := v.st.Open(context.Background(), key)
	must(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	must(t, err)
	if sha256.Sum256(b) != sha256.Sum256([]byte(v.blobs[key])) || e.ETag != v.etags[key] {
		t.Errorf("%s holds %q (ETag %s), want %q (ETag %s)", key, b, e.ETag, v.blobs[key], v.etags[key])
	}
	return true
}

// purgeVersions removes every version of key, as an expiry would.
func (v *versioned) purgeVersions(t *testing.T, key string) {
	t.Helper()
	ctx := context.Background()
	vs, err := v.c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("versions"), Prefix: aws.String(key)})
	must(t, err)
	for _, ver := range vs.Versions {
		if aws.ToString(ver.Key) == key {
			_, err := v.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("versions"), Key: ver.Key, VersionId: ver.VersionId})
			must(t, err)
		}
	}
}

// TestRestoreDeletedFromVersions: on a bucket with S3 versioning (gofakes3),
// the run that deletes marked blobs keeps a record of them, gc runs lists
// it, and gc restore of it brings every blob back with its bytes and ETag;
// a key uploaded again since is not overwritten, and a blob whose version
// was removed meanwhile is reported not recoverable (incomplete), both left
// in the record.
func TestRestoreDeletedFromVersions(t *testing.T) {
	ctx := context.Background()
	v := newVersioned(t, true, nil, "orphan-one.png", "deep/orphan-two.png", "uploaded-again.png", "expired-version.png")
	s := v.markAndDelete(t, ctx)
	m := s.Marks
	if s.Outcome != outcome.OK || m == nil || m.Deleted == nil || m.Deleted.Deleted != 4 || m.DeletedRun == "" {
		t.Fatalf("deleting run: %v %v %+v", s.Outcome, s.Err, m)
	}
	for _, k := range []string{"orphan-one.png", "deep/orphan-two.png", "uploaded-again.png", "expired-version.png"} {
		if _, err := v.st.Stat(ctx, k); err == nil {
			t.Fatalf("%s is still in the store", k)
		}
	}
	runs, err := trash.Deleteds(ctx, v.st)
	must(t, err)
	if len(runs) != 1 || runs[0].Run != m.DeletedRun || runs[0].Blobs != 4 || runs[0].Header.Recovery != store.RecoveryS3Versioning || len(runs[0].Header.Marks) != 1 {
		t.Fatalf("deleted runs %+v, want %s with 4 blobs", runs, m.DeletedRun)
	}
	if marks, _ := trash.Marks(ctx, v.st); len(marks) != 0 {
		t.Errorf("marks left after the deletes: %+v", marks)
	}
	// The batch was checked by listing its key range (4 of the store's 5
	// blobs): the record holds each blob's ETag as Stat gave it all the
	// same, so that the restore finds the version by it.
	lines, err := trash.DeletedBlobs(ctx, v.st, m.DeletedRun)
	must(t, err)
	if len(lines) != 4 {
		t.Fatalf("the record lists %+v, want the 4 blobs", lines)
	}
	for _, d := range lines {
		if d.ETag == "" || d.ETag != v.etags[d.Key] {
			t.Errorf("the record of %s holds ETag %q, want %q as Stat gave it", d.Key, d.ETag, v.etags[d.Key])
		}
	}
	// The mark run is gone; its restore names the deleted run.
	var noRun *trash.NoRunError
	if _, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", runs[0].Header.Marks[0]); !errors.As(err, &noRun) || noRun.DeletedIn != m.DeletedRun {
		t.Errorf("restore of the mark run: %v, want a NoRunError naming %s", err, m.DeletedRun)
	}

	must(t, v.st.Put(ctx, "uploaded-again.png", strings.NewReader("uploaded again"), store.PutOptions{}))
	v.purgeVersions(t, "expired-version.png")

	rr, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", m.DeletedRun)
	must(t, err)
	d := rr.Deleted
	if d == nil || d.Restored != 2 || rr.Outcome != outcome.Incomplete {
		t.Fatalf("restore: %v %+v", rr.Outcome, d)
	}
	if len(d.Kept) != 1 || d.Kept[0].Key != "uploaded-again.png" || len(d.NotRecoverable) != 1 || d.NotRecoverable[0].Key != "expired-version.png" {
		t.Errorf("kept %v, not recoverable %v; want uploaded-again.png and expired-version.png", d.Kept, d.NotRecoverable)
	}
	if rr.Result == nil || rr.Result.Restored != 2 || len(rr.Result.Kept) != 1 {
		t.Errorf("the restore's result %+v", rr.Result)
	}
	for _, k := range []string{"kept.png", "orphan-one.png", "deep/orphan-two.png"} {
		if !v.has(t, k) {
			t.Errorf("%s is not back", k)
		}
	}
	if r, err := v.st.Open(ctx, "uploaded-again.png"); err == nil {
		b, _ := io.ReadAll(r)
		r.Close()
		if string(b) != "uploaded again" {
			t.Errorf("the upload since the delete was overwritten with %q", b)
		}
	}
	runs, err = trash.Deleteds(ctx, v.st)
	must(t, err)
	if len(runs) != 1 || runs[0].Blobs != 2 {
		t.Fatalf("after the restore the record lists %+v, want the 2 not restored", runs)
	}
	// gc purge drops the record and deletes nothing else.
	pr, err := trash.Purge(ctx, locktest.Of(t, v.st), time.Now().Add(time.Hour), store.Recovery{})
	if err != nil || len(pr.Runs) != 1 || pr.Runs[0] != m.DeletedRun || pr.Blobs != 0 {
		t.Fatalf("purge: %+v, %v; want the deleted run's record, no blob", pr, err)
	}
	if runs, _ := trash.Deleteds(ctx, v.st); len(runs) != 0 {
		t.Errorf("after the purge: %+v", runs)
	}
	if !v.has(t, "orphan-one.png") {
		t.Error("the purge of a deleted run's record deleted a restored blob")
	}
}

// TestDeletesWithoutVersionsKeepNoRecord: on a bucket that keeps no
// versions, the deleting run is as before: no record, nothing to restore.
func TestDeletesWithoutVersionsKeepNoRecord(t *testing.T) {
	ctx := context.Background()
	v := newVersioned(t, false, nil, "orphan-one.png")
	s := v.markAndDelete(t, ctx)
	if s.Outcome != outcome.OK || s.Marks == nil || s.Marks.Deleted == nil || s.Marks.Deleted.Deleted != 1 || s.Marks.DeletedRun != "" {
		t.Fatalf("deleting run: %v %v %+v", s.Outcome, s.Err, s.Marks)
	}
	if s.DeleteRecovery == nil || s.DeleteRecovery.Kind != store.RecoveryNone {
		t.Errorf("delete_recovery %+v, want none", s.DeleteRecovery)
	}
	if runs, err := trash.Deleteds(ctx, v.st); err != nil || len(runs) != 0 {
		t.Errorf("deleted runs %+v, %v; want none", runs, err)
	}
}

// TestDeletedRecordSurvivesInterrupt: a deleting run interrupted while its
// first batch's delete is in flight (the context is cancelled as the
// DeleteObjects request reaches the server, and the check of the next batch
// is held until then) has recorded every blob that is gone, and the restore
// brings them all back.
func TestDeletedRecordSurvivesInterrupt(t *testing.T) {
	ctx := context.Background()
	var keys []string
	for i := range 1500 {
		keys = append(keys, fmt.Sprintf("m/orphan-%04d.png", i))
	}
	var mu sync.Mutex
	var cancel context.CancelFunc
	deleting := make(chan struct{})
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			armed := cancel != nil
			_, isDelete := r.URL.Query()["delete"]
			isDelete = isDelete && r.Method == http.MethodPost
			// The check of the second batch (keys 1000 on, in key order)
			// lists from just before its first key.
			nextBatch := r.Method == http.MethodGet && r.URL.Query().Get("start-after") > keys[999]
			if armed && isDelete {
				cancel()
				select {
				case <-deleting:
				default:
					close(deleting)
				}
			}
			hold := armed && nextBatch
			mu.Unlock()
			if hold {
				<-deleting // the next batch's check: after the interrupt
			}
			next.ServeHTTP(w, r)
		})
	}
	v := newVersioned(t, true, wrap, keys...)
	s := v.run(t, context.Background(), 0)
	if s.Marks == nil || s.Marks.Marked != 1500 {
		t.Fatalf("first run: %+v", s.Marks)
	}
	time.Sleep(1100 * time.Millisecond)
	rctx, c := context.WithCancel(ctx)
	defer c()
	mu.Lock()
	cancel = c
	mu.Unlock()
	s = v.run(t, rctx, time.Nanosecond)
	if s.Outcome != outcome.Interrupted || s.Marks == nil || s.Marks.Deleted == nil || s.Marks.DeletedRun == "" {
		t.Fatalf("interrupted run: %v %v %+v %+v", s.Outcome, s.Err, s.Marks, s.Marks.Deleted)
	}
	var gone []string
	for _, k := range keys {
		if _, err := v.st.Stat(ctx, k); err != nil {
			gone = append(gone, k)
		}
	}
	if len(gone) == 0 || len(gone) == len(keys) || int64(len(gone)) != s.Marks.Deleted.Deleted {
		t.Fatalf("%d blobs gone, %d reported deleted, of %d: want a part", len(gone), s.Marks.Deleted.Deleted, len(keys))
	}
	runs, err := trash.Deleteds(ctx, v.st)
	must(t, err)
	if len(runs) != 1 || runs[0].Run != s.Marks.DeletedRun {
		t.Fatalf("deleted runs %+v", runs)
	}
	recorded := map[string]bool{}
	lines, err := trash.DeletedBlobs(ctx, v.st, runs[0].Run)
	must(t, err)
	for _, d := range lines {
		recorded[d.Key] = true
	}
	sort.Strings(gone)
	for _, k := range gone {
		if !recorded[k] {
			t.Fatalf("%s was deleted and is not in the record", k)
		}
	}
	rr, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", runs[0].Run)
	must(t, err)
	if rr.Outcome != outcome.OK || rr.Deleted == nil || rr.Deleted.Restored != int64(len(gone)) {
		t.Fatalf("restore: %v %+v", rr.Outcome, rr.Deleted)
	}
	for _, k := range keys {
		if !v.has(t, k) {
			t.Fatalf("%s is not in the store after the restore", k)
		}
	}
	if runs, _ := trash.Deleteds(ctx, v.st); len(runs) != 0 {
		t.Errorf("the record stays after a whole restore: %+v", runs)
	}
}

// TestMarksPassNamesItsRunsApart: a run whose marks pass deletes the blobs
// an earlier run marked (recorded as a deleted run, on a bucket with S3
// versioning) and marks fresh candidates, both in one second, names the
// deleted run and the mark run apart: gc restore of the deleted run's name
// brings the deleted blobs back in one call, byte-identical, and leaves the
// new marks as they are.
func TestMarksPassNamesItsRunsApart(t *testing.T) {
	ctx := context.Background()
	orphans := []string{"orphan-one.png", "deep/orphan-two.png"}
	v := newVersioned(t, true, nil, orphans...)
	s := v.run(t, ctx, 0)
	if s.Marks == nil || s.Marks.Marked != 2 {
		t.Fatalf("first run: %v %v %+v", s.Outcome, s.Err, s.Marks)
	}
	time.Sleep(1100 * time.Millisecond) // the mark run's name is to the second
	fresh := []string{"fresh-one.png", "fresh-two.png"}
	for _, k := range fresh {
		must(t, v.st.Put(ctx, k, strings.NewReader("the bytes of "+k), store.PutOptions{}))
	}
	// Every run the pass starts starts in this one second.
	at := time.Now().Truncate(time.Second)
	defer gc.SetRunClock(func() time.Time { return at })()
	s = v.run(t, ctx, time.Nanosecond)
	m := s.Marks
	if s.Outcome != outcome.OK || m == nil || m.Deleted == nil || m.Deleted.Deleted != 2 || m.Marked != 2 || m.DeletedRun == "" || m.Run == "" {
		t.Fatalf("deleting and marking run: %v %v %+v", s.Outcome, s.Err, m)
	}
	if m.DeletedRun == m.Run {
		t.Fatalf("the deleted run and the mark run are both %s", m.Run)
	}
	if m.DeletedRun != trash.RunID(at) || m.Run != trash.RunID(at.Add(time.Second)) {
		t.Errorf("deleted run %s, mark run %s; want %s and the next second's", m.DeletedRun, m.Run, trash.RunID(at))
	}
	for _, k := range orphans {
		if _, err := v.st.Stat(ctx, k); !errors.Is(err, store.ErrNotExist) {
			t.Fatalf("%s after the deleting run: %v", k, err)
		}
	}

	rr, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", m.DeletedRun)
	must(t, err)
	if rr.MarkRun || rr.Outcome != outcome.OK || rr.Deleted == nil || rr.Deleted.Restored != 2 {
		t.Fatalf("restore of %s: mark run %v, %v %+v; want the 2 deleted blobs back", m.DeletedRun, rr.MarkRun, rr.Outcome, rr.Deleted)
	}
	for _, k := range append([]string{"kept.png"}, orphans...) {
		if !v.has(t, k) {
			t.Errorf("%s is not back after one restore", k)
		}
	}
	if runs, _ := trash.Deleteds(ctx, v.st); len(runs) != 0 {
		t.Errorf("the record stays after a whole restore: %+v", runs)
	}
	marks, err := trash.Marks(ctx, v.st)
	must(t, err)
	if len(marks) != 1 || marks[0].Run != m.Run || len(marks[0].Marks) != 2 {
		t.Fatalf("mark runs after the restore %+v, want %s with the 2 fresh blobs", marks, m.Run)
	}
	for i, mk := range marks[0].Marks {
		if mk.Key != fresh[i] {
			t.Errorf("marked %s, want %s", mk.Key, fresh[i])
		}
	}
}

// TestRestoreDeletedFromGCSVersions: on a GCS bucket with object versioning
// (fake-gcs-server, in-process), the deleted run is recorded as on S3, and
// gc restore brings its blobs back from their noncurrent generations.
func TestRestoreDeletedFromGCSVersions(t *testing.T) {
	ctx := context.Background()
	v := newVersionedGCS(t, "orphan-one.png", "deep/orphan-two.png")
	s := v.markAndDelete(t, ctx)
	m := s.Marks
	if s.Outcome != outcome.OK || m == nil || m.Deleted == nil || m.Deleted.Deleted != 2 || m.DeletedRun == "" {
		t.Fatalf("deleting run: %v %v %+v", s.Outcome, s.Err, m)
	}
	if s.DeleteRecovery == nil || s.DeleteRecovery.Kind != store.RecoveryGCSVersioning {
		t.Fatalf("delete_recovery %+v", s.DeleteRecovery)
	}
	rr, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", m.DeletedRun)
	must(t, err)
	if rr.Outcome != outcome.OK || rr.Deleted == nil || rr.Deleted.Restored != 2 {
		t.Fatalf("restore: %v %+v", rr.Outcome, rr.Deleted)
	}
	for _, k := range []string{"orphan-one.png", "deep/orphan-two.png"} {
		r, err := v.st.Open(ctx, k)
		if err != nil {
			t.Errorf("%s is not back: %v", k, err)
			continue
		}
		b, err := io.ReadAll(r)
		r.Close()
		must(t, err)
		if sha256.Sum256(b) != sha256.Sum256([]byte(v.blobs[k])) {
			t.Errorf("%s holds %q, want %q", k, b, v.blobs[k])
		}
	}
}

// dropVersions removes every version of the bucket's object key (S3) or
// every generation (GCS), as an expiry would.
func (v *versioned) dropVersions(t *testing.T, key string) {
	t.Helper()
	if v.c != nil {
		v.purgeVersions(t, key)
		return
	}
	ctx := context.Background()
	var c *storage.Client
	if !v.st.(*store.BucketStore).Blob().As(&c) {
		t.Fatal("no *storage.Client")
	}
	b := c.Bucket("versions")
	it := b.Objects(ctx, &storage.Query{Prefix: key, Versions: true})
	n := 0
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		must(t, err)
		if a.Name == key {
			must(t, b.Object(key).Generation(a.Generation).Delete(ctx))
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no generation of %s to remove", key)
	}
}

// sweep is gc --delete on the bucket two days from now, with opts' way of
// removing (NoTrash or CopyToTrash); it returns the store's report.
func (v *versioned) sweep(t *testing.T, opts gc.RunOptions) *gc.StoreReport {
	t.Helper()
	opts.Options = gc.Options{Sessions: []sessions.Source{v.src}, Now: time.Now().Add(48 * time.Hour)}
	opts.Stores = []store.Store{v.st}
	opts.Delete = true
	opts.Guards = gc.Guards{MaxDeletePercent: 100}
	rep, err := gc.Run(context.Background(), opts)
	must(t, err)
	return rep.Stores[0]
}

// recorded returns the lines of deleted run run, by key.
func (v *versioned) recorded(t *testing.T, run string) map[string]trash.Deleted {
	t.Helper()
	lines, err := trash.DeletedBlobs(context.Background(), v.st, run)
	must(t, err)
	out := map[string]trash.Deleted{}
	for _, d := range lines {
		out[d.Key] = d
	}
	return out
}

// newVersionedGCS is newVersioned on fake-gcs-server (in-process) with
// object versioning.
func newVersionedGCS(t *testing.T, keys ...string) *versioned {
	t.Helper()
	ctx := context.Background()
	srv := storetest.StartGCS(t)
	st, err := store.Open(ctx, srv.Bucket(t, "versions"))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	var c *storage.Client
	if !st.(*store.BucketStore).Blob().As(&c) {
		t.Fatal("no *storage.Client")
	}
	_, err = c.Bucket("versions").Update(ctx, storage.BucketAttrsToUpdate{VersioningEnabled: true})
	must(t, err)
	v := &versioned{st: st, blobs: map[string]string{}, etags: map[string]string{}}
	v.fill(t, keys...)
	return v
}

// TestNoTrashDeletesRestoreFromVersions: gc --delete --no-trash on a bucket
// whose service keeps deleted objects records its deletes as a deleted run,
// as the delete of marked blobs does (S3 versioning on gofakes3, GCS object
// versioning on fake-gcs-server): the report names it, gc runs lists it,
// and gc restore brings every blob back byte-identical, the record then
// gone. On a bucket that keeps nothing no record is made.
func TestNoTrashDeletesRestoreFromVersions(t *testing.T) {
	orphans := []string{"orphan-one.png", "deep/orphan-two.png", "orphan-three.png"}
	for _, tc := range []struct {
		name string
		open func(t *testing.T) *versioned
		kind string
	}{
		{"s3", func(t *testing.T) *versioned { return newVersioned(t, true, nil, orphans...) }, store.RecoveryS3Versioning},
		{"gcs", func(t *testing.T) *versioned { return newVersionedGCS(t, orphans...) }, store.RecoveryGCSVersioning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			v := tc.open(t)
			s := v.sweep(t, gc.RunOptions{NoTrash: true})
			if s.Outcome != outcome.OK || s.Result == nil || s.Result.Deleted != 3 || s.Result.Run != "" || s.DeletedRun == "" {
				t.Fatalf("--no-trash run: %v %v %+v, deleted run %q", s.Outcome, s.Err, s.Result, s.DeletedRun)
			}
			if s.DeleteRecovery == nil || s.DeleteRecovery.Kind != tc.kind {
				t.Errorf("delete_recovery %+v, want %s", s.DeleteRecovery, tc.kind)
			}
			for _, k := range orphans {
				if _, err := v.st.Stat(ctx, k); !errors.Is(err, store.ErrNotExist) {
					t.Fatalf("%s after the --no-trash run: %v", k, err)
				}
			}
			runs, err := trash.Deleteds(ctx, v.st)
			must(t, err)
			if len(runs) != 1 || runs[0].Run != s.DeletedRun || runs[0].Blobs != 3 || runs[0].Header.Recovery != tc.kind || runs[0].Header.Command != "gc" || len(runs[0].Header.Marks) != 0 {
				t.Fatalf("deleted runs %+v, want %s with 3 blobs", runs, s.DeletedRun)
			}
			lines := v.recorded(t, s.DeletedRun)
			for _, k := range orphans {
				d, ok := lines[k]
				switch {
				case !ok:
					t.Errorf("%s is not in the record", k)
				case d.Trashed != "":
					t.Errorf("%s recorded as a trashed copy, %s", k, d.Trashed)
				case tc.name == "s3" && d.ETag != v.etags[k]:
					t.Errorf("%s recorded with ETag %q, want %q", k, d.ETag, v.etags[k])
				}
			}
			if trashRuns, _ := trash.Runs(ctx, v.st); len(trashRuns) != 0 {
				t.Errorf("trash runs left by a run without the trash: %+v", trashRuns)
			}

			rr, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", s.DeletedRun)
			must(t, err)
			if rr.Outcome != outcome.OK || rr.Deleted == nil || rr.Deleted.Restored != 3 || len(rr.Deleted.Kept) != 0 || len(rr.Deleted.NotRecoverable) != 0 {
				t.Fatalf("restore: %v %+v", rr.Outcome, rr.Deleted)
			}
			for _, k := range append([]string{"kept.png"}, orphans...) {
				if !v.has(t, k) {
					t.Errorf("%s is not back", k)
				}
			}
			if runs, _ := trash.Deleteds(ctx, v.st); len(runs) != 0 {
				t.Errorf("the record stays after a whole restore: %+v", runs)
			}
		})
	}
	t.Run("unversioned", func(t *testing.T) {
		v := newVersioned(t, false, nil, orphans...)
		s := v.sweep(t, gc.RunOptions{NoTrash: true})
		if s.Outcome != outcome.OK || s.Result == nil || s.Result.Deleted != 3 || s.DeletedRun != "" {
			t.Fatalf("--no-trash run: %v %v %+v, deleted run %q", s.Outcome, s.Err, s.Result, s.DeletedRun)
		}
		if s.DeleteRecovery == nil || s.DeleteRecovery.Kind != store.RecoveryNone {
			t.Errorf("delete_recovery %+v, want none", s.DeleteRecovery)
		}
		if runs, err := trash.Deleteds(context.Background(), v.st); err != nil || len(runs) != 0 {
			t.Errorf("deleted runs %+v, %v; want none", runs, err)
		}
	})
}

// TestPurgedTrashRestoresFromVersions: gc purge of a copy trash run on a
// bucket whose service keeps deleted objects records the trashed blobs it
// deletes as a deleted run (S3 versioning on gofakes3, GCS object
// versioning on fake-gcs-server), each line naming its trashed copy and its
// key; gc restore of the purged trash run names the deleted run, and gc
// restore of that brings each blob back to its own key, byte-identical,
// from its copy's version — not into the trash. A key uploaded again since
// is kept (not overwritten), and a copy whose version is gone is not
// recoverable: both stay in the record, and the restore is incomplete.
func TestPurgedTrashRestoresFromVersions(t *testing.T) {
	orphans := []string{"orphan-one.png", "deep/orphan-two.png", "uploaded-again.png", "expired-version.png"}
	for _, tc := range []struct {
		name string
		open func(t *testing.T) *versioned
		kind string
	}{
		{"s3", func(t *testing.T) *versioned { return newVersioned(t, true, nil, orphans...) }, store.RecoveryS3Versioning},
		{"gcs", func(t *testing.T) *versioned { return newVersionedGCS(t, orphans...) }, store.RecoveryGCSVersioning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			v := tc.open(t)
			s := v.sweep(t, gc.RunOptions{CopyToTrash: true})
			if s.Outcome != outcome.OK || s.Result == nil || s.Result.Trashed != 4 || s.Result.Run == "" || s.DeletedRun != "" {
				t.Fatalf("copy trash run: %v %v %+v, deleted run %q", s.Outcome, s.Err, s.Result, s.DeletedRun)
			}
			trashRun := s.Result.Run
			time.Sleep(1100 * time.Millisecond) // the purge's record is named to the second

			pr, err := gc.RunPurge(ctx, v.st, "mediactl gc purge", gc.PurgeOptions{Cutoff: time.Now(), Sessions: []sessions.Source{v.src}})
			must(t, err)
			if pr.Outcome != outcome.OK || pr.Purged == nil || pr.Purged.Blobs != 4 || pr.Purged.DeletedRun == "" || len(pr.Purged.Runs) != 1 || pr.Purged.Runs[0] != trashRun {
				t.Fatalf("purge: %v %+v", pr.Outcome, pr.Purged)
			}
			if pr.DeleteRecovery == nil || pr.DeleteRecovery.Kind != tc.kind {
				t.Errorf("the purge's delete_recovery %+v, want %s", pr.DeleteRecovery, tc.kind)
			}
			run := pr.Purged.DeletedRun
			if left, _ := trash.Runs(ctx, v.st); len(left) != 0 {
				t.Fatalf("trash runs after the purge: %+v", left)
			}
			runs, err := trash.Deleteds(ctx, v.st)
			must(t, err)
			if len(runs) != 1 || runs[0].Run != run || runs[0].Blobs != 4 || runs[0].Header.Command != "gc purge" || runs[0].Header.Recovery != tc.kind || len(runs[0].Header.Trash) != 1 || runs[0].Header.Trash[0] != trashRun {
				t.Fatalf("deleted runs %+v, want %s of trash run %s", runs, run, trashRun)
			}
			lines := v.recorded(t, run)
			for _, k := range orphans {
				d, ok := lines[k]
				switch {
				case !ok:
					t.Errorf("%s is not in the record", k)
				case d.Trashed != "trash/"+trashRun+"/"+k:
					t.Errorf("%s recorded with trashed copy %q", k, d.Trashed)
				case tc.name == "s3" && d.ETag != v.etags[k]:
					t.Errorf("%s recorded with ETag %q, want its copy's, %q", k, d.ETag, v.etags[k])
				}
			}
			// The purged trash run is gone; its restore names the record.
			var noRun *trash.NoRunError
			if _, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", trashRun); !errors.As(err, &noRun) || noRun.DeletedIn != run {
				t.Errorf("restore of the purged trash run: %v, want a NoRunError naming %s", err, run)
			}

			must(t, v.st.Put(ctx, "uploaded-again.png", strings.NewReader("uploaded again"), store.PutOptions{}))
			v.dropVersions(t, store.InternalDir+"/"+lines["expired-version.png"].Trashed)

			rr, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", run)
			must(t, err)
			d := rr.Deleted
			if d == nil || d.Restored != 2 || rr.Outcome != outcome.Incomplete {
				t.Fatalf("restore: %v %+v", rr.Outcome, d)
			}
			if len(d.Kept) != 1 || d.Kept[0].Key != "uploaded-again.png" || len(d.NotRecoverable) != 1 || d.NotRecoverable[0].Key != "expired-version.png" {
				t.Errorf("kept %v, not recoverable %v; want uploaded-again.png and expired-version.png", d.Kept, d.NotRecoverable)
			}
			for _, k := range []string{"kept.png", "orphan-one.png", "deep/orphan-two.png"} {
				if !v.has(t, k) {
					t.Errorf("%s is not back at its key", k)
				}
			}
			if r, err := v.st.Open(ctx, "uploaded-again.png"); err != nil {
				t.Errorf("uploaded-again.png: %v", err)
			} else {
				b, _ := io.ReadAll(r)
				r.Close()
				if string(b) != "uploaded again" {
					t.Errorf("the upload since the purge was overwritten with %q", b)
				}
			}
			if left, _ := trash.Runs(ctx, v.st); len(left) != 0 {
				t.Errorf("the restore brought blobs back into the trash: %+v", left)
			}
			if runs, _ := trash.Deleteds(ctx, v.st); len(runs) != 1 || runs[0].Blobs != 2 {
				t.Errorf("after the restore the record lists %+v, want the 2 not restored", runs)
			}
		})
	}
}

// TestPurgeRecordSurvivesInterrupt: gc purge of a copy trash run on a bucket
// with S3 versioning (gofakes3), interrupted while its first delete is in
// flight (or its third), has recorded every trashed blob it deleted, each
// with its copy and its key, and names the record; what it did not delete
// is still in the trash run, which says what it is. gc restore of the
// deleted run brings each deleted blob back to its own key, byte-identical,
// and gc restore of the trash run the rest: nothing is lost.
func TestPurgeRecordSurvivesInterrupt(t *testing.T) {
	for _, at := range []int{1, 3} {
		t.Run(fmt.Sprintf("delete-%d", at), func(t *testing.T) { purgeInterruptedAt(t, at, false) })
	}
	// The trash run restored first: what is left of it comes back, and
	// the restore names the deleted run that holds the rest (incomplete).
	t.Run("trash-run-first", func(t *testing.T) { purgeInterruptedAt(t, 3, true) })
}

// purgeInterruptedAt is TestPurgeRecordSurvivesInterrupt with the purge's
// context ending while its delete number at is in flight; trashFirst
// restores the trash run before the deleted run.
func purgeInterruptedAt(t *testing.T, at int, trashFirst bool) {
	ctx := context.Background()
	var orphans []string
	for i := range 6 {
		orphans = append(orphans, fmt.Sprintf("m/orphan-%d.png", i))
	}
	var mu sync.Mutex
	var cancel context.CancelFunc
	trashDeletes := 0
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if cancel != nil && r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/"+store.InternalDir+"/"+trash.Dir+"/") {
				// The purge's context ends while this delete is in flight.
				if trashDeletes++; trashDeletes == at {
					cancel()
				}
			}
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}
	v := newVersioned(t, true, wrap, orphans...)
	s := v.sweep(t, gc.RunOptions{CopyToTrash: true})
	if s.Outcome != outcome.OK || s.Result == nil || s.Result.Trashed != int64(len(orphans)) || s.Result.Run == "" {
		t.Fatalf("copy trash run: %v %v %+v", s.Outcome, s.Err, s.Result)
	}
	trashRun := s.Result.Run
	time.Sleep(1100 * time.Millisecond) // due for a purge of cutoff now

	pctx, c := context.WithCancel(ctx)
	defer c()
	mu.Lock()
	cancel = c
	mu.Unlock()
	pr, err := gc.RunPurge(pctx, v.st, "mediactl gc purge", gc.PurgeOptions{Cutoff: time.Now(), Sessions: []sessions.Source{v.src}})
	mu.Lock()
	cancel = nil
	mu.Unlock()
	must(t, err)
	if pr.Outcome != outcome.Interrupted || pr.Purged == nil || pr.Purged.DeletedRun == "" {
		t.Fatalf("interrupted purge: %v %+v", pr.Outcome, pr.Purged)
	}
	if trashDeletes != at {
		t.Errorf("%d deletes of trashed blobs sent, want %d: none after the interrupt", trashDeletes, at)
	}
	run := pr.Purged.DeletedRun

	in, _ := store.AsInternal(v.st)
	prefix := trash.Dir + "/" + trashRun + "/"
	left := map[string]bool{}
	must(t, in.ListInternal(ctx, prefix, func(e store.Entry) error {
		left[strings.TrimPrefix(e.Key, prefix)] = true
		return nil
	}))
	var gone, kept []string
	for _, k := range orphans {
		if left[k] {
			kept = append(kept, k)
		} else {
			gone = append(gone, k)
		}
	}
	if len(gone) != at || len(kept) == 0 {
		t.Fatalf("%d trashed blobs deleted, %d left, of %d: want the %d sent", len(gone), len(kept), len(orphans), at)
	}
	var goneBytes int64
	for _, k := range gone {
		goneBytes += int64(len(v.blobs[k]))
	}
	if p := pr.Purged; len(p.Runs) != 0 || p.Blobs != int64(len(gone)) || p.Bytes != goneBytes {
		t.Errorf("the interrupted purge reports runs %v, %d blobs (%d bytes); want none purged whole, %d blobs (%d bytes) deleted", p.Runs, p.Blobs, p.Bytes, len(gone), goneBytes)
	}
	runs, err := trash.Runs(ctx, v.st)
	must(t, err)
	if len(runs) != 1 || runs[0].Run != trashRun || runs[0].Blobs != int64(len(kept)) {
		t.Fatalf("trash runs after the interrupt %+v, want %s with the %d blobs not deleted", runs, trashRun, len(kept))
	}
	deleted, err := trash.Deleteds(ctx, v.st)
	must(t, err)
	if len(deleted) != 1 || deleted[0].Run != run || deleted[0].Header.Command != "gc purge" || len(deleted[0].Header.Trash) != 1 || deleted[0].Header.Trash[0] != trashRun {
		t.Fatalf("deleted runs %+v, want %s of trash run %s", deleted, run, trashRun)
	}
	lines := v.recorded(t, run)
	for _, k := range gone {
		if d, ok := lines[k]; !ok {
			t.Errorf("%s was deleted and is not in the record", k)
		} else if d.Trashed != prefix+k || d.ETag != v.etags[k] {
			t.Errorf("%s recorded with copy %q, ETag %q; want %q, %q", k, d.Trashed, d.ETag, prefix+k, v.etags[k])
		}
	}
	for k := range lines {
		if left[k] {
			t.Errorf("%s is in the record and still in the trash run", k)
		}
	}

	if trashFirst {
		rr, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", trashRun)
		must(t, err)
		if rr.Outcome != outcome.Incomplete || rr.Result == nil || rr.Result.Restored != int64(len(kept)) || rr.PurgedIn != run {
			t.Fatalf("restore of %s first: %v %+v, purged in %q; want the %d blobs left in it, incomplete, naming %s", trashRun, rr.Outcome, rr.Result, rr.PurgedIn, len(kept), run)
		}
	}
	rr, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", run)
	must(t, err)
	if rr.Outcome != outcome.OK || rr.Deleted == nil || rr.Deleted.Restored != int64(len(gone)) {
		t.Fatalf("restore of %s: %v %+v, want the %d deleted blobs back", run, rr.Outcome, rr.Deleted, len(gone))
	}
	for _, k := range gone {
		if !v.has(t, k) {
			t.Errorf("%s is not back at its key", k)
		}
	}
	if runs, _ := trash.Deleteds(ctx, v.st); len(runs) != 0 {
		t.Errorf("the record stays after a whole restore: %+v", runs)
	}
	if trashFirst {
		for _, k := range append([]string{"kept.png"}, orphans...) {
			if !v.has(t, k) {
				t.Errorf("%s is not in the store after both restores", k)
			}
		}
		return
	}
	if runs, _ := trash.Runs(ctx, v.st); len(runs) != 1 || runs[0].Blobs != int64(len(kept)) {
		t.Errorf("the trash run after the deleted run's restore: %+v, want its %d blobs as they were", runs, len(kept))
	}

	rr, err = trash.RunRestore(ctx, v.st, "mediactl gc restore", trashRun)
	must(t, err)
	if rr.Outcome != outcome.OK || rr.Result == nil || rr.Result.Restored != int64(len(kept)) {
		t.Fatalf("restore of %s: %v %+v, want the %d blobs left in it", trashRun, rr.Outcome, rr.Result, len(kept))
	}
	for _, k := range append([]string{"kept.png"}, orphans...) {
		if !v.has(t, k) {
			t.Errorf("%s is not in the store after both restores", k)
		}
	}
	if runs, _ := trash.Runs(ctx, v.st); len(runs) != 0 {
		t.Errorf("trash runs after both restores: %+v", runs)
	}
}

// TestPurgedTwiceRestoresTheNewerCopy: a key trashed by two copy trash runs
// (uploaded again between them) and purged with both comes back with what
// it held last, the older copy kept out; and a record line whose trashed
// copy is not its own key's (a record edited by hand, or by someone
// else) is not recoverable: a restore never puts another file's bytes
// under a key.
func TestPurgedTwiceRestoresTheNewerCopy(t *testing.T) {
	ctx := context.Background()
	v := newVersioned(t, true, nil, "twice.png", "alpha7.png", "bravo8.png")
	first := v.sweep(t, gc.RunOptions{CopyToTrash: true})
	if first.Outcome != outcome.OK || first.Result == nil || first.Result.Trashed != 3 {
		t.Fatalf("first copy trash run: %v %v %+v", first.Outcome, first.Err, first.Result)
	}
	older := first.Result.Run
	time.Sleep(1100 * time.Millisecond) // run names are to the second
	v.blobs["twice.png"] = "the second upload of twice.png"
	must(t, v.st.Put(ctx, "twice.png", strings.NewReader(v.blobs["twice.png"]), store.PutOptions{}))
	e, err := v.st.Stat(ctx, "twice.png")
	must(t, err)
	v.etags["twice.png"] = e.ETag
	second := v.sweep(t, gc.RunOptions{CopyToTrash: true})
	if second.Outcome != outcome.OK || second.Result == nil || second.Result.Trashed != 1 || second.Result.Run == older {
		t.Fatalf("second copy trash run: %v %v %+v", second.Outcome, second.Err, second.Result)
	}
	time.Sleep(1100 * time.Millisecond)
	pr, err := gc.RunPurge(ctx, v.st, "mediactl gc purge", gc.PurgeOptions{Cutoff: time.Now(), Sessions: []sessions.Source{v.src}})
	must(t, err)
	if pr.Outcome != outcome.OK || pr.Purged == nil || pr.Purged.Blobs != 4 || pr.Purged.DeletedRun == "" {
		t.Fatalf("purge: %v %+v", pr.Outcome, pr.Purged)
	}
	run := pr.Purged.DeletedRun

	// bravo8.png's line is made to name alpha7.png's copy.
	in, ok := store.AsInternal(v.st)
	if !ok {
		t.Fatal("no internal folder")
	}
	var batches []string
	must(t, in.ListInternal(ctx, trash.DeletedDir+"/"+run+"/", func(e store.Entry) error {
		if strings.HasSuffix(e.Key, ".jsonl") {
			batches = append(batches, e.Key)
		}
		return nil
	}))
	edited := false
	for _, name := range batches {
		rc, err := in.OpenInternal(ctx, name)
		must(t, err)
		b, err := io.ReadAll(rc)
		rc.Close()
		must(t, err)
		var out bytes.Buffer
		var lines []trash.Deleted
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var d trash.Deleted
			must(t, json.Unmarshal(line, &d))
			lines = append(lines, d)
		}
		for _, d := range lines {
			if d.Key == "bravo8.png" {
				// The whole of alpha7.png's line under bravo8.png's key:
				// its copy's ETag, size and time all match that copy.
				for _, o := range lines {
					if o.Key == "alpha7.png" {
						d, edited = o, true
						d.Key = "bravo8.png"
					}
				}
			}
			l, err := json.Marshal(d)
			must(t, err)
			out.Write(append(l, '\n'))
		}
		must(t, in.PutInternal(ctx, name, &out, store.PutOptions{}))
	}
	if !edited {
		t.Fatalf("no line of bravo8.png in the record's batches %v", batches)
	}

	rr, err := trash.RunRestore(ctx, v.st, "mediactl gc restore", run)
	must(t, err)
	d := rr.Deleted
	if d == nil || d.Restored != 2 || rr.Outcome != outcome.Incomplete {
		t.Fatalf("restore: %v %+v", rr.Outcome, d)
	}
	if len(d.Kept) != 1 || d.Kept[0].Key != "twice.png" {
		t.Errorf("kept %v, want the older copy of twice.png", d.Kept)
	}
	if len(d.NotRecoverable) != 1 || d.NotRecoverable[0].Key != "bravo8.png" {
		t.Errorf("not recoverable %v, want bravo8.png, whose line names another key's copy", d.NotRecoverable)
	}
	for _, k := range []string{"twice.png", "alpha7.png"} {
		if !v.has(t, k) {
			t.Errorf("%s is not back at its key", k)
		}
	}
	if _, err := v.st.Stat(ctx, "bravo8.png"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("bravo8.png was written from another key's copy (stat: %v)", err)
	}
}
