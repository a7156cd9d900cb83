package migrate

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mediactl/mediactl/pkg/store"
)

// Template is the text a rewritten reference becomes, with placeholders for
// the copy: {url} (the default: the object's URL), {scheme}, {bucket},
// {prefix}, {key}, {name} (the key's last element) and {sha256}, plus the
// variables it was parsed with (a layout's {files_dir}). The zero Template
// is {url}.
type Template struct {
	text string
	vars map[string]string
}

// TemplateError says why a template cannot be used.
type TemplateError struct {
	Template string
	// Unknown is a placeholder the template names that does not exist; when
	// empty, the template names no placeholder that differs between blobs,
	// so every blob would get the same reference.
	Unknown string
}

func (e *TemplateError) Error() string {
	if e.Unknown != "" {
		return fmt.Sprintf("unknown placeholder %s in the rewrite template %q", e.Unknown, e.Template)
	}
	return fmt.Sprintf("the rewrite template %q would give every blob the same reference", e.Template)
}

var placeholderRE = regexp.MustCompile(`\{[a-z0-9_]+\}`)

// ParseTemplate checks a template: every placeholder known (the copy's, or
// one of vars, named without braces), and one that differs between blobs
// ({url}, {key}, {name} or {sha256}) present. The empty text is {url}.
func ParseTemplate(s string, vars map[string]string) (Template, error) {
	if s == "" {
		return Template{}, nil
	}
	known := map[string]bool{"{url}": true, "{scheme}": true, "{bucket}": true, "{prefix}": true, "{key}": true, "{name}": true, "{sha256}": true}
	for v := range vars {
		known["{"+v+"}"] = true
	}
	for _, p := range placeholderRE.FindAllString(s, -1) {
		if !known[p] {
			return Template{}, &TemplateError{Template: s, Unknown: p}
		}
	}
	if !strings.Contains(s, "{url}") && !strings.Contains(s, "{key}") && !strings.Contains(s, "{name}") && !strings.Contains(s, "{sha256}") {
		return Template{}, &TemplateError{Template: s}
	}
	return Template{text: s, vars: vars}, nil
}

// String is the template's text ("" for the default, {url}).
func (t Template) String() string { return t.text }

// Render is the reference text of the copy of key, whose content has the
// sha256 digest.
func (t Template) Render(dst store.Bucket, key, digest string) string {
	url := objectURL(dst, key)
	if t.text == "" {
		return url
	}
	pairs := []string{"{url}", url, "{scheme}", dst.Scheme(), "{bucket}", dst.Name(), "{prefix}", dst.Prefix(),
		"{key}", key, "{name}", path.Base(key), "{sha256}", digest}
	for k, v := range t.vars {
		pairs = append(pairs, "{"+k+"}", v)
	}
	return strings.NewReplacer(pairs...).Replace(t.text)
}

// UnreachableTemplateError is Run's refusal of a rewrite template whose
// references cannot lead to the copies: a template that is not the copy's
// URL is a path where the destination bucket is mounted (its text before the
// first of {prefix}, {key}, {name} and {sha256} is the mount of the bucket's
// root), and what follows the mount must be the copy's key in the bucket,
// its prefix included.
type UnreachableTemplateError struct {
	Template string
	// Sample is what the reference to a copy at Want would become.
	Sample, Want string
	// Fix is a template that reaches the copies, when one is plain ("" when
	// not).
	Fix string
}

func (e *UnreachableTemplateError) Error() string {
	return fmt.Sprintf("the rewrite template %q does not lead to the copies: a copy at %s would be named %s", e.Template, e.Want, e.Sample)
}

// Reaches checks, before anything is copied, that the template's references
// lead to the copies in dst: a URL of dst names the copy's object, and a
// path names the object's key below the mount (see UnreachableTemplateError).
// A store migrated under a prefix ("…?prefix=generated/") needs {prefix}{key}
// below a mount of the bucket's root. It is checked with a content-addressed
// sample key, as forge's are, so that {sha256} templates are judged too.
func (t Template) Reaches(dst store.Bucket) error {
	if t.text == "" || strings.Contains(t.text, "{url}") {
		return nil
	}
	digest := strings.Repeat("0", 64)
	key := digest + ".png"
	want := dst.Prefix() + key
	sample := t.Render(dst, key, digest)
	if base := dst.Scheme() + "://" + dst.Name() + "/"; strings.HasPrefix(sample, base) {
		if strings.TrimPrefix(sample, base) == want {
			return nil
		}
		return &UnreachableTemplateError{Template: t.text, Sample: sample, Want: objectURL(dst, key), Fix: t.fix(dst)}
	}
	mount := t.mountText(dst)
	if strings.TrimPrefix(sample, mount) == want {
		return nil
	}
	return &UnreachableTemplateError{Template: t.text, Sample: sample, Want: mount + want, Fix: t.fix(dst)}
}

