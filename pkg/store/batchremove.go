package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azblobblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// BatchRemover removes many blobs of a bucket at once (gc's sweep, with or
// without the trash), where a request per blob would set the pace.
//
// ListRange describes, as List does (Key, Size, ModTime, the internal folder
// skipped), the blobs whose keys lie between first and last, both included,
// in key order: a caller that is about to remove a run of sorted keys checks
// them all again with a page of the listing per 1,000 keys, instead of a Stat
// per key.
//
// CopyToInternal copies blob key to InternalDir/name on the service's side
// (no byte passes through this process); the blob stays where it is. It
// replaces an existing InternalDir/name: callers use fresh names.
//
// DeleteMany removes keys and returns one error per key, nil for a key that
// is gone: on S3 in DeleteObjects requests of up to 1,000 keys, several at
// once, each key's outcome read from the response (a key the response does
// not list as deleted is reported, whatever the status of the request),
// elsewhere by single deletes, many at once. etags, when not nil, holds for
// each key the Entry.ETag it was last described with ("" for none). Where
// DeletesIfMatch is true a key is deleted only while its object still has
// that tag: one uploaded again since, even with the same content, stays, and
// its outcome wraps ErrChanged. Elsewhere a delete is unconditional: on S3
// the tag of a plain upload is its content's MD5, the same for the same
// blob written again, so it would not catch what matters; a caller closes
// the window between its check and the delete only where DeletesIfMatch is
// true. A writer may upload a key again while the service asks to slow down (503
// SlowDown, 429, a key's SlowDown in the response): so a throttled key is
// sent again, after a pause, only once recheck, called with the indexes of
// the keys about to be sent again, returns nil for it. A key recheck returns
// an error for is not sent again, and that error is its outcome; with a nil
// recheck no key is sent again, and a throttled key's outcome is the
// service's answer. A key already gone is reported as ErrNotExist where the
// service says so; S3 reports such a key as deleted.
//
// DeletesIfMatch reports whether DeleteMany's etags make its deletes
// conditional (Azure's If-Match). ListRange's entries carry the ETag Stat
// reports, in the same form, on S3 and Azure (where the check of a batch by
// its key range stands in for a Stat each, and a deleted run's record keeps
// the tag); elsewhere none.
type BatchRemover interface {
	ListRange(ctx context.Context, first, last string, fn func(Entry) error) error
	CopyToInternal(ctx context.Context, key, name string) error
	DeleteMany(ctx context.Context, keys, etags []string, recheck Recheck) []error
	DeletesIfMatch() bool
}

// Recheck says, for each of keys[i] for i in idx, whether DeleteMany may
// send it again: nil, or why not (the error DeleteMany reports for it). It
// may be called from several goroutines at once.
type Recheck func(ctx context.Context, idx []int) []error

var _ BatchRemover = (*BucketStore)(nil)

// s3DeleteBatch is the most keys a DeleteObjects request may name.
const s3DeleteBatch = 1000

// s3DeleteRequests is how many DeleteObjects requests DeleteMany has in
// flight, and s3DeleteMin the fewest keys it names in one.
const (
	s3DeleteRequests = 8
	s3DeleteMin      = 250
)

// deleteJobs is how many single deletes DeleteMany runs at once where the
// service has no batch request: each is a round trip in which the client
// waits, and services serve thousands a second.
const deleteJobs = 32

// errStopRange ends a range listing past its last key.
var errStopRange = errors.New("past the range")

