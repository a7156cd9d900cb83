package store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"google.golang.org/api/googleapi"
)

// RecoveryReporter says whether the service behind a store keeps what is
// deleted from it, so that a report can say what a delete for good means
// there: on a bucket with versioning or soft delete, a blob mediactl deletes
// can still be brought back by the service's own means, for a while or until
// someone removes it, and its bytes are still stored (and billed).
//
// DeleteRecovery asks the service once (S3 GetBucketVersioning and the
// bucket's lifecycle rules; the GCS bucket's attributes; the Azure blob
// service's properties and one listing): it is a bucket setting, not a
// property of a blob, so a run asks it once. It never fails: what it could
// not find out is a Recovery of kind [RecoveryUnknown] with the reason in
// Detail (credentials that may not read the setting, a service that does not
// implement the request, an interrupted context). Every bucket store offers
// it; a local store does not.
type RecoveryReporter interface {
	DeleteRecovery(ctx context.Context) Recovery
}

// The kinds of [Recovery].
const (
	// RecoveryNone: the service keeps nothing a delete removes.
	RecoveryNone = "none"
	// RecoveryUnknown: it could not be found out; Detail says why.
	RecoveryUnknown = "unknown"
	// RecoveryS3Versioning: S3 versioning is enabled. A delete leaves a
	// delete marker; the object's last version stays as a noncurrent
	// version until a lifecycle rule (Retention) or someone removes it.
	RecoveryS3Versioning = "s3-versioning"
	// RecoveryS3VersioningSuspended: S3 versioning was enabled and is
	// suspended. An object written while it was enabled keeps that version
	// when it is deleted; one written since (version "null") is deleted for
	// good.
	RecoveryS3VersioningSuspended = "s3-versioning-suspended"
	// RecoveryGCSVersioning: GCS object versioning is on. A deleted object
	// stays as a noncurrent version until a lifecycle rule or someone
	// removes it (and then, with soft delete, Retention more).
	RecoveryGCSVersioning = "gcs-versioning"
	// RecoveryGCSSoftDelete: GCS soft delete keeps a deleted object for
	// Retention, restorable with gcloud storage restore.
	RecoveryGCSSoftDelete = "gcs-soft-delete"
	// RecoveryAzureVersioning: the blobs carry version ids, so blob
	// versioning is on (an account setting the blob service does not
	// report): a deleted blob's version stays until a lifecycle rule or
	// someone removes it.
	RecoveryAzureVersioning = "azure-versioning"
	// RecoveryAzureSoftDelete: Azure blob soft delete keeps a deleted blob
	// for Retention, restorable with an undelete.
	RecoveryAzureSoftDelete = "azure-soft-delete"
)

// Recovery is what a bucket's service keeps of a deleted object.
type Recovery struct {
	// Kind is one of the Recovery… constants.
	Kind string
	// Retention is how long a deleted object is kept; 0 when it is kept
	// until someone (or a rule the report does not know of) removes it, and
	// for kinds none and unknown.
	Retention time.Duration
	// Detail says what the service reported, or why it is not known.
	Detail string
}

// Keeps reports whether the service keeps deleted objects, at least some of
// them (suspended S3 versioning keeps those written while it was enabled).
func (r Recovery) Keeps() bool {
	return r.Kind != RecoveryNone && r.Kind != RecoveryUnknown && r.Kind != ""
}

var _ RecoveryReporter = (*BucketStore)(nil)

// DeleteRecovery asks the bucket's service what it keeps of a deleted
// object; see [RecoveryReporter]. A file:// or mem:// bucket keeps nothing.
func (s *BucketStore) DeleteRecovery(ctx context.Context) Recovery {
	var r Recovery
	switch s.scheme {
	case "s3":
		r = s.s3Recovery(ctx)
	case "gs":
		r = s.gcsRecovery(ctx)
	case "azblob":
		r = s.azureRecovery(ctx)
	case "file":
		return Recovery{Kind: RecoveryNone, Detail: "a folder on this host: a deleted file is gone (file system snapshots are not looked at)"}
	default:
		return Recovery{Kind: RecoveryNone, Detail: "an in-memory bucket keeps nothing"}
	}
	if r.Kind == RecoveryUnknown && ctx.Err() != nil {
		r.Detail = fmt.Sprintf("no answer: %v", ctx.Err())
	}
	return r
}

// unknownRecovery is a Recovery of kind unknown: what was asked, and why
// there is no answer.
func unknownRecovery(asked string, err error, hint string) Recovery {
	d := asked + ": " + serviceErrText(err)
	if hint != "" {
		d += " (" + hint + ")"
	}
	return Recovery{Kind: RecoveryUnknown, Detail: d}
}

