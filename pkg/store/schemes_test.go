package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db?sslmode=disable":         "postgres://u@h:5432/db?sslmode=disable",
		"postgresql://u@h/db":                                   "postgresql://u@h/db",
		"postgres://h/db?password=secret&sslmode=verify":        "postgres://h/db?sslmode=verify",
		"postgres://h/db?sslpassword=secret":                    "postgres://h/db",
		"postgres://u:sec%ret@h/db":                             "postgres://h/db", // does not parse: all user info goes
		"s3://bucket?region=eu-west-1":                          "s3://bucket?region=eu-west-1",
		"s3://AKIAEXAMPLE:secret@bucket/p/":                     "s3://bucket/p/", // a bucket's user name is an access key
		"s3://AKIAEXAMPLE@bucket":                               "s3://bucket",
		"azblob://c?sv=2024&sig=c2VjcmV0&localemu=true":         "azblob://c?localemu=true&sv=2024",
		"s3://b/k?X-Amz-Signature=abc&X-Amz-Credential=AKIA%2F": "s3://b/k",
		"/home/u/.forge/files/inbound":                          "/home/u/.forge/files/inbound",
		"sqlite:/home/u/.coffer/coffer.db":                      "sqlite:/home/u/.coffer/coffer.db",
		"http://u:p@example.com/x":                              "http://example.com/x",
		"mem://":                                                "mem://",
	} {
		if got := store.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"postgres://u:pw@h/db", "s3://k:pw@b/p?sig=pw", "x://a@b@c:pw", "postgres://u:p%w@h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		// Whatever was between "://" and a last "@" with a ":" in it, the
		// password part is gone.
		got := store.Redact(spec)
		i := strings.Index(spec, "://")
		j := strings.LastIndex(spec, "@")
		if i < 0 || j <= i {
			return
		}
		userinfo := spec[i+3 : j]
		if strings.ContainsAny(userinfo, "/?#") {
			return // the "@" is not in the authority
		}
		if _, pw, ok := strings.Cut(userinfo, ":"); ok && len(pw) >= 4 && strings.Contains(got, pw+"@") {
			t.Fatalf("Redact(%q) = %q keeps the password", spec, got)
		}
	})
}

// One scheme table decides what a store URL is, for Open and for session
// sources alike.
func TestSchemes(t *testing.T) {
	for spec, want := range map[string]string{
		"s3://b/p":         "s3",
		"S3://b/p":         "s3",
		"Azblob://c":       "azblob",
		"postgres://h/db":  "postgres",
		"sqlite:/x.db":     "",
		"/abs/path":        "",
		`C:\dir`:           "",
		"relative/s3://x":  "",
		"file:///tmp/x":    "file",
		"mem://":           "mem",
		"1s3://not-scheme": "",
	} {
		if got := store.URLScheme(spec); got != want {
			t.Errorf("URLScheme(%q) = %q, want %q", spec, got, want)
		}
	}
	for _, s := range store.SupportedSchemes {
		if !store.IsBucketScheme(s) || !strings.Contains(store.SchemeList(), s+"://") {
			t.Errorf("scheme %s: IsBucketScheme %v, listed in %q", s, store.IsBucketScheme(s), store.SchemeList())
		}
	}
	for _, s := range []string{"postgres", "http", "S3", "sqlite", ""} {
		if store.IsBucketScheme(s) {
			t.Errorf("IsBucketScheme(%q) = true", s)
		}
	}
	if got := store.SchemeList(); got != "file://, mem://, s3://, gs://, azblob://" {
		t.Errorf("SchemeList() = %q", got)
	}
	// Open accepts a scheme in any letter case, as sessions.Open does.
	s, err := store.Open(ctx, "MEM://")
	if err != nil {
		t.Fatalf("Open(MEM://): %v", err)
	}
	s.Close()
	if _, err := store.Open(ctx, "ftp://u:secret@host/x"); !errors.Is(err, store.ErrUsage) || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open(ftp://…) = %v, want a usage error without the password", err)
	}
}
