package store

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"

	"github.com/mediactl/mediactl/pkg/usage"
)

// openS3 opens an s3:// bucket URL as gocloud's s3blob.URLOpener does (same
// parameters, same meaning), with one addition to the SDK client: a PutObject
// whose context carries the content's sha256 (withPayloadSHA256), and for which
// the SDK adds no checksum of its own, is signed with that digest as its
// payload hash. The SDK then does not read the body a second time to hash it
// (it does for every upload over plain HTTP), and the service checks the bytes
// it receives against the digest, rejecting the upload when they differ (over
// HTTPS the SDK would otherwise send UNSIGNED-PAYLOAD, which nothing checks).
//
// It also returns an s3Putter on the same client, for small uploads. The
// client's connections fail after ioTimeout without progress (see
// withIOTimeout).
//
// Where the URL leaves them to the default, the SDK validates no response
// checksum, and, when unsummed, adds no request checksum: see the comments
// below.
func openS3(ctx context.Context, u *url.URL, unsummed bool, ioTimeout time.Duration) (*blob.Bucket, *s3Putter, error) {
	q := u.Query()
	var opts s3blob.Options
	if v := q.Get("ssetype"); v != "" {
		q.Del("ssetype")
		for _, t := range types.ServerSideEncryptionAes256.Values() {
			if strings.EqualFold(string(t), v) {
				opts.EncryptionType = t
			}
		}
		if opts.EncryptionType == "" {
			return nil, nil, usagef("%q is not a valid value for ssetype: use one of %q", v, types.ServerSideEncryptionAes256.Values())
		}
	}
	if v := q.Get("kmskeyid"); v != "" {
		q.Del("kmskeyid")
		opts.KMSEncryptionID = v
	}
	pathStyle := false
	for _, k := range []string{"use_path_style", "s3ForcePathStyle"} {
		if v, err := strconv.ParseBool(q.Get(k)); err == nil && v {
			pathStyle = true
		}
	}
	if err := checkVirtualHost(ctx, u.Host, q.Get("endpoint"), pathStyle); err != nil {
		return nil, nil, err
	}
	var clientOpts []func(*s3.Options)
	for _, p := range []struct {
		key string
		set func(*s3.Options, bool)
	}{
		{"accelerate", func(o *s3.Options, v bool) { o.UseAccelerate = v }},
		{"disable_https", func(o *s3.Options, v bool) { o.EndpointOptions.DisableHTTPS = v }},
		{"use_path_style", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
		{"s3ForcePathStyle", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
	} {
		if !q.Has(p.key) {
			continue
		}
		raw := q.Get(p.key)
		q.Del(p.key)
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, nil, usagef("%s=%s: write true or false", p.key, raw)
		}
		clientOpts = append(clientOpts, func(o *s3.Options) { p.set(o, v) })
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, nil, fmt.Errorf("open bucket %v: %w", u, err)
	}
	// The S3 client's warnings go to the standard logger, which the command
	// routes into its log at debug level, instead of raw lines on stderr.
	// (The credential chain was built by the config loader with the SDK's
	// default logger on os.Stderr; the command turns those lines into JSON
	// records under --log-format json.)
	cfg.Logger = logging.NewStandardLogger(log.Writer())
	if !q.Has("response_checksum_validation") {
		// Every reader here hashes what it reads against the blob's name or its
		// sha256 metadata; the SDK's own check adds nothing but a warning on
		// stderr for each multipart object, whose checksum it cannot validate.
		cfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	}
	if unsummed && !q.Has("request_checksum_calculation") {
		// The caller checks the stored object's MD5 itself
		// (PutOptions.CallerVerifies): the SDK's checksum would only cost a
		// second pass over the bytes and keep presetPayloadHash out.
		cfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	}
	if anon, _ := strconv.ParseBool(q.Get("anonymous")); !anon && cfg.Credentials != nil {
		// Found now, a missing credential is one clear error naming the fix,
		// instead of the SDK's chain on the first request of each listing.
		cfg.Credentials = credentialsWithin{cfg.Credentials}
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, &CredentialsError{Scheme: "s3", Err: err}
		}
	}
	// The SDK's client keeps 10 idle connections per host: with more requests
	// in flight than that (gc's 32 Stats or copies, verify's 16 readers), the
	// rest would open a new connection for every request, which costs the
	// service more than the request itself on small objects.
	if bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok || cfg.HTTPClient == nil {
		if bc == nil {
			bc = awshttp.NewBuildableClient()
		}
		cfg.HTTPClient = bc.WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, bucketIdleConnsPerHost)
			tr.MaxIdleConns = max(tr.MaxIdleConns, bucketIdleConnsPerHost)
			withIOTimeout(tr, ioTimeout)
		})
	}
	cfg.APIOptions = append(cfg.APIOptions, addPresetPayloadHash)
	// s3blob hands its own setting to the transfer manager, which would
	// otherwise override the client's.
	opts.RequestChecksumCalculation = cfg.RequestChecksumCalculation
	client := s3.NewFromConfig(cfg, clientOpts...)
	b, err := s3blob.OpenBucket(ctx, client, u.Host, &opts)
	if err != nil {
		return nil, nil, err
	}
	return b, &s3Putter{client: client, bucket: u.Host, sse: opts.EncryptionType, kmsKeyID: opts.KMSEncryptionID}, nil
}

