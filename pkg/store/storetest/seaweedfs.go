package storetest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"
)

// Environment of a running SeaweedFS, as exported by
//
//	eval "$(scripts/services/seaweedfs.sh start)"
const (
	SeaweedEnv       = "MEDIACTL_TEST_SEAWEEDFS"        // S3 endpoint, http://127.0.0.1:PORT
	SeaweedKeyEnv    = "MEDIACTL_TEST_SEAWEEDFS_KEY"    // access key id
	SeaweedSecretEnv = "MEDIACTL_TEST_SEAWEEDFS_SECRET" // secret access key
)

// Seaweed is a SeaweedFS server started outside the test (a real S3
// implementation, with multipart ETags and conditional writes as S3 has them).
type Seaweed struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
}

// SeaweedFS returns the server named by MEDIACTL_TEST_SEAWEEDFS. When it is not
// set the test is skipped, except on CI (CI=true) where it fails. It sets the
// server's static credentials in the environment for the rest of the test and
// points the AWS config files at nothing, so that no client goes looking for
// cloud credentials or a metadata endpoint.
func SeaweedFS(t testing.TB) *Seaweed {
	t.Helper()
	endpoint := serviceEnv(t, SeaweedEnv, "seaweedfs")
	s := &Seaweed{Endpoint: endpoint, AccessKey: os.Getenv(SeaweedKeyEnv), SecretKey: os.Getenv(SeaweedSecretEnv)}
	if s.AccessKey == "" || s.SecretKey == "" {
		t.Fatalf("%s is set but %s or %s is not: eval the whole line that scripts/services/seaweedfs.sh start prints", SeaweedEnv, SeaweedKeyEnv, SeaweedSecretEnv)
	}
	setAWSEnv(t, s.AccessKey, s.SecretKey)
	return s
}

// Query is the URL query that reaches this server: endpoint, path-style
// addressing, region.
func (s *Seaweed) Query() string { return s3Query(s.Endpoint) }

// Bucket creates a new bucket named prefix-<random hex> (unique even across runs
// against a long-lived server) and returns its URL ("s3://NAME?endpoint=…").
// The bucket is emptied and deleted when the test ends.
func (s *Seaweed) Bucket(t testing.TB, prefix string) string {
	t.Helper()
	name := randomName(prefix)
	u := "s3://" + name + "?" + s.Query()

	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	var c *s3.Client
	if !b.As(&c) {
		b.Close()
		t.Fatal("s3 bucket does not expose *s3.Client")
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		b.Close()
		t.Fatalf("creating bucket %s on SeaweedFS at %s: %v", name, s.Endpoint, err)
	}
	t.Cleanup(func() {
		defer b.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := deleteBucket(ctx, c, name); err != nil {
			t.Logf("deleting test bucket %s: %v", name, err)
		}
	})
	return u
}

// deleteBucket removes every object of bucket name, then the bucket, as S3
// requires: a bucket that still holds objects cannot be deleted.
func deleteBucket(ctx context.Context, c *s3.Client, name string) error {
	uploads, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(name)})
	if err == nil {
		for _, up := range uploads.Uploads {
			_, _ = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(name), Key: up.Key, UploadId: up.UploadId})
		}
	}
	pages := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(name)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]s3types.ObjectIdentifier, len(page.Contents))
		for i, o := range page.Contents {
			ids[i] = s3types.ObjectIdentifier{Key: o.Key}
		}
		if _, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(name),
			Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		}); err != nil {
			return err
		}
	}
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)})
	return err
}
