package ref

import (
	"path"
	"slices"
	"strings"

	"github.com/mediactl/mediactl/pkg/storekey"
)

// Status is where a reference points relative to a store.
type Status uint8

const (
	// Inside: the reference names a key of the store (which may or may not exist).
	Inside Status = iota + 1
	// Outside: the reference points outside the store root — another directory, a
	// traversal such as "inbound/../../etc/x", the store's internal folder, or a
	// key of the store's bucket outside its prefix. Never acted on.
	Outside
	// Elsewhere: the reference names another store (another bucket, or a local
	// path while the store is a bucket), or something that cannot be a key of
	// this store at all (a Windows path "C:\Users\x.png", a name with a NUL).
	Elsewhere
	// Unanchored: a relative path that matches neither the store's trailing folders
	// nor any base directory, or a "~/" path while the home directory is unknown;
	// it cannot be placed.
	Unanchored
	// Runtime: inside the runtime's own folder, not a blob store (the reports and
	// screenshots forge's tools write in .forge/files): never acted on.
	Runtime
)

var statusNames = [...]string{Inside: "inside", Outside: "outside", Elsewhere: "elsewhere", Unanchored: "unanchored", Runtime: "runtime"}

func (s Status) String() string {
	if int(s) < len(statusNames) && statusNames[s] != "" {
		return statusNames[s]
	}
	return "unknown"
}

// MarshalText makes statuses readable in JSON output.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Resolver maps references to keys of one store, lexically. It never reads the
// file system: a path is inside the store only if it is, as written and cleaned,
// below the store directory (or one of its aliases).
type Resolver struct {
	dirs    []string // local: cleaned absolute store directories (as given, aliases, symlink-free)
	bases   []string // local: directories relative references are anchored at
	home    string   // local: what "~/" stands for; "" when unknown
	runtime []string // local: the runtime's own directories
	others  []string // local: the other stores of the runtime
	bucket  bool
	scheme  string
	name    string
	prefix  string
	// names are what sessions call the bucket besides name (AlsoNamed).
	names []string
}

// Local describes a local store and how the runtime that owns it names its
// files, for [NewLocal].
type Local struct {
	// Dir is the store directory (absolute).
	Dir string
	// Aliases are other directories whose files are this store's: the store
	// directory with symlinks resolved, or where the files were before the
	// runtime moved them (coffer's upgrade moves channel-media/ to
	// content/channel-media/ without rewriting the references).
	Aliases []string
	// Bases are the directories relative references are relative to, such as
	// the agent's work directory.
	Bases []string
	// Home is the directory "~/" stands for; empty when unknown, and then a
	// "~/" reference is Unanchored.
	Home string
	// Runtime are the runtime's own directories: a path below one of them that
	// is in no store is Runtime, not Outside.
	Runtime []string
	// Others are the directories of the runtime's other stores: a path in one
	// of them is Outside this store even when it is below a Runtime directory.
	Others []string
}

// NewLocalResolver resolves against a local store at dir (absolute). Other
// spellings of the same directory (its path with symlinks resolved) may follow in
// aliases. bases are directories that relative references are relative to, such
// as the agent's work directory.
func NewLocalResolver(dir string, aliases []string, bases []string) *Resolver {
	return NewLocal(Local{Dir: dir, Aliases: aliases, Bases: bases})
}

// NewLocal resolves against the local store l describes. Relative directories
// in l are ignored: resolution never depends on the working directory.
func NewLocal(l Local) *Resolver {
	r := &Resolver{
		dirs:    absDirs(append([]string{l.Dir}, l.Aliases...)),
		bases:   absDirs(l.Bases),
		runtime: absDirs(l.Runtime),
		others:  absDirs(l.Others),
	}
	if h := absDirs([]string{l.Home}); len(h) == 1 {
		r.home = h[0]
	}
	return r
}

// absDirs returns the absolute directories of dirs, cleaned, without repeats.
func absDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if d = path.Clean(d); strings.HasPrefix(d, "/") && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// NewBucketResolver resolves against a bucket store: scheme ("s3"), bucket name
// and key prefix ("" or ending in "/").
func NewBucketResolver(scheme, bucket, prefix string) *Resolver {
	return &Resolver{bucket: true, scheme: scheme, name: bucket, prefix: prefix}
}

// Resolve says where ref points and, when Inside, the store key it names. A
// key that no store could hold is never Inside (it would make the store's Stat
// fail): it is Elsewhere.
func (r *Resolver) Resolve(ref Reference) (Status, string) {
	if r.bucket {
		return r.resolveBucket(ref)
	}
	switch ref.Kind {
	case AbsPath, FileURI:
		return r.local(cleanAbs(ref.Path))
	case RelPath:
		if ref.Path == "~" || strings.HasPrefix(ref.Path, "~/") {
			if r.home == "" {
				return Unanchored, ""
			}
			return r.local(path.Clean(r.home + "/" + ref.Path[1:]))
		}
		return r.resolveRelative(ref.Path)
	}
	return Elsewhere, ""
}

// cleanAbs is path.Clean for an absolute path, which it returns as it is when
// it is clean already, as nearly every reference a runtime writes is: the test
// is a few vectorised searches where path.Clean looks at every byte.
func cleanAbs(p string) string {
	if isCleanAbs(p) {
		return p
	}
	return path.Clean(p)
}

