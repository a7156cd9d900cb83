package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/aws/smithy-go"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"
)

// AccessKind says why a store refused to be read at all.
type AccessKind string

const (
	// BadCredentials: the service does not know the credentials, or they
	// do not sign (a wrong secret key, an expired token).
	BadCredentials AccessKind = "credentials"
	// Denied: the credentials are valid but may not list the store.
	Denied AccessKind = "permission"
	// NoSuchBucket: the bucket, container or folder does not exist.
	NoSuchBucket AccessKind = "missing"
)

// AccessError is a store that cannot be read at all, for a reason a retry
// cannot heal: the operator must fix the credentials, the permissions or the
// URL. It wraps [ErrUsage]; throttling, timeouts and other failures are not
// AccessErrors (a retry may heal them).
type AccessError struct {
	Store string // the store's location, credentials-free
	Kind  AccessKind
	Err   error
}

func (e *AccessError) Error() string {
	what := map[AccessKind]string{
		BadCredentials: "the credentials are refused",
		Denied:         "permission denied",
		NoSuchBucket:   "no such bucket, container or folder",
	}[e.Kind]
	return fmt.Sprintf("store %s: %s: %v", e.Store, what, e.Err)
}

func (e *AccessError) Unwrap() []error { return []error{e.Err, ErrUsage} }

// Probe reads the first page of st's listing, once, before a run relies on
// it: a store that refuses to be read at all says so here, as an
// *AccessError, rather than as a listing problem that a retry would repeat.
// Other errors are returned as they are. A local store is probed by Open.
func Probe(ctx context.Context, st Store) error {
	bs, ok := st.(*BucketStore)
	if !ok {
		return nil
	}
	_, _, err := bs.b.ListPage(ctx, blob.FirstPageToken, 1, nil)
	if err != nil {
		return Classify(bs.Location(), err)
	}
	return nil
}

// Classify returns err as an *AccessError when it says the store cannot be
// read at all (see AccessKind), else err itself. It reads the services' own
// error codes: S3's (SignatureDoesNotMatch, InvalidAccessKeyId, AccessDenied,
// NoSuchBucket), Azure's (AuthenticationFailed, AuthorizationFailure,
// ContainerNotFound), GCS's HTTP status, and a missing file:// folder.
func Classify(location string, err error) error {
	if err == nil {
		return nil
	}
	var ae *AccessError
	if errors.As(err, &ae) || errors.Is(err, ErrUsage) {
		return err // already says what to fix
	}
	if kind, ok := accessKind(err); ok {
		return &AccessError{Store: location, Kind: kind, Err: err}
	}
	return err
}

func accessKind(err error) (AccessKind, bool) {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "SignatureDoesNotMatch", "InvalidAccessKeyId", "InvalidToken", "ExpiredToken", "InvalidClientTokenId", "UnrecognizedClientException":
			return BadCredentials, true
		case "AccessDenied", "AllAccessDisabled", "AccountProblem":
			return Denied, true
		case "NoSuchBucket":
			return NoSuchBucket, true
		}
	}
	var az *azcore.ResponseError
	if errors.As(err, &az) {
		switch az.ErrorCode {
		case "AuthenticationFailed", "InvalidAuthenticationInfo":
			return BadCredentials, true
		case "AuthorizationFailure", "AuthorizationPermissionMismatch", "AuthorizationResourceTypeMismatch", "InsufficientAccountPermissions":
			return Denied, true
		case "ContainerNotFound", "ResourceNotFound":
			return NoSuchBucket, true
		}
	}
	var g *googleapi.Error
	if errors.As(err, &g) {
		switch g.Code {
		case http.StatusUnauthorized:
			return BadCredentials, true
		case http.StatusForbidden:
			return Denied, true
		case http.StatusNotFound:
			return NoSuchBucket, true
		}
	}
	switch gcerrors.Code(err) {
	case gcerrors.PermissionDenied:
		return Denied, true
	case gcerrors.NotFound:
		// A listing finds no object, not "not found": only the bucket or
		// the folder itself is missing.
		return NoSuchBucket, true
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		if errors.Is(err, fs.ErrPermission) {
			return Denied, true
		}
		return NoSuchBucket, true
	}
	return "", false
}
