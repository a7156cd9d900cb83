package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// s3SinglePutMax bounds the contents s3Putter uploads, to the largest of
// readSmall's buffers (1 MiB). The bound is a choice, not a measurement: the
// benchmark's small blobs are 100 KiB, where the fixed cost of each object,
// not the bytes, sets the pace; it keeps the memory per upload small.
const s3SinglePutMax = 64 << 10 << (len(s3PutBuffers) - 1)

// s3Putter uploads a small content of known size to S3 with one PutObject
// from memory (read by readSmall into a pooled buffer). gocloud's writer
// hands the bytes through a pipe to the AWS transfer manager, which copies
// them again into a buffer it grows from 512 bytes, for every object. With
// many small blobs that work and the garbage it leaves cost migrate's client
// a third of its CPU (6.2 s against 4.2 s per 5,000 uploads of 100 KiB, see
// bench/README.md), which the S3 service on the same machine then lacked.
//
// The object written is the one the writer would write — same key, content
// type, metadata and server-side encryption, same client and middleware — so
// only keys and metadata that gocloud stores unescaped are taken (see
// plainS3Key); everything else goes through gocloud.
type s3Putter struct {
	client   *s3.Client
	bucket   string
	sse      types.ServerSideEncryption
	kmsKeyID string
}

// s3PutBuffers pools readSmall's buffers by size class, 64 KiB to 1 MiB
// (s3SinglePutMax), so that a 4 KiB blob does not hold a 1 MiB buffer.
var s3PutBuffers [5]sync.Pool

func init() {
	for i := range s3PutBuffers {
		size := 64 << 10 << i
		s3PutBuffers[i].New = func() any { b := make([]byte, size); return &b }
	}
}

// readSmall reads r into a pooled buffer longer than size. When r ends
// within it, body is the content; otherwise body is nil and rest reads the
// whole content (for a size of s3SinglePutMax or more, rest is r, unread).
// release gives the buffer back once body or rest is done with; it is never
// nil, also on an error.
func readSmall(ctx context.Context, r io.Reader, size int64) (body []byte, rest io.Reader, release func(), err error) {
	var buf []byte
	release = func() {}
	for i := range s3PutBuffers {
		if size < 64<<10<<i {
			p := &s3PutBuffers[i]
			bp := p.Get().(*[]byte)
			buf, release = *bp, func() { p.Put(bp) }
			break
		}
	}
	// Not io.ReadFull, which drops an error that comes with the last bytes.
	n := 0
	cr := ctxReader{ctx, r}
	for n < len(buf) && err == nil {
		var k int
		k, err = cr.Read(buf[n:])
		n += k
	}
	switch err {
	case nil:
		return nil, io.MultiReader(bytes.NewReader(buf), r), release, nil
	case io.EOF:
		return buf[:n], nil, release, nil
	}
	return nil, nil, release, err
}

// put uploads body to key (the full key, prefix included) with one
// PutObject.
func (p *s3Putter) put(ctx context.Context, key string, body []byte, opts PutOptions, unsummed bool) error {
	// As blob.Writer: the given type normalized, or one sniffed from the content.
	var contentType string
	if opts.ContentType == "" {
		contentType = http.DetectContentType(body)
	} else {
		t, params, err := mime.ParseMediaType(opts.ContentType)
		if err != nil {
			return err
		}
		contentType = mime.FormatMediaType(t, params)
	}
	in := &s3.PutObjectInput{
		Bucket:        aws.String(p.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
		ContentType:   aws.String(contentType),
		Metadata:      opts.Metadata,
	}
	if opts.IfNotExist {
		in.IfNoneMatch = aws.String("*")
	}
	if p.sse != "" {
		in.ServerSideEncryption = p.sse
	}
	if p.kmsKeyID != "" {
		in.SSEKMSKeyId = aws.String(p.kmsKeyID)
	}
	var optFns []func(*s3.Options)
	if unsummed {
		// What openS3 gives the unsummed bucket's client.
		optFns = append(optFns, func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired })
	}
	// A canceled ctx comes back as smithy's CanceledError, which wraps it.
	_, err := p.client.PutObject(ctx, in, optFns...)
	return err
}

// copy copies the object src to dst (full keys, prefix included) in the
// bucket with one CopyObject. gocloud's s3blob names the source with
// url.QueryEscape, which writes a space as '+': SeaweedFS reads that '+' as
// itself, so the copy of "a b.png" was "a+b.png", another object, and the
// trash took its bytes for the blob's. Here every byte but the unreserved
// ones and '/' is percent-encoded, which every decoder reads one way.
func (p *s3Putter) copy(ctx context.Context, src, dst string) error {
	in := &s3.CopyObjectInput{
		Bucket:     aws.String(p.bucket),
		Key:        aws.String(dst),
		CopySource: aws.String(copySource(p.bucket, src)),
	}
	if p.sse != "" {
		in.ServerSideEncryption = p.sse
	}
	if p.kmsKeyID != "" {
		in.SSEKMSKeyId = aws.String(p.kmsKeyID)
	}
	_, err := p.client.CopyObject(ctx, in)
	return err
}

// s3KeyEscaped reports whether gocloud's s3blob stores key under another
// name than key itself (a control character, "../", or what reads as one of
// its "__0x…__" escapes): such keys are copied through gocloud, which names
// them as it named them.
func s3KeyEscaped(key string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] < 32 {
			return true
		}
	}
	return strings.Contains(key, "../") || strings.Contains(key, "__0x")
}

// copySource is the x-amz-copy-source of key in bucket: "bucket/key", each
// byte outside A-Z a-z 0-9 - . _ ~ / percent-encoded.
func copySource(bucket, key string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for _, c := range []byte(bucket + "/" + key) {
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// s3CopyError classifies err from copy as gocloud does: a missing source
// is ErrNotExist (S3 answers NoSuchKey, some servers 404).
func s3CopyError(err error) error {
	code, httpStatus := serviceError(err)
	if code == "NoSuchKey" || code == "NoSuchBucket" || code == "NotFound" || httpStatus == http.StatusNotFound {
		return fmt.Errorf("%w: %w", ErrNotExist, err)
	}
	return err
}

// s3PutError classifies err from put as gocloud's s3blob does for its writer:
// a failed condition means the key exists, a missing bucket is ErrNotExist.
func s3PutError(err error) error {
	code, httpStatus := serviceError(err)
	switch {
	case code == "PreconditionFailed" || httpStatus == http.StatusPreconditionFailed:
		return fmt.Errorf("%w: %w", ErrExist, err)
	case code == "NoSuchBucket" || code == "NotFound" || httpStatus == http.StatusNotFound:
		return fmt.Errorf("%w: %w", ErrNotExist, err)
	}
	return err
}

// plainS3Key reports whether gocloud stores key and metadata as they are:
// its escaping changes nothing, and metadata keys are already lower-case, as
// blob.Writer makes them. It judges conservatively: ASCII letters, digits and
// "._-" everywhere, "/" in keys, no "__" (the start of an escape sequence)
// and no "../".
func plainS3Key(key string, metadata map[string]string) bool {
	if !plainS3(key, true) {
		return false
	}
	for k, v := range metadata {
		if k == "" || k != strings.ToLower(k) || !plainS3(k, false) || !plainS3(v, false) {
			return false
		}
	}
	return true
}

func plainS3(s string, slash bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-':
		case c == '_':
			if i > 0 && s[i-1] == '_' {
				return false
			}
		case c == '/' && slash:
			if i >= 2 && s[i-1] == '.' && s[i-2] == '.' {
				return false
			}
		default:
			return false
		}
	}
	return true
}