// isCleanAbs reports whether p is an absolute path that path.Clean leaves as it
// is: no empty segment ("//", a trailing "/"), and no "." or ".." segment. It
// looks at what follows each slash, found by a vectorised search.
func isCleanAbs(p string) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	if len(p) == 1 {
		return true
	}
	for i := 0; i >= 0; {
		seg := p[i+1:] // what follows the slash at i
		switch {
		case seg == "" || seg[0] == '/':
			return false // an empty segment
		case seg[0] != '.':
		case len(seg) == 1 || seg[1] == '/':
			return false // "."
		case seg[1] == '.' && (len(seg) == 2 || seg[2] == '/'):
			return false // ".."
		}
		if j := strings.IndexByte(seg, '/'); j >= 0 {
			i += 1 + j
		} else {
			i = -1
		}
	}
	return true
}

// local places a clean absolute path: inside the store, in another store or
// elsewhere outside it, or in the runtime's own folder.
func (r *Resolver) local(p string) (Status, string) {
	for _, d := range r.dirs {
		if below(p, d) {
			return localKey(p[len(d)+1:])
		}
	}
	for _, d := range r.others {
		if p == d || below(p, d) {
			return Outside, ""
		}
	}
	for _, d := range r.runtime {
		if p == d || below(p, d) {
			return Runtime, ""
		}
	}
	return Outside, ""
}

// below reports whether the clean path p is strictly below the directory d.
func below(p, d string) bool {
	return len(p) > len(d)+1 && p[len(d)] == '/' && strings.HasPrefix(p, d)
}

func (r *Resolver) resolveRelative(rel string) (Status, string) {
	runtime := false
	for _, b := range r.bases {
		st, key := r.local(path.Join(b, rel))
		if st == Inside {
			return st, key
		}
		runtime = runtime || st == Runtime
	}
	c := path.Clean(rel)
	if c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return Outside, ""
	}
	segs := strings.Split(c, "/")
	if len(segs) == 1 {
		return localKey(c)
	}
	// ".forge/files/inbound/ab….png" against /srv/agent/.forge/files/inbound: the
	// leading folders of the reference are the last folders of the store directory.
	for _, d := range r.dirs {
		for m := len(segs) - 1; m >= 1; m-- {
			if strings.HasSuffix(d, "/"+strings.Join(segs[:m], "/")) {
				return localKey(strings.Join(segs[m:], "/"))
			}
		}
	}
	if runtime {
		return Runtime, ""
	}
	return Unanchored, ""
}

// Longest file name and path a local file system takes (Linux NAME_MAX and
// PATH_MAX): a longer key names no file, and asking the file system about it
// would fail instead of answering "missing".
const (
	maxNameBytes = 255
	maxPathBytes = 4095
)

// localKey is insideKey with the local file system's limits.
func localKey(key string) (Status, string) {
	st, k := insideKey(key)
	if st != Inside {
		return st, k
	}
	if len(key) > maxPathBytes {
		return Elsewhere, ""
	}
	for seg := range strings.SplitSeq(key, "/") {
		if len(seg) > maxNameBytes {
			return Elsewhere, ""
		}
	}
	return Inside, key
}

// AlsoNamed returns a resolver of the same bucket store that sessions also
// call by each of names: a {bucket, path} pair, or a bucket URL of the
// store's scheme, naming one of them names the store's bucket. It lets a
// bucket whose URL does not carry the name the sessions use (a file://
// folder, whose name is its path; an S3 bucket reached by another name
// behind another endpoint) resolve their references. A local store's
// resolver is returned as it is.
func (r *Resolver) AlsoNamed(names ...string) *Resolver {
	if r == nil || !r.bucket || len(names) == 0 {
		return r
	}
	c := *r
	c.names = append(slices.Clip(r.names), names...)
	return &c
}

// named reports whether the bucket is called name.
func (r *Resolver) named(name string) bool {
	return name == r.name || slices.Contains(r.names, name)
}

func (r *Resolver) resolveBucket(ref Reference) (Status, string) {
	switch ref.Kind {
	case BucketURL:
		if !sameScheme(ref.Scheme, r.scheme) || !r.named(ref.Bucket) {
			return Elsewhere, ""
		}
		return r.underPrefix(ref.Path)
	case BucketPair:
		if !r.named(ref.Bucket) {
			return Elsewhere, ""
		}
		return r.underPrefix(ref.Path)
	case AbsPath, FileURI:
		// A file:// bucket's objects are files below its folder, its name.
		if r.scheme != "file" {
			return Elsewhere, ""
		}
		p := cleanAbs(ref.Path)
		dir := strings.TrimSuffix(r.name, "/")
		if dir == "" || !strings.HasPrefix(p, dir+"/") {
			return Elsewhere, ""
		}
		return r.underPrefix(p[len(dir)+1:])
	case RelPath:
		c := path.Clean(ref.Path)
		if r.prefix != "" && strings.HasPrefix(c, r.prefix) {
			return insideKey(c[len(r.prefix):])
		}
		return Unanchored, ""
	}
	return Elsewhere, ""
}

func (r *Resolver) underPrefix(key string) (Status, string) {
	c := path.Clean("/" + key)[1:]
	if c != key && strings.Contains(key, "..") {
		return Outside, "" // a traversal in a bucket key is never followed
	}
	if !strings.HasPrefix(c, r.prefix) {
		return Outside, ""
	}
	return insideKey(c[len(r.prefix):])
}

func sameScheme(a, b string) bool {
	return a == b || (a == "gs" && b == "gcs")
}

// insideKey is the status of key, a cleaned path below the store root: the
// store's internal folder is Outside, and what is not a valid key of any store
// (a backslash, a NUL byte) is Elsewhere.
func insideKey(key string) (Status, string) {
	if key == "" || key == "." || storekey.IsInternal(key) {
		return Outside, ""
	}
	if storekey.Valid(key) != nil {
		return Elsewhere, ""
	}
	return Inside, key
}
