package store_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// openBucketT opens spec as a bucket store.
func openBucketT(t *testing.T, spec string) *store.BucketStore {
	t.Helper()
	s := openT(t, spec)
	t.Cleanup(func() { s.Close() })
	bs, ok := s.(*store.BucketStore)
	if !ok {
		t.Fatalf("Open(%q) = %T, want *store.BucketStore", spec, s)
	}
	return bs
}

// recovery asks st what its service keeps of a deleted object, through the
// capability as a caller finds it.
func recovery(t *testing.T, st store.Store) store.Recovery {
	t.Helper()
	rr, ok := store.AsRecoveryReporter(st)
	if !ok {
		t.Fatalf("%s does not say whether deleted objects are kept", st.Location())
	}
	r := rr.DeleteRecovery(ctx)
	t.Logf("%s: %s, retention %v: %s", st.Location(), r.Kind, r.Retention, r.Detail)
	return r
}

func wantRecovery(t *testing.T, r store.Recovery, kind string, retention time.Duration, detail ...string) {
	t.Helper()
	if r.Kind != kind || r.Retention != retention {
		t.Errorf("DeleteRecovery = %s, retention %v (%s); want %s, retention %v", r.Kind, r.Retention, r.Detail, kind, retention)
	}
	for _, d := range detail {
		if !strings.Contains(r.Detail, d) {
			t.Errorf("DeleteRecovery's detail %q does not say %q", r.Detail, d)
		}
	}
}

func s3Client(t *testing.T, bs *store.BucketStore) *s3.Client {
	t.Helper()
	var c *s3.Client
	if !bs.Blob().As(&c) {
		t.Fatal("the s3 bucket does not expose *s3.Client")
	}
	return c
}

func setS3Versioning(t *testing.T, c *s3.Client, bucket string, status s3types.BucketVersioningStatus) {
	t.Helper()
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
		Bucket:                  aws.String(bucket),
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: status},
	}); err != nil {
		t.Fatalf("PutBucketVersioning %s: %v", status, err)
	}
}

// TestDeleteRecoveryS3 asks gofakes3 (in-process, the S3 protocol on
// 127.0.0.1) of a bucket never versioned, versioned, and with versioning
// suspended.
func TestDeleteRecoveryS3(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	var n atomic.Int64
	u := srv.Bucket(t, uniqueName("recovery", n.Add(1)))
	bs := openBucketT(t, u)
	wantRecovery(t, recovery(t, bs), store.RecoveryNone, 0, "never enabled")

	c := s3Client(t, bs)
	setS3Versioning(t, c, bs.Name(), s3types.BucketVersioningStatusEnabled)
	r := recovery(t, bs)
	wantRecovery(t, r, store.RecoveryS3Versioning, 0, "versioning is enabled")
	if !r.Keeps() {
		t.Error("Keeps is false for a versioned bucket")
	}
	// A store confined to a prefix of the bucket: the same bucket setting.
	sub := openBucketT(t, strings.Replace(u, "?", "/media/?", 1))
	wantRecovery(t, recovery(t, sub), store.RecoveryS3Versioning, 0)

	setS3Versioning(t, c, bs.Name(), s3types.BucketVersioningStatusSuspended)
	wantRecovery(t, recovery(t, bs), store.RecoveryS3VersioningSuspended, 0, "suspended", "written since is deleted for good")
}