// ListRange reports the blobs with first <= key <= last in key order. On S3
// the listing starts at first (ListObjectsV2's StartAfter); elsewhere it
// starts at the longest prefix first and last share. Both stop past last.
func (s *BucketStore) ListRange(ctx context.Context, first, last string, fn func(Entry) error) error {
	for _, k := range []string{first, last} {
		if err := ValidKey(k); err != nil {
			return fmt.Errorf("store %s: list range: %w", s.location, err)
		}
	}
	if first > last {
		return nil
	}
	n := 0
	for n < len(first) && n < len(last) && first[n] == last[n] {
		n++
	}
	prefix := first[:n]
	inRange := func(e Entry) error {
		switch {
		case e.Key > last:
			return errStopRange
		case e.Key < first:
			return nil
		}
		return fn(e)
	}
	var err error
	if s.scheme == "s3" && plainS3Key(s.prefix+first, nil) {
		err = s.listS3From(ctx, prefix, first, inRange)
	} else {
		err = s.List(ctx, prefix, inRange)
	}
	if errors.Is(err, errStopRange) {
		return nil
	}
	return err
}

// listS3From lists prefix on S3 from just before first: StartAfter is first
// less its last byte, so that first itself is listed, and what lies between
// (first's shorter siblings) is skipped by the caller.
func (s *BucketStore) listS3From(ctx context.Context, prefix, first string, fn func(Entry) error) error {
	after := s.prefix + first[:len(first)-1]
	it := s.b.List(&blob.ListOptions{Prefix: prefix, BeforeList: func(as func(any) bool) error {
		var in *s3.ListObjectsV2Input
		if as(&in) {
			in.StartAfter = aws.String(after)
		}
		return nil
	}})
	for {
		obj, err := it.Next(ctx)
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return s.errorf("list", prefix, err)
		}
		if obj.IsDir || strings.HasSuffix(obj.Key, "/") || isInternal(obj.Key) {
			continue
		}
		if err := fn(s.listed(obj)); err != nil {
			return err
		}
	}
}

// CopyToInternal copies blob key to InternalDir/name on the service's side.
func (s *BucketStore) CopyToInternal(ctx context.Context, key, name string) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: copy: %w", s.location, err)
	}
	if err := validInternal(name); err != nil {
		return fmt.Errorf("store %s: copy: %w", s.location, err)
	}
	dst := internalName(name)
	if err := s.copy(ctx, key, dst); err != nil {
		return s.errorf("copy "+key+" to", dst, err)
	}
	return nil
}

// copy copies the object key to dst, both below the store's prefix, on the
// service: on S3 by a CopyObject of its own (see s3Putter.copy); on a file://
// bucket reading the source as Open does (copyFile).
func (s *BucketStore) copy(ctx context.Context, key, dst string) error {
	if s.scheme == "file" {
		return s.copyFile(ctx, key, dst)
	}
	if s.s3put != nil && !s3KeyEscaped(s.prefix+key) && !s3KeyEscaped(s.prefix+dst) {
		if err := s.s3put.copy(ctx, s.prefix+key, s.prefix+dst); err != nil {
			return s3CopyError(err)
		}
		return nil
	}
	return s.b.Copy(ctx, dst, key, nil)
}

// DeletesIfMatch is true on Azure; see [BatchRemover].
func (s *BucketStore) DeletesIfMatch() bool { return s.scheme == "azblob" }

// DeleteMany removes keys; see [BatchRemover].
func (s *BucketStore) DeleteMany(ctx context.Context, keys, etags []string, recheck Recheck) []error {
	errs := make([]error, len(keys))
	if etags != nil && len(etags) != len(keys) {
		for i := range errs {
			errs[i] = fmt.Errorf("store %s: delete: %d etags for %d keys: none deleted", s.location, len(etags), len(keys))
		}
		return errs
	}
	var batch []int // indexes of the keys DeleteObjects can name
	var single []int
	var client *s3.Client
	if s.scheme == "s3" && s.b.As(&client) {
		for i, k := range keys {
			switch err := ValidKey(k); {
			case err != nil:
				errs[i] = fmt.Errorf("store %s: delete: %w", s.location, err)
			case plainS3Key(s.prefix+k, nil):
				batch = append(batch, i)
			default:
				single = append(single, i) // gocloud escapes it: let gocloud name it
			}
		}
	} else {
		for i, k := range keys {
			if err := ValidKey(k); err != nil {
				errs[i] = fmt.Errorf("store %s: delete: %w", s.location, err)
				continue
			}
			single = append(single, i)
		}
	}
	var wg sync.WaitGroup
	// Requests at once: a service may work through one request's keys one
	// after the other (SeaweedFS does), so a few requests in flight keep it
	// busy; each names at least s3DeleteMin keys, at most s3DeleteBatch.
	requests := min(s3DeleteRequests, (len(batch)+s3DeleteMin-1)/s3DeleteMin)
	if requests > 0 {
		size := min(s3DeleteBatch, (len(batch)+requests-1)/requests)
		sem := make(chan struct{}, requests)
		for start := 0; start < len(batch); start += size {
			chunk := batch[start:min(start+size, len(batch))]
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				s.deleteObjects(ctx, client, keys, chunk, errs, recheck)
			}()
		}
	}
	work := make(chan int)
	for range min(deleteJobs, len(single)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				etag := ""
				if etags != nil {
					etag = etags[i]
				}
				s.deleteOne(ctx, keys, i, etag, errs, recheck)
			}
		}()
	}
	for _, i := range single {
		work <- i
	}
	close(work)
	wg.Wait()
	return errs
}

