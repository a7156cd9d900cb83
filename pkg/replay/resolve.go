package replay

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storekey"
)

// target is where a reference points once it is allowed: a file below a root
// (root and rel), or an object of an allowed bucket (bucket, key relative to
// the bucket's own URL prefix, and the full key).
type target struct {
	root    *localRoot
	rel     string
	bucket  *allowedBucket
	key     string // full bucket key, as the reference names it
	bucketK string // key relative to the opened bucket (its URL's prefix removed)
}

// resolve decides what ref names and whether it is allowed, without touching
// anything. Every refusal is a *RefusedError.
func (r *Replayer) resolve(ref string, vars Vars) (target, error) {
	switch {
	case ref == "":
		return target{}, refuse(ref, ErrInvalidReference, "empty reference")
	case strings.IndexByte(ref, 0) >= 0:
		return target{}, refuse(ref, ErrInvalidReference, "contains a NUL byte")
	case len(ref) >= 5 && strings.EqualFold(ref[:5], "file:"):
		p, err := fileURIPath(ref)
		if err != nil {
			return target{}, err
		}
		return r.resolvePath(ref, p, vars)
	}
	if scheme := store.URLScheme(ref); scheme != "" {
		if !store.NamesBucket(scheme) {
			return target{}, refuse(ref, ErrInvalidReference, "%s:// is not a bucket URL scheme replay reads (s3://, gs://, azblob://, file://, or a local path)", scheme)
		}
		rest := ref[len(scheme)+len("://"):]
		name, key, ok := strings.Cut(rest, "/")
		if !ok || name == "" {
			return target{}, refuse(ref, ErrInvalidReference, "names no bucket and key: write it as %s://BUCKET/KEY", scheme)
		}
		if strings.ContainsAny(key, "?#") {
			return target{}, refuse(ref, ErrInvalidReference, "has a query or fragment: an object reference is %s://BUCKET/KEY, the bucket's settings come from the allow-list", scheme)
		}
		return r.resolveObject(ref, scheme, name, key, vars)
	}
	return r.resolvePath(ref, ref, vars)
}

// fileURIPath returns the decoded absolute path of a file URI (file:///p,
// file://localhost/p, file:/p). Every escape is decoded, "%2F" and "%2E" too,
// so that the path checks see the path the URI names.
func fileURIPath(ref string) (string, error) {
	u, err := url.Parse(ref)
	switch {
	case err != nil:
		return "", refuse(ref, ErrInvalidReference, "file URI does not parse: %v", err)
	case u.Opaque != "":
		return "", refuse(ref, ErrInvalidReference, "file URI without an absolute path")
	case u.Host != "" && !strings.EqualFold(u.Host, "localhost"):
		return "", refuse(ref, ErrInvalidReference, "file URI of another host (%q)", u.Host)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", refuse(ref, ErrInvalidReference, "file URI with user info, a query or a fragment")
	case !strings.HasPrefix(u.Path, "/"):
		return "", refuse(ref, ErrInvalidReference, "file URI without an absolute path")
	}
	return u.Path, nil
}

// resolvePath admits a local path (absolute, or relative to the working
// directory New saw) below a root, or below a mount of an allowed bucket (a
// file:// bucket's directory is one).
func (r *Replayer) resolvePath(ref, p string, vars Vars) (target, error) {
	if strings.ContainsAny(p, "\\\x00") {
		return target{}, refuse(ref, ErrInvalidReference, "path contains a backslash or a NUL byte")
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return target{}, refuse(ref, ErrInvalidReference, `path has a ".." segment`)
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.wd, p)
	}
	p = filepath.Clean(p)
	var prefixRefusal error
	for _, b := range r.buckets {
		for _, m := range b.mounts {
			if !below(p, m) {
				continue
			}
			key := filepath.ToSlash(p[len(m)+1:])
			t, err := r.allowKey(ref, b, key, vars)
			if err == nil {
				return t, nil
			}
			if prefixRefusal == nil {
				prefixRefusal = err
			}
		}
	}
	var best *localRoot
	for _, root := range r.roots {
		if below(p, root.dir) && (best == nil || len(root.dir) > len(best.dir)) {
			best = root
		}
	}
	if best == nil {
		if prefixRefusal != nil {
			return target{}, prefixRefusal
		}
		return target{}, refuse(ref, ErrOutsideRoots, "%s is below none of the roots %s", p, r.rootList())
	}
	rel := filepath.ToSlash(p[len(best.dir)+1:])
	if err := storekey.Valid(rel); err != nil {
		return target{}, refuse(ref, ErrInvalidReference, "%v", err)
	}
	if internal(rel) {
		return target{}, refuse(ref, ErrInvalidReference, "%s is mediactl's own folder (trash, journals), not media", storekey.InternalDir)
	}
	return target{root: best, rel: rel}, nil
}

