package migrate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/store"
)

func fileBucket(t *testing.T, dir string) store.Bucket {
	t.Helper()
	st, err := store.Open(context.Background(), "file://"+dir+"?prefix=inbound/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st.(store.Bucket)
}

func TestParseTemplate(t *testing.T) {
	vars := map[string]string{"files_dir": "/srv/agent/.forge/files"}
	for _, c := range []struct {
		text    string
		unknown string // "" for valid, "-" for the same reference for all
	}{
		{"", ""}, {"{url}", ""}, {"{files_dir}/remote/{key}", ""}, {"https://cdn/{sha256}", ""},
		{"{bucket}/{prefix}", "-"}, {"{files_dir}/x", "-"}, {"{nope}/{key}", "{nope}"}, {"{home}/{key}", "{home}"},
	} {
		_, err := migrate.ParseTemplate(c.text, vars)
		var te *migrate.TemplateError
		switch {
		case c.unknown == "" && err != nil:
			t.Errorf("%q: %v", c.text, err)
		case c.unknown == "-" && (!errors.As(err, &te) || te.Unknown != ""):
			t.Errorf("%q: %v, want the same-reference error", c.text, err)
		case c.unknown != "" && c.unknown != "-" && (!errors.As(err, &te) || te.Unknown != c.unknown):
			t.Errorf("%q: %v, want unknown %s", c.text, err, c.unknown)
		}
	}
	// Without the layout's variables {files_dir} is unknown.
	if _, err := migrate.ParseTemplate("{files_dir}/remote/{key}", nil); err == nil {
		t.Error("{files_dir} accepted without a layout")
	}
}

func TestTemplateRenderAndCopyPrefixes(t *testing.T) {
	dst := fileBucket(t, t.TempDir())
	key, digest := "ab/cd.png", strings.Repeat("a", 64)
	files := "/srv/agent/.forge/files"
	vars := map[string]string{"files_dir": files}
	mount, err := migrate.ParseTemplate("{files_dir}/remote/{key}", vars)
	if err != nil {
		t.Fatal(err)
	}
	if got := mount.Render(dst, key, digest); got != files+"/remote/ab/cd.png" {
		t.Fatalf("Render = %q", got)
	}
	if got := (migrate.Template{}).Render(dst, key, digest); got != migrate.ObjectURL(dst, key) {
		t.Fatalf("the default renders %q", got)
	}
	// A mount apart from the source names copies; one that holds the source
	// (or lies in it) does not, or its references would stop keeping sources.
	if p := mount.CopyPrefixes(dst, files+"/inbound"); !slices.Contains(p, files+"/remote/") {
		t.Errorf("prefixes %v lack the mount", p)
	}
	whole, _ := migrate.ParseTemplate("{files_dir}/{key}", vars)
	if p := whole.CopyPrefixes(dst, files+"/inbound"); slices.Contains(p, files+"/") {
		t.Errorf("prefixes %v hold the source store's parent", p)
	}
	inside, _ := migrate.ParseTemplate("{files_dir}/inbound/copies/{key}", vars)
	if p := inside.CopyPrefixes(dst, files+"/inbound"); len(p) != 1 {
		t.Errorf("prefixes %v reach into the source store", p)
	}
}

// TestTemplateReaches: a template's references must lead to the copies. A
// path template is the mount of the bucket's root followed by the copy's
// key in the bucket, its prefix included: forge's generated/ migrated under
// "prefix=generated/" with '{files_dir}/remote/{key}' named every copy one
// folder short. The refusal carries the template that works.
func TestTemplateReaches(t *testing.T) {
	vars := map[string]string{"files_dir": "/srv/agent/.forge/files"}
	open := func(query string) store.Bucket {
		st, err := store.Open(context.Background(), "file://"+t.TempDir()+query)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st.(store.Bucket)
	}
	flat, prefixed := open(""), open("?prefix=generated/")
	for _, c := range []struct {
		template string
		dst      store.Bucket
		fix      string // "" = reaches
		refused  bool
	}{
		{"{files_dir}/remote/{key}", flat, "", false},
		{"{files_dir}/remote/{prefix}{key}", flat, "", false},
		{"{files_dir}/remote/{prefix}{key}", prefixed, "", false},
		{"{files_dir}/remote/{key}", prefixed, "{files_dir}/remote/{prefix}{key}", true},
		{"{files_dir}/remote/{name}", prefixed, "{files_dir}/remote/{prefix}{key}", true},
		{"{files_dir}/remote/{sha256}.png", flat, "", false},
		{"{files_dir}/remote/{sha256}.png", prefixed, "", true},
		{"{url}", prefixed, "", false},
		{"see {url}", prefixed, "", false},
		{"{scheme}://{bucket}/{key}", prefixed, "{scheme}://{bucket}/{prefix}{key}", true},
		{"{scheme}://{bucket}/{prefix}{key}", prefixed, "", false},
	} {
		tpl, err := migrate.ParseTemplate(c.template, vars)
		if err != nil {
			t.Fatal(err)
		}
		err = tpl.Reaches(c.dst)
		var ue *migrate.UnreachableTemplateError
		switch {
		case !c.refused && err != nil:
			t.Errorf("%s to %s: %v", c.template, c.dst.Location(), err)
		case c.refused && !errors.As(err, &ue):
			t.Errorf("%s to %s: %v, want a refusal", c.template, c.dst.Location(), err)
		case c.refused && ue.Fix != c.fix:
			t.Errorf("%s to %s: fix %q, want %q", c.template, c.dst.Location(), ue.Fix, c.fix)
		}
	}
}
