package ref

import (
	"path"
	"strings"

	"github.com/mediactl/mediactl/pkg/store"
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
	// path while the store is a bucket).
	Elsewhere
	// Unanchored: a relative path that matches neither the store's trailing folders
	// nor any base directory; it cannot be placed.
	Unanchored
)

var statusNames = [...]string{Inside: "inside", Outside: "outside", Elsewhere: "elsewhere", Unanchored: "unanchored"}

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
// below the store directory.
type Resolver struct {
	dirs   []string // local: cleaned absolute store directories (as given, and symlink-free)
	bases  []string // local: directories relative references are anchored at
	bucket bool
	scheme string
	name   string
	prefix string
}

// NewLocalResolver resolves against a local store at dir (absolute). Other
// spellings of the same directory (its path with symlinks resolved) may follow in
// aliases. bases are directories that relative references are relative to, such
// as the agent's work directory.
func NewLocalResolver(dir string, aliases []string, bases []string) *Resolver {
	r := &Resolver{}
	for _, d := range append([]string{dir}, aliases...) {
		if d = path.Clean(d); strings.HasPrefix(d, "/") && !contains(r.dirs, d) {
			r.dirs = append(r.dirs, d)
		}
	}
	for _, b := range bases {
		if b = path.Clean(b); strings.HasPrefix(b, "/") {
			r.bases = append(r.bases, b)
		}
	}
	return r
}

// NewBucketResolver resolves against a bucket store: scheme ("s3"), bucket name
// and key prefix ("" or ending in "/").
func NewBucketResolver(scheme, bucket, prefix string) *Resolver {
	return &Resolver{bucket: true, scheme: scheme, name: bucket, prefix: prefix}
}

// Resolve says where ref points and, when Inside, the store key it names.
func (r *Resolver) Resolve(ref Reference) (Status, string) {
	if r.bucket {
		return r.resolveBucket(ref)
	}
	switch ref.Kind {
	case AbsPath, FileURI:
		return r.underDirs(path.Clean(ref.Path))
	case RelPath:
		return r.resolveRelative(ref.Path)
	}
	return Elsewhere, ""
}

func (r *Resolver) underDirs(p string) (Status, string) {
	for _, d := range r.dirs {
		if strings.HasPrefix(p, d+"/") {
			return insideKey(p[len(d)+1:])
		}
	}
	return Outside, ""
}

func (r *Resolver) resolveRelative(rel string) (Status, string) {
	for _, b := range r.bases {
		if st, key := r.underDirs(path.Join(b, rel)); st == Inside {
			return st, key
		}
	}
	c := path.Clean(rel)
	if c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return Outside, ""
	}
	segs := strings.Split(c, "/")
	if len(segs) == 1 {
		return insideKey(c)
	}
	// ".forge/files/inbound/ab….png" against /srv/agent/.forge/files/inbound: the
	// leading folders of the reference are the last folders of the store directory.
	for _, d := range r.dirs {
		for m := len(segs) - 1; m >= 1; m-- {
			if strings.HasSuffix(d, "/"+strings.Join(segs[:m], "/")) {
				return insideKey(strings.Join(segs[m:], "/"))
			}
		}
	}
	return Unanchored, ""
}

func (r *Resolver) resolveBucket(ref Reference) (Status, string) {
	switch ref.Kind {
	case BucketURL:
		if !sameScheme(ref.Scheme, r.scheme) || ref.Bucket != r.name {
			return Elsewhere, ""
		}
		return r.underPrefix(ref.Path)
	case BucketPair:
		if ref.Bucket != r.name {
			return Elsewhere, ""
		}
		return r.underPrefix(ref.Path)
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

func insideKey(key string) (Status, string) {
	if key == "" || key == "." || key == store.InternalDir || strings.HasPrefix(key, store.InternalDir+"/") {
		return Outside, ""
	}
	return Inside, key
}