// internal reports whether a segment of p is mediactl's internal folder: a
// store's trash and journals may lie anywhere below a root or in a bucket,
// wherever a store was opened, and are never media a session may name.
func internal(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == storekey.InternalDir {
			return true
		}
	}
	return false
}

// below reports whether p lies strictly below dir (both clean and absolute).
func below(p, dir string) bool {
	if dir == "/" {
		return len(p) > 1 && p[0] == '/'
	}
	return len(p) > len(dir)+1 && p[len(dir)] == filepath.Separator && p[:len(dir)] == dir
}

func (r *Replayer) rootList() string {
	if len(r.roots) == 0 {
		return "(none configured)"
	}
	dirs := make([]string, len(r.roots))
	for i, root := range r.roots {
		dirs[i] = root.dir
	}
	return strings.Join(dirs, ", ")
}

// resolveObject admits scheme://name/key when an allowed bucket has that scheme
// and name and the key is below one of its prefixes.
func (r *Replayer) resolveObject(ref, scheme, name, key string, vars Vars) (target, error) {
	if err := storekey.CheckPath(key); err != nil {
		return target{}, refuse(ref, ErrInvalidReference, "key %q %v", key, err)
	}
	var first error
	found := false
	for _, b := range r.buckets {
		if b.scheme != scheme || !b.called(name) {
			continue
		}
		found = true
		t, err := r.allowKey(ref, b, key, vars)
		if err == nil {
			return t, nil
		}
		if first == nil {
			first = err
		}
	}
	if !found {
		return target{}, refuse(ref, ErrBucketNotAllowed, "%s://%s is not on the allow-list", scheme, name)
	}
	return target{}, first
}

// allowKey admits key, a full key of bucket b, when it is below b's own URL
// prefix and matches one of b's prefix patterns.
func (r *Replayer) allowKey(ref string, b *allowedBucket, key string, vars Vars) (target, error) {
	if err := storekey.CheckPath(key); err != nil {
		return target{}, refuse(ref, ErrInvalidReference, "key %q %v", key, err)
	}
	if !strings.HasPrefix(key, b.store.Prefix()) {
		return target{}, refuse(ref, ErrPrefixNotAllowed, "key %q is outside %s", key, b.location)
	}
	rel := key[len(b.store.Prefix()):]
	if err := storekey.Valid(rel); err != nil {
		return target{}, refuse(ref, ErrInvalidReference, "%v", err)
	}
	if internal(key) {
		return target{}, refuse(ref, ErrInvalidReference, "%s is mediactl's own folder (trash, journals), not media", storekey.InternalDir)
	}
	for _, p := range b.prefixes {
		if p.match(key, vars) {
			return target{bucket: b, key: key, bucketK: rel}, nil
		}
	}
	return target{}, refuse(ref, ErrPrefixNotAllowed, "key %q is below none of the prefixes %s of %s", key, b.prefixList(), b.location)
}

// pattern is an allowed key prefix: folder segments, each literal or a
// {placeholder} that stands for one segment.
type pattern struct {
	raw  string
	segs []patternSeg
}

type patternSeg struct {
	literal string
	name    string // placeholder name when not ""
}

// parsePattern checks an allowed prefix: "" (the whole bucket) or a folder path
// such as "inbound/" or "agent-inputs/{user}/{thread}/uploads/" (the final
// "/" is implied), whose placeholders are whole segments.
func parsePattern(s string) (pattern, error) {
	p := pattern{raw: s}
	folder := strings.TrimSuffix(s, "/")
	if folder == "" {
		p.raw = ""
		return p, nil
	}
	if err := storekey.CheckPath(folder); err != nil {
		return pattern{}, fmt.Errorf("prefix %q %v", s, err)
	}
	p.raw = folder + "/"
	for seg := range strings.SplitSeq(folder, "/") {
		if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
			name := seg[1 : len(seg)-1]
			if !isPlaceholderName(name) {
				return pattern{}, fmt.Errorf("prefix %q: placeholder %s: a name is letters, digits and _", s, seg)
			}
			p.segs = append(p.segs, patternSeg{name: name})
			continue
		}
		if strings.ContainsAny(seg, "{}") {
			return pattern{}, fmt.Errorf("prefix %q: segment %q: a placeholder is a whole segment, such as {user}", s, seg)
		}
		p.segs = append(p.segs, patternSeg{literal: seg})
	}
	return p, nil
}

func isPlaceholderName(s string) bool {
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return s != ""
}

// match reports whether key lies below the prefix: every literal segment equal,
// every placeholder one segment — equal to vars[name] when vars has the name
// (an empty value matches nothing).
func (p pattern) match(key string, vars Vars) bool {
	rest := key
	for _, s := range p.segs {
		seg, after, ok := strings.Cut(rest, "/")
		if !ok || seg == "" {
			return false
		}
		if s.name != "" {
			if v, given := vars[s.name]; given && seg != v {
				return false
			}
		} else if seg != s.literal {
			return false
		}
		rest = after
	}
	return rest != ""
}
