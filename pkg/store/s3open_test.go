package store

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// isolateAWS gives the SDK static credentials and no configuration from the
// host (profile, config files, checksum settings), as storetest's servers do;
// this package's own tests cannot import storetest.
func isolateAWS(t *testing.T) {
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":                "x",
		"AWS_SECRET_ACCESS_KEY":            "y",
		"AWS_SESSION_TOKEN":                "",
		"AWS_EC2_METADATA_DISABLED":        "true",
		"AWS_PROFILE":                      "",
		"AWS_CONFIG_FILE":                  filepath.Join(t.TempDir(), "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE":      filepath.Join(t.TempDir(), "no-credentials"),
		"AWS_REQUEST_CHECKSUM_CALCULATION": "",
		"AWS_RESPONSE_CHECKSUM_VALIDATION": "",
	} {
		t.Setenv(k, v)
	}
}

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
	isolateAWS(t) // the SDK's default checksum settings are the case under test
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
		b, _, err := openS3(context.Background(), u, c.unsummed, DefaultIOTimeout)
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

// TestS3PutterRequest checks what a Put of a small content of stated size
// sends when it takes the single-request path: the full key, the condition,
// the content type, metadata and server-side encryption gocloud's writer
// would send, and, for a caller that verifies, no SDK checksum and the
// caller's digest as the signed payload hash. Puts the path must leave to
// gocloud (no size, escaped keys or metadata) do not reach it.
func TestS3PutterRequest(t *testing.T) {
	isolateAWS(t)
	ctx := context.Background()
	s, err := OpenBucket(ctx, "s3://b/pre?region=us-east-1&endpoint=http://127.0.0.1:1&use_path_style=true&ssetype=AES256")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, viaGocloud := &recorder{}, &recorder{}
	o := s.s3put.client.Options()
	o.HTTPClient, o.RetryMaxAttempts = rec, 1
	s.s3put.client = s3.New(o)
	o.HTTPClient = viaGocloud
	b, err := s3blob.OpenBucket(ctx, s3.New(o), "b", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.b.Close()
	s.b = blob.PrefixedBucket(b, "pre/")

	const body = "0123456789"
	// Not body's sha256: a payload hash the SDK computed itself would differ.
	const digest = "f1d8a4d0b5b3dbbd6b1a1e2f2c51e3e1ff5c8c1bb1ef3fcf3a8b1c26d0c2a0d3"
	opts := PutOptions{
		ContentType: "image/PNG", Metadata: map[string]string{"sha256": digest}, IfNotExist: true,
		CallerVerifies: true, SHA256: digest, Size: int64(len(body)),
	}
	if err := s.Put(ctx, "a/b.bin", strings.NewReader(body), opts); !errors.Is(err, errRecorded) || rec.got == nil {
		t.Fatalf("Put = %v; want the recorder's error, a request recorded", err)
	}
	r := rec.got
	if r.Method != http.MethodPut || r.URL.Path != "/b/pre/a/b.bin" || r.ContentLength != int64(len(body)) {
		t.Errorf("request %s %s, %d bytes; want PUT /b/pre/a/b.bin, %d bytes", r.Method, r.URL.Path, r.ContentLength, len(body))
	}
	for h, want := range map[string]string{
		"If-None-Match":                "*",
		"Content-Type":                 "image/png",
		"X-Amz-Meta-Sha256":            digest,
		"X-Amz-Server-Side-Encryption": "AES256",
		"X-Amz-Content-Sha256":         digest,
		"X-Amz-Checksum-Crc32":         "",
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}

	for _, c := range []struct {
		key  string
		opts PutOptions
	}{
		{"a/b.bin", PutOptions{}},
		{"a b.bin", PutOptions{Size: 10}},
		{"a__0x41__.bin", PutOptions{Size: 10}},
		{"a/b.bin", PutOptions{Size: 10, Metadata: map[string]string{"Sha256": "x"}}},
		{"a/b.bin", PutOptions{Size: 10, Metadata: map[string]string{"note": "a:b"}}},
		{"a/b.bin", PutOptions{Size: 1 << 20}},
	} {
		rec.got, viaGocloud.got = nil, nil
		if err := s.Put(ctx, c.key, strings.NewReader(body), c.opts); rec.got != nil || viaGocloud.got == nil {
			t.Errorf("Put(%q, %+v) = %v, went through gocloud: %v, took the single-request path: %v", c.key, c.opts, err, viaGocloud.got != nil, rec.got != nil)
		}
	}
}