// TestDeleteRecoveryS3Denied: credentials that may not read the bucket's
// versioning (the server answers 403 AccessDenied to GetBucketVersioning,
// in front of the real server) make the answer unknown, naming the
// permission, and nothing else fails: the store lists and deletes.
func TestDeleteRecoveryS3Denied(t *testing.T) {
	srv := storetest.StartS3(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, ok := r.URL.Query()["versioning"]; ok && r.Method == http.MethodGet {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusForbidden)
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	bs := openBucketT(t, srv.Bucket(t, "denied"))
	r := recovery(t, bs)
	wantRecovery(t, r, store.RecoveryUnknown, 0, "GetBucketVersioning: AccessDenied", "s3:GetBucketVersioning")
	if r.Keeps() {
		t.Error("Keeps is true for an unknown answer")
	}
	if err := bs.Put(ctx, "a", strings.NewReader("a"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := bs.Delete(ctx, "a"); err != nil {
		t.Fatalf("the store fails after the refused question: %v", err)
	}
}

// TestDeleteRecoverySeaweedFS asks SeaweedFS, a production S3 service, of a
// bucket never versioned, versioned, versioned with lifecycle rules that
// expire noncurrent versions (of the whole bucket, of another prefix, and
// with newer versions kept), and suspended. It then checks what the report
// tells an operator: a blob deleted through the store has a noncurrent
// version, and copying that version back restores it, as docs/gc.md says.
func TestDeleteRecoverySeaweedFS(t *testing.T) {
	srv := storetest.SeaweedFS(t)
	u := srv.Bucket(t, "recovery")
	bs := openBucketT(t, u)
	c := s3Client(t, bs)
	bucket := bs.Name()
	t.Cleanup(func() { deleteVersions(t, c, bucket) }) // before the bucket's own cleanup
	wantRecovery(t, recovery(t, bs), store.RecoveryNone, 0, "never enabled")

	setS3Versioning(t, c, bucket, s3types.BucketVersioningStatusEnabled)
	wantRecovery(t, recovery(t, bs), store.RecoveryS3Versioning, 0, "versioning is enabled", "no lifecycle rule")

	rule := func(id, prefix string, days, newer int32) s3types.LifecycleRule {
		r := s3types.LifecycleRule{
			ID:                          aws.String(id),
			Status:                      s3types.ExpirationStatusEnabled,
			Filter:                      &s3types.LifecycleRuleFilter{Prefix: aws.String(prefix)},
			NoncurrentVersionExpiration: &s3types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(days)},
		}
		if newer > 0 {
			r.NoncurrentVersionExpiration.NewerNoncurrentVersions = aws.Int32(newer)
		}
		return r
	}
	if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(bucket),
		LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: []s3types.LifecycleRule{
			rule("logs", "logs/", 1, 0),
			rule("keep-two", "", 2, 2),
			rule("noncurrent-30d", "", 30, 0),
		}},
	}); err != nil {
		t.Fatalf("PutBucketLifecycleConfiguration: %v", err)
	}
	lc, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	if err != nil || len(lc.Rules) != 3 {
		t.Fatalf("the lifecycle rules read back: %v (%v)", lc, err)
	}
	wantRecovery(t, recovery(t, bs), store.RecoveryS3Versioning, 30*24*time.Hour, `lifecycle rule "noncurrent-30d" removes noncurrent versions 30 days after`)
	// The rule for logs/ covers a store confined to logs/ and comes first.
	logs := openBucketT(t, strings.Replace(u, "?", "/logs/?", 1))
	wantRecovery(t, recovery(t, logs), store.RecoveryS3Versioning, 24*time.Hour, `lifecycle rule "logs" removes noncurrent versions 1 day after`)

	// What the report promises: a deleted blob's version is there, and a
	// copy of it brings the blob back.
	if err := bs.Put(ctx, "ab/blob.png", strings.NewReader("the blob"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := bs.Delete(ctx, "ab/blob.png"); err != nil {
		t.Fatal(err)
	}
	if _, err := bs.Stat(ctx, "ab/blob.png"); err == nil {
		t.Fatal("the deleted blob is still current")
	}
	vs, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String("ab/blob.png")})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs.Versions) != 1 || len(vs.DeleteMarkers) != 1 {
		t.Fatalf("after the delete: %d versions, %d delete markers; want 1 and 1", len(vs.Versions), len(vs.DeleteMarkers))
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket:     aws.String(bucket),
		Key:        aws.String("ab/blob.png"),
		CopySource: aws.String(bucket + "/ab/blob.png?versionId=" + url.QueryEscape(aws.ToString(vs.Versions[0].VersionId))),
	}); err != nil {
		t.Fatalf("copying the noncurrent version back: %v", err)
	}
	if got := readAll(t, bs, "ab/blob.png"); got != "the blob" {
		t.Errorf("the restored blob holds %q", got)
	}

	setS3Versioning(t, c, bucket, s3types.BucketVersioningStatusSuspended)
	wantRecovery(t, recovery(t, bs), store.RecoveryS3VersioningSuspended, 30*24*time.Hour, "suspended")
}

func readAll(t *testing.T, st store.Store, key string) string {
	t.Helper()
	r, err := st.Open(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// deleteVersions removes every version and delete marker of bucket, which
// a versioned bucket keeps after its objects are deleted: the bucket can be
// deleted only without them.
func deleteVersions(t *testing.T, c *s3.Client, bucket string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String(bucket)})
	for {
		vs, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
		if err != nil {
			t.Logf("listing the versions of %s: %v", bucket, err)
			return
		}
		var ids []s3types.ObjectIdentifier
		for _, v := range vs.Versions {
			ids = append(ids, s3types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
		}
		for _, m := range vs.DeleteMarkers {
			ids = append(ids, s3types.ObjectIdentifier{Key: m.Key, VersionId: m.VersionId})
		}
		if len(ids) == 0 {
			return
		}
		if _, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)}}); err != nil {
			t.Logf("deleting the versions of %s: %v", bucket, err)
			return
		}
	}
}