// mountText is the template's text before its first of {prefix}, {key},
// {name} and {sha256}, rendered.
func (t Template) mountText(dst store.Bucket) string {
	const cut = "\x00"
	pairs := []string{"{scheme}", dst.Scheme(), "{bucket}", dst.Name(), "{prefix}", cut, "{key}", cut, "{name}", cut, "{sha256}", cut}
	for k, v := range t.vars {
		pairs = append(pairs, "{"+k+"}", v)
	}
	mount, _, _ := strings.Cut(strings.NewReplacer(pairs...).Replace(t.text), cut)
	return mount
}

// Mount is the local folder where the template says the destination
// bucket's root is mounted on the pods that replay: its text before the
// first key-dependent placeholder, as a clean absolute folder. It is false
// for a template that renders the copies' URLs, or text that is not such a
// folder.
func (t Template) Mount(dst store.Bucket) (string, bool) {
	if t.text == "" || strings.Contains(t.text, "{url}") {
		return "", false
	}
	m := t.mountText(dst)
	dir, ok := strings.CutSuffix(m, string(filepath.Separator))
	if !ok || !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || dir == "" {
		return "", false
	}
	return dir, true
}

// fix is the template with {prefix} put before a lone {key} or {name}, when
// that reaches the copies.
func (t Template) fix(dst store.Bucket) string {
	for _, p := range []string{"{key}", "{name}"} {
		if strings.Count(t.text, p) == 1 && !strings.Contains(t.text, "{prefix}") {
			f := Template{text: strings.Replace(t.text, p, "{prefix}{key}", 1), vars: t.vars}
			if f.Reaches(dst) == nil {
				return f.text
			}
		}
	}
	return ""
}

// Target gives the new reference text of a migrated key: false for a key
// the journal proves no copy of.
func (t Template) Target(proven *Proofs, dst store.Bucket) func(key string) (string, bool) {
	return func(key string) (string, bool) {
		p, ok := proven.Get(key)
		if !ok {
			return "", false
		}
		return t.Render(dst, key, p.Digest()), true
	}
}

// CopyPrefixes are the prefixes under which session text names a proven
// copy rather than its source: the destination's object URLs and, with a
// template, the template's text before its first key-dependent placeholder
// when that text names the destination's bucket, or is an absolute folder
// (a mount of the bucket) that neither holds nor lies in the source store
// srcDir ("" for a bucket source): a looser prefix could match references
// into the source store itself, and text under it must keep its source.
func (t Template) CopyPrefixes(dst store.Bucket, srcDir string) []string {
	base := objectURL(dst, "")
	out := []string{base}
	if t.text == "" {
		return out
	}
	const cut = "\x00"
	pairs := []string{"{url}", base + cut, "{scheme}", dst.Scheme(), "{bucket}", dst.Name(), "{prefix}", dst.Prefix(),
		"{key}", cut, "{name}", cut, "{sha256}", cut}
	for k, v := range t.vars {
		pairs = append(pairs, "{"+k+"}", v)
	}
	p, _, _ := strings.Cut(strings.NewReplacer(pairs...).Replace(t.text), cut)
	switch {
	case p == base:
	case dst.Name() != "" && strings.Contains(p, dst.Name()):
		out = append(out, p)
	case mountPrefix(p, srcDir):
		out = append(out, p)
	}
	return out
}

// mountPrefix reports whether p is an absolute, clean folder (ending in a
// separator) apart from the source store srcDir: neither inside it nor
// holding it.
func mountPrefix(p, srcDir string) bool {
	sep := string(filepath.Separator)
	dir, ok := strings.CutSuffix(p, sep)
	if !ok || !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || dir == "" {
		return false
	}
	if srcDir == "" {
		return true
	}
	inside := func(a, b string) bool { return a == b || b == sep || strings.HasPrefix(a, b+sep) }
	return !inside(dir, srcDir) && !inside(srcDir, dir)
}

// ErrNoJournalPlace is returned by DefaultJournal for a source that is not a
// local folder: the journal must then be given.
var ErrNoJournalPlace = fmt.Errorf("the source is not a local folder, so the journal has no default place")

var unsafeNameRE = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// defaultJournal is where a migration of src to dst keeps its journal when
// none is given: .mediactl/migrate/<destination>.jsonl inside the local
// source, one journal per destination, found again by the next run.
func defaultJournal(src store.Store, dst store.Bucket) (string, error) {
	local, ok := src.(store.Local)
	if !ok {
		return "", fmt.Errorf("migrate: %s: %w", src.Location(), ErrNoJournalPlace)
	}
	s := dst.Scheme() + "-" + dst.Name() + "-" + strings.TrimSuffix(dst.Prefix(), "/")
	name := strings.Trim(unsafeNameRE.ReplaceAllString(s, "_"), "_-")
	return filepath.Join(local.Dir(), store.InternalDir, "migrate", name+".jsonl"), nil
}
