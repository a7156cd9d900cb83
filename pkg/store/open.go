package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/mediactl/mediactl/pkg/usage"
)

// ErrUsage is wrapped by the errors of Open and OpenBucket that are the caller's to
// fix (a malformed or unsupported bucket URL, a store directory that does not
// exist): a CLI reports them as usage errors.
var ErrUsage = usage.Err

func usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

var schemeLike = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`)

// Open opens the store named by spec: a bucket URL when spec starts with a URL
// scheme, in any letter case ("s3://bucket/prefix/", "gs://…", "azblob://…",
// "file:///dir", "mem://"; see [OpenBucket] and [URLScheme]), otherwise an
// existing local directory (see [OpenLocal]).
// Errors the caller can fix wrap [ErrUsage] and say how.
func Open(ctx context.Context, spec string) (Store, error) {
	if spec == "" {
		return nil, usagef("empty store: give a directory path or a bucket URL (%s)", schemeList())
	}
	if scheme := URLScheme(spec); scheme != "" {
		if !IsBucketScheme(scheme) {
			return nil, usagef("unsupported store URL scheme %q in %q: supported schemes are %s; a local directory is given as a plain path", scheme+"://", Redact(spec), schemeList())
		}
		s, err := OpenBucket(ctx, spec)
		if err != nil {
			return nil, err
		}
		return s, nil
	}

	fi, err := os.Stat(spec)
	if err != nil {
		hint := "create it first, or pass an existing directory"
		if m := schemeLike.FindStringSubmatch(spec); m != nil && len(m[1]) > 1 {
			hint = fmt.Sprintf("if you meant a bucket URL, write it as %s://… (supported: %s)", strings.ToLower(m[1]), schemeList())
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usagef("store directory %s does not exist: %s: %w", spec, hint, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("store %s: %w", spec, plainErr(err))
	}
	if !fi.IsDir() {
		return nil, usagef("store %s is not a directory: pass the directory that holds the blobs, or a bucket URL (%s)", spec, schemeList())
	}
	s, err := OpenLocal(spec)
	if err != nil {
		return nil, err
	}
	return s, nil
}