// credentialsWithin is an s3:// bucket's credentials, each retrieval of
// which (at open, and each refresh of a role's credentials during the run)
// waits at most credentialTimeout: the SDK asks a token service (STS, an
// instance's metadata service) on connections of its own, outside
// io_timeout. The SDK's cache goes on waiting for a retrieval in the
// background; a request that needs it fails at the bound.
type credentialsWithin struct{ aws.CredentialsProvider }

func (p credentialsWithin) Retrieve(ctx context.Context) (aws.Credentials, error) {
	rctx, cancel := context.WithTimeout(ctx, credentialTimeout)
	defer cancel()
	c, err := p.CredentialsProvider.Retrieve(rctx)
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		err = fmt.Errorf("the search for credentials did not end within %v: %w", credentialTimeout, err)
	}
	return c, err
}

// CredentialsError is returned by Open for a bucket whose service finds no
// credentials (none in the environment, the shared files, or the instance's
// role; for azblob:// also no storage account). It is a usage error
// (errors.Is(err, usage.Err)).
type CredentialsError struct {
	Scheme string // "s3", "gs" or "azblob"
	Err    error
}

func (e *CredentialsError) Error() string {
	return fmt.Sprintf("no credentials found for %s:// buckets: %s", e.Scheme, chainLine(e.Err))
}

// chainLine writes a credential chain's error on one line: azidentity lists
// each credential it tried on a line of its own, indented, with the HTTP
// response of each below it, indented deeper; the response is dropped.
func chainLine(err error) string {
	var kept []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if strings.HasPrefix(l, "\t\t") || strings.TrimSpace(l) == "" {
			continue
		}
		kept = append(kept, strings.TrimRight(strings.TrimSpace(l), ":."))
	}
	return strings.Join(kept, "; ")
}
func (e *CredentialsError) Unwrap() error        { return e.Err }
func (e *CredentialsError) Is(target error) bool { return target == usage.Err }

// EndpointError is returned by Open for a custom endpoint that virtual-host
// addressing (BUCKET.ENDPOINT) cannot reach: an IP address or a host whose
// BUCKET. subdomain does not resolve. S3-compatible servers (MinIO,
// SeaweedFS, Ceph) want path-style addressing. It is a usage error.
type EndpointError struct {
	Endpoint string
	Bucket   string
	Err      error // the failed lookup, or nil for an IP address
}

func (e *EndpointError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("endpoint %s is an address: %s.%s cannot be reached in virtual-host style", e.Endpoint, e.Bucket, hostOf(e.Endpoint))
	}
	return fmt.Sprintf("endpoint %s: %s.%s does not resolve (%v), so virtual-host addressing cannot reach the bucket", e.Endpoint, e.Bucket, hostOf(e.Endpoint), e.Err)
}
func (e *EndpointError) Is(target error) bool { return target == usage.Err }

// hostOf is the host of an endpoint URL (or the endpoint as given).
func hostOf(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		return u.Hostname()
	}
	return endpoint
}

// checkVirtualHost refuses a custom endpoint that virtual-host addressing
// cannot reach, before any request.
func checkVirtualHost(ctx context.Context, bucket, endpoint string, pathStyle bool) error {
	if endpoint == "" || pathStyle {
		return nil
	}
	host := hostOf(endpoint)
	if net.ParseIP(host) != nil || host == "localhost" {
		return &EndpointError{Endpoint: endpoint, Bucket: bucket}
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := net.DefaultResolver.LookupHost(lctx, bucket+"."+host); err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return &EndpointError{Endpoint: endpoint, Bucket: bucket, Err: err}
		}
	}
	return nil
}

type payloadSHA256Key struct{}

// withPayloadSHA256 marks ctx for a single-request upload whose content has
// the sha256 digest hexDigest (lower-case hex).
func withPayloadSHA256(ctx context.Context, hexDigest string) context.Context {
	return context.WithValue(ctx, payloadSHA256Key{}, hexDigest)
}

// presetPayloadHash hands the digest carried by the context to the signer,
// which then skips hashing the body; only for PutObject, whose body is the
// whole content (an UploadPart's body is one part of it), and only when the
// SDK's checksum step, which runs before it, has not chosen the payload hash
// itself (it does when it adds a checksum of its own: a trailer over HTTPS
// declares a streaming payload, which a digest must not replace).
var presetPayloadHash = middleware.FinalizeMiddlewareFunc("mediactl.PresetPayloadSHA256",
	func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		if h, ok := ctx.Value(payloadSHA256Key{}).(string); ok && awsmiddleware.GetOperationName(ctx) == "PutObject" && v4.GetPayloadHash(ctx) == "" {
			ctx = v4.SetPayloadHash(ctx, h)
		}
		return next.HandleFinalize(ctx, in)
	})

func addPresetPayloadHash(stack *middleware.Stack) error {
	if _, ok := stack.Finalize.Get("ComputePayloadHash"); !ok {
		return nil
	}
	return stack.Finalize.Insert(presetPayloadHash, "ComputePayloadHash", middleware.Before)
}
