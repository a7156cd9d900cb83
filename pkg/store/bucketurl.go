package store

// A bucket URL read and checked: scheme, name, prefix, query parameters,
// and the location a report names the bucket by.

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	// The bucket kinds mediactl supports; see bucketParams.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
)

// parseBucketURL checks rawURL as OpenBucket documents it and returns the
// store it names, not yet opened.
func parseBucketURL(rawURL string) (*BucketStore, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, usagef("bucket URL %q does not parse (%v); write it as SCHEME://BUCKET[/PREFIX/][?PARAM=VALUE...]", Redact(rawURL), plainURLErr(err))
	}
	if u.Scheme == "" || u.Opaque != "" {
		return nil, usagef("%q is not a bucket URL; write it as SCHEME://BUCKET[/PREFIX/] with a scheme among %s", Redact(rawURL), schemeList())
	}
	sch, ok := lookupScheme(u.Scheme)
	if !ok {
		return nil, usagef("unsupported bucket URL scheme %q in %q: supported schemes are %s", u.Scheme+"://", Redact(rawURL), schemeList())
	}
	params := sch.params
	if u.User != nil {
		return nil, usagef("bucket URL %q contains credentials: remove them from the URL and provide them through the environment (AWS_*, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*)", Redact(rawURL))
	}
	if u.Fragment != "" {
		return nil, usagef("bucket URL %q has a #fragment: remove it", Redact(rawURL))
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, usagef("bucket URL %q has a malformed query (%v): write parameters as ?name=value&name2=value2, escaping values", rawURL, err)
	}
	for k, vs := range q {
		switch {
		case k == "key":
			return nil, usagef("bucket URL %q: the key= parameter (single-key bucket) is not supported for a store; use prefix= to confine the store to a folder", rawURL)
		case k != "prefix" && !slices.Contains(params, k):
			return nil, usagef("bucket URL %q: unknown query parameter %q for %s:// (supported: prefix, %s)", rawURL, k, u.Scheme, strings.Join(params, ", "))
		case len(vs) > 1:
			return nil, usagef("bucket URL %q: query parameter %q is given %d times; give it once", rawURL, k, len(vs))
		}
	}
	for _, k := range sch.bools {
		if v := q.Get(k); v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				return nil, usagef("bucket URL %q: %s=%s: write true or false", Redact(rawURL), k, v)
			}
		}
	}
	prefix := q.Get("prefix")
	q.Del("prefix")

	s := &BucketStore{scheme: u.Scheme, ioTimeout: DefaultIOTimeout}
	if q.Has("io_timeout") {
		if s.ioTimeout, err = parseIOTimeout(q.Get("io_timeout")); err != nil {
			return nil, fmt.Errorf("bucket URL %q: %w", Redact(rawURL), err)
		}
		q.Del("io_timeout")
	}
	open := &url.URL{Scheme: u.Scheme, RawQuery: q.Encode()}
	switch {
	case sch.named:
		if u.Host == "" {
			return nil, usagef("bucket URL %q names no bucket: write it as %s://BUCKET[/PREFIX/]", rawURL, u.Scheme)
		}
		if p := strings.TrimPrefix(u.Path, "/"); p != "" {
			if prefix != "" {
				return nil, usagef("bucket URL %q gives a prefix twice (as path and as prefix=): keep one", rawURL)
			}
			prefix = p
		}
		s.name = u.Host
		open.Host = u.Host
	case u.Scheme == "file":
		if u.Host != "" && u.Host != "localhost" && u.Host != "." {
			return nil, usagef("file URL %q names host %q: use file:///ABSOLUTE/DIR (three slashes) or a plain directory path", rawURL, u.Host)
		}
		dir := u.Path
		if u.Host == "." {
			dir = strings.TrimPrefix(dir, "/")
		}
		if dir == "" {
			return nil, usagef("file URL %q names no directory: use file:///ABSOLUTE/DIR", rawURL)
		}
		abs, err := filepath.Abs(filepath.FromSlash(dir))
		if err != nil {
			return nil, usagef("file URL %q: %v", rawURL, err)
		}
		s.name = abs
		fileWriteParams(q, abs)
		open.RawQuery = q.Encode()
		open.Path = filepath.ToSlash(abs)
		if !strings.HasPrefix(open.Path, "/") {
			open.Path = "/" + open.Path // Windows: file:///C:/dir
		}
	case u.Scheme == "mem":
		s.name = u.Host
		open.Host = u.Host
	}
	if prefix != "" {
		prefix = strings.TrimSuffix(prefix, "/") + "/"
		err := checkPath(strings.TrimSuffix(prefix, "/"))
		if err == nil && strings.ContainsFunc(prefix, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			err = pathError("contains a control character")
		}
		if err != nil {
			return nil, usagef("bucket URL %q: prefix %q %s; a prefix is a folder path like media/ or a/b/", rawURL, prefix, err)
		}
	}
	s.prefix = prefix
	s.openURL = open
	s.guardReads = u.Scheme == "gs" && s.ioTimeout > 0 && !gcsGRPC(q)
	s.unsummedOK = u.Scheme == "s3" && !q.Has("request_checksum_calculation")

	// Location: the URL an operator would pass back, credentials-free (the
	// parameter check above admits no secrets), with the prefix in its place.
	loc := *s.openURL
	if u.Scheme == "file" {
		lq := loc.Query()
		for _, k := range writeOnlyParams {
			lq.Del(k)
		}
		loc.RawQuery = lq.Encode()
	}
	switch {
	case sch.named:
		loc.Path = "/" + prefix
		if prefix == "" {
			loc.Path = ""
		}
	default:
		if prefix != "" {
			lq := loc.Query()
			lq.Set("prefix", prefix)
			loc.RawQuery = lq.Encode()
		}
	}
	s.location = loc.String()
	if u.Scheme == "mem" && loc.Host == "" {
		s.location = strings.Replace(s.location, "mem:", "mem://", 1)
	}
	return s, nil
}

// plainURLErr returns the reason inside a *url.Error, whose message repeats the URL.
func plainURLErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
