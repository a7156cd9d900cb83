package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

func TestOpenUsageErrors(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "y")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		"":                                 "empty store",
		"ftp://host/x":                     "supported schemes are file://, mem://, s3://, gs://, azblob://",
		"http://example.com/bucket":        "supported schemes are",
		"s3://":                            "names no bucket",
		"gs:///prefix":                     "names no bucket",
		"s3://bucket?foo=bar":              `unknown query parameter "foo"`,
		"s3://bucket?key=a":                "key= parameter",
		"s3://bucket?region=a&region=b":    "given 2 times",
		"s3://AKIA:secret@bucket":          "contains credentials",
		"s3://bucket/p?prefix=q":           "prefix twice",
		"s3://bucket/a/../b":               `".." segment`,
		"mem://?prefix=/abs":               `starts with "/"`,
		"s3://bucket#frag":                 "fragment",
		"s3://bucket?%zz":                  "malformed query",
		"file://otherhost/dir":             "file:///ABSOLUTE/DIR",
		"azblob://c?protocol=http&bogus=1": `unknown query parameter "bogus"`,
		filepath.Join(dir, "missing"):      "does not exist: create it first",
		"s3:bucket":                        "write it as s3://",
		file:                               "is not a directory",
		"s3://bucket?ssetype=bogus":        `"bogus" is not a valid value for ssetype`,
		"s3://bucket?use_path_style=maybe": "use_path_style=maybe: write true or false",
		"s3://bucket?io_timeout=5":         "io_timeout=5: write a duration such as 90s",
		"gs://bucket?io_timeout=-1s":       "io_timeout=-1s: a timeout is not negative",
		"mem://?io_timeout=1m":             `unknown query parameter "io_timeout" for mem://`,
		"gs://bucket?grpc=yes":             "grpc=yes: write true or false",
		"gs://bucket?anonymous=yes":        "anonymous=yes: write true or false",
	} {
		s, err := store.Open(ctx, spec)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", spec)
			continue
		}
		if !errors.Is(err, store.ErrUsage) {
			t.Errorf("Open(%q) = %v, want a usage error", spec, err)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %q, want it to say %q", spec, err, want)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) error leaks the credentials: %q", spec, err)
		}
	}
}

func TestOpenBucketURLs(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "y")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	dir := t.TempDir()
	for _, tc := range []struct {
		spec, scheme, name, prefix, location string
	}{
		{"mem://", "mem", "", "", "mem://"},
		{"mem://?prefix=a/b", "mem", "", "a/b/", "mem://?prefix=a%2Fb%2F"},
		{"s3://bucket", "s3", "bucket", "", "s3://bucket"},
		{"s3://bucket/media?region=us-east-1", "s3", "bucket", "media/", "s3://bucket/media/?region=us-east-1"},
		{"s3://bucket?prefix=media/&endpoint=http://127.0.0.1:9000&use_path_style=true", "s3", "bucket", "media/",
			"s3://bucket/media/?endpoint=http%3A%2F%2F127.0.0.1%3A9000&use_path_style=true"},
		{"s3://bucket?ssetype=aes256&accelerate=false&disable_https=true&s3ForcePathStyle=true", "s3", "bucket", "",
			"s3://bucket?accelerate=false&disable_https=true&s3ForcePathStyle=true&ssetype=aes256"},
		// io_timeout is how the bucket is reached, not which bucket it is:
		// locations (report and metric labels) are the same with or without.
		{"s3://bucket/media?region=us-east-1&io_timeout=15m", "s3", "bucket", "media/", "s3://bucket/media/?region=us-east-1"},
		{"s3://bucket?io_timeout=0", "s3", "bucket", "", "s3://bucket"},
		{"file://" + filepath.ToSlash(dir), "file", dir, "", "file://" + filepath.ToSlash(dir)},
		{"file://" + filepath.ToSlash(dir) + "?prefix=x", "file", dir, "x/", "file://" + filepath.ToSlash(dir) + "?prefix=x%2F"},
	} {
		s, err := store.Open(ctx, tc.spec)
		if err != nil {
			t.Errorf("Open(%q): %v", tc.spec, err)
			continue
		}
		b, ok := s.(store.Bucket)
		if !ok {
			t.Errorf("Open(%q) is a %T, not a Bucket", tc.spec, s)
			s.Close()
			continue
		}
		if b.Scheme() != tc.scheme || b.Name() != tc.name || b.Prefix() != tc.prefix || b.Location() != tc.location {
			t.Errorf("Open(%q): scheme, name, prefix, location = %q, %q, %q, %q; want %q, %q, %q, %q",
				tc.spec, b.Scheme(), b.Name(), b.Prefix(), b.Location(), tc.scheme, tc.name, tc.prefix, tc.location)
		}
		s.Close()
	}

	// A plain path is a local store; so is a relative one.
	s, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := s.(store.Local); !ok || l.Dir() != dir {
		t.Errorf("Open(dir) = %T %v", s, s.Location())
	}
	s.Close()
	t.Chdir(dir)
	if err := os.Mkdir("rel", 0o700); err != nil {
		t.Fatal(err)
	}
	s, err = store.Open(ctx, "rel")
	if err != nil {
		t.Fatal(err)
	}
	if s.Location() != filepath.Join(dir, "rel") {
		t.Errorf("Location() = %q", s.Location())
	}
	s.Close()
}
