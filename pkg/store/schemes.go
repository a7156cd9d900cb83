package store

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// bucketScheme is one kind of bucket mediactl opens, by URL scheme.
type bucketScheme struct {
	name string
	// params are the URL query parameters its gocloud driver accepts
	// (gocloud.dev v0.49; see each driver's URLOpener). Anything else is
	// refused up front, so a typo is a clear usage error and no secret can end
	// up in a Location. "prefix" is accepted by every scheme, and
	// "io_timeout" (mediactl's own, see DefaultIOTimeout) by the services'.
	params []string
	// bools are the parameters among params that take true or false, which
	// Open checks itself where mediactl, not the driver, reads them.
	bools []string
	// named: the URL's host names the bucket (or container) and its path is
	// the key prefix ("s3://bucket/prefix/"), as opposed to file:// (the path
	// is the directory) and mem:// (nothing is named).
	named bool
}

// bucketSchemes is the one table of bucket URL schemes: what Open, OpenBucket
// and the session sources' dispatch (sessions.Open) accept, in the order
// messages list them.
var bucketSchemes = []bucketScheme{
	{name: "file", params: []string{"create_dir", "dir_file_mode", "no_tmp_dir", "metadata", "base_url", "secret_key_path"}},
	{name: "mem", params: []string{"nomd5"}},
	{name: "s3", named: true, params: []string{
		// s3blob.URLOpener
		"ssetype", "kmskeyid", "accelerate", "use_path_style", "s3ForcePathStyle", "disable_https",
		// gocloud.dev/aws.V2ConfigFromURLParams
		"region", "endpoint", "profile", "anonymous", "hostname_immutable", "dualstack", "fips",
		"rate_limiter_capacity", "role", "role_session_name", "role_external_id", "role_duration",
		"web_identity_token_file", "request_checksum_calculation", "response_checksum_validation", "awssdk",
		"io_timeout",
	}},
	{name: "gs", named: true, params: []string{"access_id", "private_key_path", "anonymous", "universe_domain", "grpc", "zonal", "io_timeout"},
		bools: []string{"anonymous", "grpc", "zonal"}},
	{name: "azblob", named: true, params: []string{"domain", "protocol", "cdn", "localemu", "storage_account", "io_timeout"}},
}

// SupportedSchemes are the bucket URL schemes Open and OpenBucket accept.
var SupportedSchemes = func() []string {
	names := make([]string, len(bucketSchemes))
	for i, s := range bucketSchemes {
		names[i] = s.name
	}
	return names
}()

// lookupScheme returns the table entry of scheme (lower case).
func lookupScheme(scheme string) (bucketScheme, bool) {
	i := slices.IndexFunc(bucketSchemes, func(s bucketScheme) bool { return s.name == scheme })
	if i < 0 {
		return bucketScheme{}, false
	}
	return bucketSchemes[i], true
}

// IsBucketScheme reports whether scheme, in lower case ("s3"), is one a bucket
// store opens.
func IsBucketScheme(scheme string) bool {
	_, ok := lookupScheme(scheme)
	return ok
}

// NamesBucket reports whether URLs of scheme (lower case) name a bucket in
// their host and a key in their path, as s3://bucket/key does: the form a
// reference to a bucket object takes in a session.
func NamesBucket(scheme string) bool {
	s, ok := lookupScheme(scheme)
	return ok && s.named
}

// SchemeList is the supported bucket schemes as messages write them:
// "file://, mem://, s3://, gs://, azblob://".
func SchemeList() string {
	s := make([]string, len(SupportedSchemes))
	for i, sc := range SupportedSchemes {
		s[i] = sc + "://"
	}
	return strings.Join(s, ", ")
}

func schemeList() string { return SchemeList() }

// urlScheme matches a spec written as a URL: a scheme followed by "://".
var urlScheme = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.\-]*)://`)

// URLScheme returns the scheme of spec, lower-cased ("s3" for "S3://b/p"), when
// spec is written as SCHEME://…, and "" when it is not a URL: a path, or a
// "sqlite:PATH" or "C:\dir" form without "//". Whether the scheme is one this
// package opens is [IsBucketScheme]'s question.
func URLScheme(spec string) string {
	m := urlScheme.FindStringSubmatch(spec)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// secretParams are URL query parameters that carry secrets: libpq's
// passwords, an Azure SAS signature, presigned S3 credentials.
var secretParams = []string{"password", "sslpassword", "sig", "x-amz-signature", "x-amz-credential", "x-amz-security-token"}

// Redact returns spec, a store or session source as the operator gave it,
// fit for messages and logs: without a password in the user info, without
// query parameters that carry secrets (password, sslpassword, an Azure SAS
// sig, presigned S3 credentials), and, except for postgres:// URLs whose user
// name is the role operators need to see, without any user info at all (a
// bucket URL's user name can be an access key). A spec that does not parse
// loses everything between "://" and its last "@", so that no secret leaks
// through a parse failure. A spec with nothing to remove, a path included,
// is returned as written.
func Redact(spec string) string {
	if !strings.Contains(spec, "://") {
		return spec // a path or a sqlite:PATH: no user info, no query
	}
	u, err := url.Parse(spec)
	if err != nil {
		i := strings.Index(spec, "://")
		if j := strings.LastIndex(spec, "@"); j > i {
			return spec[:i+3] + spec[j+1:]
		}
		return spec
	}
	changed := false
	if u.User != nil {
		switch _, hasPassword := u.User.Password(); {
		case u.Scheme != "postgres" && u.Scheme != "postgresql":
			u.User = nil
			changed = true
		case hasPassword:
			u.User = url.User(u.User.Username())
			changed = true
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		drop := false
		for k := range q {
			if slices.Contains(secretParams, strings.ToLower(k)) {
				q.Del(k)
				drop = true
			}
		}
		if drop {
			u.RawQuery = q.Encode()
			changed = true
		}
	}
	if !changed {
		return spec
	}
	return u.String()
}
