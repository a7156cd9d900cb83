package store

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
)

// recorder is an HTTP client that keeps the request it is given and fails it.
type recorder struct{ got *http.Request }

var errRecorded = errors.New("recorded")

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	r.got = req
	return nil, errRecorded
}

// TestPresetPayloadHash checks which payload hash a PutObject is signed with
// when the context carries the content's digest: the digest when the SDK adds
// no checksum of its own (over HTTP and HTTPS), and the SDK's choice when it
// does — over HTTPS a trailing checksum, whose streaming payload a digest must
// not replace.
func TestPresetPayloadHash(t *testing.T) {
	const body = "the content"
	const digest = "f1d8a4d0b5b3dbbd6b1a1e2f2c51e3e1ff5c8c1bb1ef3fcf3a8b1c26d0c2a0d3" // any 64 hex digits
	for _, c := range []struct {
		endpoint string
		calc     aws.RequestChecksumCalculation
		want     string
	}{
		{"http://127.0.0.1:1", aws.RequestChecksumCalculationWhenRequired, digest},
		{"https://127.0.0.1:1", aws.RequestChecksumCalculationWhenRequired, digest},
		{"https://127.0.0.1:1", aws.RequestChecksumCalculationWhenSupported, "STREAMING-UNSIGNED-PAYLOAD-TRAILER"},
	} {
		rec := &recorder{}
		client := s3.New(s3.Options{
			Region: "us-east-1", BaseEndpoint: aws.String(c.endpoint), UsePathStyle: true,
			Credentials:                credentials.NewStaticCredentialsProvider("key", "secret", ""),
			RequestChecksumCalculation: c.calc,
			HTTPClient:                 rec,
			RetryMaxAttempts:           1,
			APIOptions:                 []func(*middleware.Stack) error{addPresetPayloadHash},
		})
		ctx := withPayloadSHA256(context.Background(), digest)
		_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("b"), Key: aws.String("k"), Body: strings.NewReader(body)})
		if !errors.Is(err, errRecorded) || rec.got == nil {
			t.Fatalf("%s %v: PutObject = %v, no request recorded", c.endpoint, c.calc, err)
		}
		if got := rec.got.Header.Get("X-Amz-Content-Sha256"); got != c.want {
			t.Errorf("%s, checksum %v: x-amz-content-sha256 = %q, want %q", c.endpoint, c.calc, got, c.want)
		}
	}
}
