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
// {prefix}, {key}, {name} (the key's last element) and {sha256}.
type Template string

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

var placeholderRE = regexp.MustCompile(`\{[a-z0-9]+\}`)

// ParseTemplate checks a template: every placeholder known, and one that
// differs between blobs ({url}, {key}, {name} or {sha256}) present. The
// empty template is {url}.
func ParseTemplate(s string) (Template, error) {
	if s == "" {
		return "", nil
	}
	known := map[string]bool{"{url}": true, "{scheme}": true, "{bucket}": true, "{prefix}": true, "{key}": true, "{name}": true, "{sha256}": true}
	for _, p := range placeholderRE.FindAllString(s, -1) {
		if !known[p] {
			return "", &TemplateError{Template: s, Unknown: p}
		}
	}
	if !strings.Contains(s, "{url}") && !strings.Contains(s, "{key}") && !strings.Contains(s, "{name}") && !strings.Contains(s, "{sha256}") {
		return "", &TemplateError{Template: s}
	}
	return Template(s), nil
}

// Target gives the new reference text of a migrated key: false for a key
// the journal proves no copy of.
func (t Template) Target(proven map[string]Proof, dst store.Bucket) func(key string) (string, bool) {
	return func(key string) (string, bool) {
		p, ok := proven[key]
		if !ok {
			return "", false
		}
		url := ObjectURL(dst, key)
		if t == "" {
			return url, true
		}
		r := strings.NewReplacer("{url}", url, "{scheme}", dst.Scheme(), "{bucket}", dst.Name(), "{prefix}", dst.Prefix(),
			"{key}", key, "{name}", path.Base(key), "{sha256}", p.Digest())
		return r.Replace(string(t)), true
	}
}

// CopyPrefixes are the URL prefixes under which session text names a proven
// copy rather than its source: the destination's object URLs and, with a
// template, the template's text before its first key-dependent placeholder
// when that text names the destination's bucket (a looser prefix could match
// links into the source store itself).
func (t Template) CopyPrefixes(dst store.Bucket) []string {
	base := ObjectURL(dst, "")
	out := []string{base}
	if t == "" {
		return out
	}
	const cut = "\x00"
	r := strings.NewReplacer("{url}", base+cut, "{scheme}", dst.Scheme(), "{bucket}", dst.Name(), "{prefix}", dst.Prefix(),
		"{key}", cut, "{name}", cut, "{sha256}", cut)
	p, _, _ := strings.Cut(r.Replace(string(t)), cut)
	if p != base && dst.Name() != "" && strings.Contains(p, dst.Name()) {
		out = append(out, p)
	}
	return out
}

// ErrNoJournalPlace is returned by DefaultJournal for a source that is not a
// local folder: the journal must then be given.
var ErrNoJournalPlace = fmt.Errorf("the source is not a local folder, so the journal has no default place")

var unsafeNameRE = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// DefaultJournal is where a migration of src to dst keeps its journal when
// none is given: .mediactl/migrate/<destination>.jsonl inside the local
// source, one journal per destination, found again by the next run.
func DefaultJournal(src store.Store, dst store.Bucket) (string, error) {
	local, ok := src.(store.Local)
	if !ok {
		return "", fmt.Errorf("migrate: %s: %w", src.Location(), ErrNoJournalPlace)
	}
	s := dst.Scheme() + "-" + dst.Name() + "-" + strings.TrimSuffix(dst.Prefix(), "/")
	name := strings.Trim(unsafeNameRE.ReplaceAllString(s, "_"), "_-")
	return filepath.Join(local.Dir(), store.InternalDir, "migrate", name+".jsonl"), nil
}