// TestDeleteRecoveryGCS asks fake-gcs-server (in-process) of a bucket with
// object versioning off and on. The emulator keeps no soft delete policy
// (it drops one set on the bucket and reports none), so the soft delete
// kind is asked of it only should a later version keep one.
func TestDeleteRecoveryGCS(t *testing.T) {
	srv := storetest.StartGCS(t)
	var n atomic.Int64
	bs := openBucketT(t, srv.Bucket(t, uniqueName("recovery", n.Add(1))))
	wantRecovery(t, recovery(t, bs), store.RecoveryNone, 0, "object versioning is off")

	var c *storage.Client
	if !bs.Blob().As(&c) {
		t.Fatal("the gs bucket does not expose *storage.Client")
	}
	b := c.Bucket(bs.Name())
	if _, err := b.Update(ctx, storage.BucketAttrsToUpdate{VersioningEnabled: true}); err != nil {
		t.Fatal(err)
	}
	r := recovery(t, bs)
	wantRecovery(t, r, store.RecoveryGCSVersioning, 0, "object versioning is on")
	if !r.Keeps() {
		t.Error("Keeps is false for a versioned bucket")
	}

	if _, err := b.Update(ctx, storage.BucketAttrsToUpdate{VersioningEnabled: false, SoftDeletePolicy: &storage.SoftDeletePolicy{RetentionDuration: 7 * 24 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	attrs, err := b.Attrs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if attrs.SoftDeletePolicy == nil || attrs.SoftDeletePolicy.RetentionDuration == 0 {
		t.Logf("fake-gcs-server keeps no soft delete policy (%+v): the gcs-soft-delete kind is not tested here", attrs.SoftDeletePolicy)
		wantRecovery(t, recovery(t, bs), store.RecoveryNone, 0, "no soft delete policy")
		return
	}
	wantRecovery(t, recovery(t, bs), store.RecoveryGCSSoftDelete, 7*24*time.Hour, "for 7 days")
}

// TestDeleteRecoveryAzure asks Azurite of its blob service with soft delete
// off and on (a setting of the account, which the test puts back), and,
// with a SAS token that reaches only the container, gets an unknown answer
// naming why. Azurite gives blobs no version ids, so the versioning kind is
// not asked of it.
func TestDeleteRecoveryAzure(t *testing.T) {
	srv := storetest.StartAzurite(t)
	cred, err := service.NewSharedKeyCredential(storetest.AzuriteAccount, storetest.AzuriteKey)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.NewClientWithSharedKeyCredential("http://"+srv.Addr+"/"+storetest.AzuriteAccount, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := svc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p := before.DeleteRetentionPolicy
		if p == nil {
			p = &service.RetentionPolicy{Enabled: to.Ptr(false)}
		}
		if _, err := svc.SetProperties(context.Background(), &service.SetPropertiesOptions{DeleteRetentionPolicy: p}); err != nil {
			t.Errorf("putting back the account's delete retention policy: %v", err)
		}
	})
	setSoftDelete := func(days int32) {
		t.Helper()
		p := &service.RetentionPolicy{Enabled: to.Ptr(days > 0)}
		if days > 0 {
			p.Days = to.Ptr(days)
		}
		if _, err := svc.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: p}); err != nil {
			t.Fatal(err)
		}
	}

	u := srv.Container(t, "recovery")
	bs := openBucketT(t, u)
	setSoftDelete(0)
	wantRecovery(t, recovery(t, bs), store.RecoveryNone, 0, "blob soft delete is off", "no blob to tell by")
	if err := bs.Put(ctx, "a.png", strings.NewReader("a"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	wantRecovery(t, recovery(t, bs), store.RecoveryNone, 0, "carries no version id")

	setSoftDelete(7)
	r := recovery(t, bs)
	wantRecovery(t, r, store.RecoveryAzureSoftDelete, 7*24*time.Hour, "keeps a deleted blob for 7 days")
	if !r.Keeps() {
		t.Error("Keeps is false with soft delete on")
	}
	sub := openBucketT(t, strings.Replace(u, "?", "/media/?", 1))
	wantRecovery(t, recovery(t, sub), store.RecoveryAzureSoftDelete, 7*24*time.Hour, "no blob to tell by")

	// A SAS token for the container alone: the blobs are there to work on,
	// the account's settings are not.
	name := strings.SplitN(strings.TrimPrefix(u, "azblob://"), "?", 2)[0]
	cc, err := container.NewClientWithSharedKeyCredential("http://"+srv.Addr+"/"+storetest.AzuriteAccount+"/"+name, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	sasURL, err := cc.GetSASURL(sas.ContainerPermissions{Read: true, Write: true, Delete: true, List: true, Create: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	token := sasURL[strings.Index(sasURL, "?")+1:]
	t.Setenv("AZURE_STORAGE_KEY", "")
	t.Setenv("AZURE_STORAGE_SAS_TOKEN", token)
	viaSAS := openBucketT(t, u)
	if got := readAll(t, viaSAS, "a.png"); got != "a" {
		t.Fatalf("through the SAS token the blob reads %q", got)
	}
	r = recovery(t, viaSAS)
	wantRecovery(t, r, store.RecoveryUnknown, 0, "blob service properties", "a container's SAS is not enough")
}