// throttleTries is how many times RetryThrottled and DeleteMany send what the
// service keeps throttling, and throttlePause returns the pause before try
// attempt+1: exponential from a quarter second, with jitter, at most 8
// seconds; about half a minute in all.
const throttleTries = 8

func throttlePause(attempt int) time.Duration {
	wait := min(250*time.Millisecond<<(attempt-1), 8*time.Second)
	return wait/2 + time.Duration(rand.Int64N(int64(wait)))
}

// resend waits before keys[i] for i in idx are sent again and returns those
// recheck still lets go; the others get recheck's error, or ctx's when it
// ends during the pause. A nil recheck lets none go: errs keeps the
// service's answer.
func (s *BucketStore) resend(ctx context.Context, keys []string, idx []int, errs []error, recheck Recheck, attempt int) []int {
	if recheck == nil || attempt >= throttleTries {
		return nil
	}
	select {
	case <-time.After(throttlePause(attempt)):
	case <-ctx.Done():
		for _, i := range idx {
			errs[i] = s.errorf("delete", keys[i], ctx.Err())
		}
		return nil
	}
	// Checked after the pause, not before it: the pause is when a writer may
	// have uploaded the key again.
	why := recheck(ctx, idx)
	again := idx[:0:0]
	for j, i := range idx {
		if j < len(why) && why[j] != nil {
			errs[i] = why[j]
			continue
		}
		again = append(again, i)
	}
	return again
}

// deleteOne removes keys[i] with a single delete, setting errs[i]; a
// throttled delete is sent again only as resend allows. Where DeletesIfMatch
// is true and etag is not "", the delete is on condition that the object
// still has etag.
func (s *BucketStore) deleteOne(ctx context.Context, keys []string, i int, etag string, errs []error, recheck Recheck) {
	for attempt := 1; ; attempt++ {
		errs[i] = s.deleteIfMatch(ctx, keys[i], etag)
		if !isThrottled(errs[i]) || len(s.resend(ctx, keys, []int{i}, errs, recheck, attempt)) == 0 {
			return
		}
	}
}

// deleteIfMatch deletes key, on Azure only while its object has etag (when
// not ""): a precondition that fails wraps ErrChanged.
func (s *BucketStore) deleteIfMatch(ctx context.Context, key, etag string) error {
	if etag == "" || !s.DeletesIfMatch() {
		return s.Delete(ctx, key)
	}
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store %s: delete: %w", s.location, err)
	}
	tag := azcore.ETag(etag)
	err := s.b.DeleteWithOptions(ctx, key, &blob.DeleteOptions{BeforeDelete: func(as func(any) bool) error {
		var opts *azblobblob.DeleteOptions
		if !as(&opts) {
			return fmt.Errorf("store %s: delete %s: the Azure driver offers no delete options for its If-Match", s.location, key)
		}
		opts.AccessConditions = &azblobblob.AccessConditions{ModifiedAccessConditions: &azblobblob.ModifiedAccessConditions{IfMatch: &tag}}
		return nil
	}})
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return fmt.Errorf("store %s: delete %s: %w (its ETag is no longer %s): %w", s.location, key, ErrChanged, etag, err)
	}
	if err != nil {
		return s.errorf("delete", key, err)
	}
	return nil
}