// serviceErrText is a service's error as its code and message, without the
// SDK's request ids and retry chains where the SDK gives them apart.
func serviceErrText(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if m := apiErr.ErrorMessage(); m != "" {
			return apiErr.ErrorCode() + ": " + m
		}
		return apiErr.ErrorCode()
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("%s (HTTP %d)", re.ErrorCode, re.StatusCode)
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		if ge.Message != "" {
			return fmt.Sprintf("HTTP %d: %s", ge.Code, ge.Message)
		}
		return fmt.Sprintf("HTTP %d", ge.Code)
	}
	return err.Error()
}

// denied reports whether err is the service refusing the credentials the
// request (see accessKind), rather than failing.
func denied(err error) bool {
	if kind, ok := accessKind(err); ok && kind == Denied {
		return true
	}
	_, status := serviceError(err)
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		status = re.StatusCode
	}
	return status == http.StatusForbidden
}

// s3Recovery reads the bucket's versioning state and, when versions are
// kept, the lifecycle rule that expires noncurrent versions of the whole
// store.
func (s *BucketStore) s3Recovery(ctx context.Context) Recovery {
	var c *s3.Client
	if !s.b.As(&c) {
		return Recovery{Kind: RecoveryUnknown, Detail: "the S3 driver offers no client to ask"}
	}
	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(s.name)})
	if err != nil {
		hint := ""
		if denied(err) {
			hint = "the credentials may not read the bucket's versioning: s3:GetBucketVersioning"
		}
		return unknownRecovery("GetBucketVersioning", err, hint)
	}
	var r Recovery
	switch v.Status {
	case types.BucketVersioningStatusEnabled:
		r = Recovery{Kind: RecoveryS3Versioning, Detail: "S3 versioning is enabled: a delete leaves a delete marker and the object's last version stays, noncurrent"}
	case types.BucketVersioningStatusSuspended:
		r = Recovery{Kind: RecoveryS3VersioningSuspended, Detail: "S3 versioning is suspended: an object written while it was enabled keeps that version when deleted; one written since is deleted for good"}
	default:
		return Recovery{Kind: RecoveryNone, Detail: "S3 versioning was never enabled on the bucket"}
	}
	if v.MFADelete == types.MFADeleteStatusEnabled {
		r.Detail += "; MFA delete is enabled"
	}
	days, rule, err := s.s3NoncurrentExpiry(ctx, c)
	switch {
	case err != nil:
		r.Detail += "; lifecycle rules not read (" + serviceErrText(err) + "): how long noncurrent versions stay is not known"
	case days > 0:
		r.Retention = time.Duration(days) * 24 * time.Hour
		r.Detail += fmt.Sprintf("; lifecycle rule %q removes noncurrent versions %s after they became noncurrent", rule, strings.TrimPrefix(durationText(r.Retention), "for "))
	default:
		r.Detail += "; no lifecycle rule removes noncurrent versions of the whole store: they stay until someone removes them"
	}
	return r
}

// s3NoncurrentExpiry returns the fewest days after which an enabled
// lifecycle rule that covers every key of the store removes noncurrent
// versions, and that rule's id; 0 when no rule does. A rule that keeps some
// newer noncurrent versions whatever their age, or that is limited by tags
// or sizes, does not count: a deleted blob's last version may outlive it.
func (s *BucketStore) s3NoncurrentExpiry(ctx context.Context, c *s3.Client) (days int32, rule string, err error) {
	lc, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(s.name)})
	if err != nil {
		if code, _ := serviceError(err); code == "NoSuchLifecycleConfiguration" {
			return 0, "", nil
		}
		return 0, "", err
	}
	for _, r := range lc.Rules {
		nv := r.NoncurrentVersionExpiration
		if r.Status != types.ExpirationStatusEnabled || nv == nil || nv.NoncurrentDays == nil || *nv.NoncurrentDays <= 0 {
			continue
		}
		if nv.NewerNoncurrentVersions != nil && *nv.NewerNoncurrentVersions > 0 {
			continue
		}
		prefix, whole := lifecycleScope(r)
		if !whole || !strings.HasPrefix(s.prefix, prefix) {
			continue
		}
		if days == 0 || *nv.NoncurrentDays < days {
			days, rule = *nv.NoncurrentDays, aws.ToString(r.ID)
		}
	}
	return days, rule, nil
}

// lifecycleScope is the key prefix a lifecycle rule applies to, and whether
// it applies to every object under it (no tag or size condition).
func lifecycleScope(r types.LifecycleRule) (prefix string, whole bool) {
	f := r.Filter
	switch {
	case f == nil:
		// A rule written before the Filter element exists names its prefix here;
		// buckets still hold such rules, and they apply.
		//lint:ignore SA1019 read, never written: the field is how older rules say their scope
		return aws.ToString(r.Prefix), true
	case f.Tag != nil || f.ObjectSizeGreaterThan != nil || f.ObjectSizeLessThan != nil:
		return "", false
	case f.And != nil:
		a := f.And
		if len(a.Tags) > 0 || a.ObjectSizeGreaterThan != nil || a.ObjectSizeLessThan != nil {
			return "", false
		}
		return aws.ToString(a.Prefix), true
	}
	return aws.ToString(f.Prefix), true
}

