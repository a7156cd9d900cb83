package store

import (
	"context"
	"errors"
	"net/http"
	"net/url"
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

// TestOpenS3ChecksumDefaults checks the SDK checksum settings openS3 gives the
// client: no response validation and, unsummed, no request checksum unless
// the URL asks for them; the URL's own setting wins either way.
func TestOpenS3ChecksumDefaults(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "y")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_REQUEST_CHECKSUM_CALCULATION", "") // the SDK's default is the case under test
	t.Setenv("AWS_RESPONSE_CHECKSUM_VALIDATION", "")
	const (
		reqRequired  = aws.RequestChecksumCalculationWhenRequired
		reqSupported = aws.RequestChecksumCalculationWhenSupported
		resRequired  = aws.ResponseChecksumValidationWhenRequired
		resSupported = aws.ResponseChecksumValidationWhenSupported
	)
	for _, c := range []struct {
		query    string
		unsummed bool
		req      aws.RequestChecksumCalculation
		res      aws.ResponseChecksumValidation
	}{
		{"", false, reqSupported, resRequired},
		{"", true, reqRequired, resRequired},
		{"response_checksum_validation=when_supported", false, reqSupported, resSupported},
		{"request_checksum_calculation=when_supported", true, reqSupported, resRequired},
		{"request_checksum_calculation=when_required", false, reqRequired, resRequired},
	} {
		u := &url.URL{Scheme: "s3", Host: "b", RawQuery: "region=us-east-1&" + c.query}
		b, err := openS3(context.Background(), u, c.unsummed)
		if err != nil {
			t.Fatalf("openS3(%s, unsummed %v): %v", u, c.unsummed, err)
		}
		var client *s3.Client
		if !b.As(&client) {
			t.Fatalf("openS3(%s): bucket is not an *s3.Client", u)
		}
		o := client.Options()
		if o.RequestChecksumCalculation != c.req || o.ResponseChecksumValidation != c.res {
			t.Errorf("openS3(%s, unsummed %v): request checksum %v, response validation %v; want %v, %v",
				u, c.unsummed, o.RequestChecksumCalculation, o.ResponseChecksumValidation, c.req, c.res)
		}
		b.Close()
	}
}