// sdkRetries says which failed requests the SDK would have sent again (a
// 500, a connection reset): deleteObjects sends them again itself, checked
// as a throttled request is.
var sdkRetries = retry.NewStandard()

// deleteObjects removes keys[i] for i in idx with DeleteObjects requests,
// setting errs[i]: nil for a key the response lists as deleted, the key's
// error for one it lists as failed, and an error for one it does not list.
// Keys the service throttles, as a whole request or one by one, are sent
// again only as resend allows, as are the keys of a request that failed in a
// way the SDK would retry. The SDK's own retries are off for these requests:
// they would send the keys again after a pause, unchecked.
func (s *BucketStore) deleteObjects(ctx context.Context, client *s3.Client, keys []string, idx []int, errs []error, recheck Recheck) {
	pending := idx
	for attempt := 1; len(pending) > 0; attempt++ {
		objs := make([]types.ObjectIdentifier, len(pending))
		byKey := make(map[string]int, len(pending))
		for j, i := range pending {
			full := s.prefix + keys[i]
			objs[j] = types.ObjectIdentifier{Key: aws.String(full)}
			byKey[full] = i
		}
		out, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(s.name),
			Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(false)},
		}, func(o *s3.Options) { o.Retryer = aws.NopRetryer{} })
		if err != nil {
			err = s.errorf("delete", fmt.Sprintf("(%d keys in one request)", len(pending)), err)
			for _, i := range pending {
				errs[i] = err
			}
			if !isThrottled(err) && !sdkRetries.IsErrorRetryable(err) {
				return
			}
			pending = s.resend(ctx, keys, pending, errs, recheck, attempt)
			continue
		}
		deleted := make(map[int]bool, len(out.Deleted))
		for _, d := range out.Deleted {
			if i, ok := byKey[aws.ToString(d.Key)]; ok {
				deleted[i] = true
			}
		}
		failed := make(map[int]*KeyError, len(out.Errors))
		for _, e := range out.Errors {
			if i, ok := byKey[aws.ToString(e.Key)]; ok {
				failed[i] = &KeyError{Code: aws.ToString(e.Code), Message: aws.ToString(e.Message)}
			}
		}
		var throttled []int
		for _, i := range pending {
			kerr, isFailed := failed[i]
			switch {
			case isFailed && deleted[i]:
				errs[i] = s.errorf("delete", keys[i], fmt.Errorf("%w: the response lists it as deleted and as failed (%v)", ErrNotConfirmed, kerr))
			case deleted[i]:
				errs[i] = nil
			case isFailed:
				errs[i] = s.errorf("delete", keys[i], kerr)
				if isThrottled(kerr) {
					throttled = append(throttled, i)
				}
			default:
				errs[i] = s.errorf("delete", keys[i], ErrNotConfirmed)
			}
		}
		if len(throttled) == 0 {
			return
		}
		pending = s.resend(ctx, keys, throttled, errs, recheck, attempt)
	}
}

// ErrNotConfirmed is wrapped by DeleteMany for a key whose removal the
// service did not confirm: it may still be there.
var ErrNotConfirmed = errors.New("the service did not confirm its removal")

// KeyError is the error a DeleteObjects response gives for one key.
type KeyError struct {
	Code    string
	Message string
}

func (e *KeyError) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// ErrorCode lets isThrottled read the code, as it reads the SDK's errors.
func (e *KeyError) ErrorCode() string { return e.Code }

// Is maps the codes that say the key names nothing to ErrNotExist.
func (e *KeyError) Is(target error) bool {
	return target == ErrNotExist && (e.Code == "NoSuchKey" || e.Code == "NotFound")
}