// gcsRecovery reads the bucket's attributes: object versioning and the soft
// delete policy.
func (s *BucketStore) gcsRecovery(ctx context.Context) Recovery {
	var c *storage.Client
	if !s.b.As(&c) {
		return Recovery{Kind: RecoveryUnknown, Detail: "the GCS driver offers no client to ask"}
	}
	attrs, err := c.Bucket(s.name).Attrs(ctx)
	if err != nil {
		hint := ""
		if denied(err) {
			hint = "the credentials may not read the bucket's attributes: storage.buckets.get"
		}
		return unknownRecovery("bucket attributes", err, hint)
	}
	var soft time.Duration
	if p := attrs.SoftDeletePolicy; p != nil {
		soft = p.RetentionDuration
	}
	softText := "soft delete is off"
	switch {
	case attrs.SoftDeletePolicy == nil:
		softText = "the service reports no soft delete policy"
	case soft > 0:
		softText = fmt.Sprintf("soft delete keeps a deleted object %s", durationText(soft))
	}
	if attrs.VersioningEnabled {
		d := "object versioning is on: a deleted object stays as a noncurrent version until a lifecycle rule or someone removes it"
		if soft > 0 {
			d += fmt.Sprintf("; soft delete then keeps it %s more", durationText(soft))
		}
		return Recovery{Kind: RecoveryGCSVersioning, Detail: d}
	}
	if soft > 0 {
		return Recovery{Kind: RecoveryGCSSoftDelete, Retention: soft, Detail: softText + ": gcloud storage restore brings it back"}
	}
	return Recovery{Kind: RecoveryNone, Detail: softText + ", and object versioning is off"}
}

// azureRecovery reads the blob service's delete retention policy (soft
// delete, an account setting) and lists one blob of the store with its
// versions: blob versioning, also an account setting, is not among the
// service's properties, but every blob written while it is on has a version
// id.
func (s *BucketStore) azureRecovery(ctx context.Context) Recovery {
	var c *container.Client
	if !s.b.As(&c) {
		return Recovery{Kind: RecoveryUnknown, Detail: "the Azure driver offers no client to ask"}
	}
	svcURL, err := url.Parse(c.URL())
	if err != nil {
		return unknownRecovery("the container's URL", err, "")
	}
	svcURL.Path = path.Dir(strings.TrimSuffix(svcURL.Path, "/"))
	svc, err := azureService(svcURL.String(), &http.Client{Transport: bucketTransport(s.ioTimeout)})
	if err != nil {
		return unknownRecovery("the blob service", err, "")
	}
	props, err := svc.GetProperties(ctx, nil)
	if err != nil {
		hint := ""
		if denied(err) {
			hint = "reading the blob service's properties takes the account key, an account SAS or an account-level role; a container's SAS is not enough"
		}
		return unknownRecovery("blob service properties", err, hint)
	}
	var soft time.Duration
	softText := "blob soft delete is off"
	if p := props.DeleteRetentionPolicy; p != nil && p.Enabled != nil && *p.Enabled {
		if p.Days != nil && *p.Days > 0 {
			soft = time.Duration(*p.Days) * 24 * time.Hour
		}
		softText = fmt.Sprintf("blob soft delete keeps a deleted blob %s", durationText(soft))
		if p.AllowPermanentDelete != nil && *p.AllowPermanentDelete {
			softText += " (permanent delete is allowed, for deletes that ask for it: mediactl's do not)"
		}
	}

	prefix, one := s.prefix, int32(1)
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix, MaxResults: &one, Include: container.ListBlobsInclude{Versions: true}})
	page, err := pager.NextPage(ctx)
	versioned, versionText := false, ""
	switch {
	case err != nil:
		versionText = "blob versioning not known: the listing with versions failed (" + serviceErrText(err) + ")"
	case page.Segment == nil || len(page.Segment.BlobItems) == 0:
		versionText = "blob versioning not known: the store holds no blob to tell by"
	default:
		versioned = page.Segment.BlobItems[0].VersionID != nil
		versionText = "the first blob listed carries no version id: blob versioning is off"
	}
	switch {
	case versioned:
		d := "the blobs carry version ids, so blob versioning is on: a deleted blob's version stays until a lifecycle rule or someone removes it"
		if soft > 0 {
			d += "; " + softText
		}
		return Recovery{Kind: RecoveryAzureVersioning, Detail: d}
	case soft > 0:
		return Recovery{Kind: RecoveryAzureSoftDelete, Retention: soft, Detail: softText + ": an undelete brings it back; " + versionText}
	}
	return Recovery{Kind: RecoveryNone, Detail: softText + "; " + versionText}
}

// durationText says d in days when it is whole days ("for 7 days"), else as
// Go writes it.
func durationText(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d <= 0:
		return "for a time the service does not say"
	case d%day == 0 && d == day:
		return "for 1 day"
	case d%day == 0:
		return fmt.Sprintf("for %d days", d/day)
	}
	return "for " + d.String()
}
