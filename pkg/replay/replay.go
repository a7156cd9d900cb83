// Package replay is the read side of migrate: a small library an agent runtime
// imports to rehydrate one media reference from a session — a local path, a
// file:// URI, a bucket URL (s3://, gs://, azblob://) or a {bucket, path} pair —
// with proof that the bytes are the ones the reference was made for.
//
// A [Replayer] reads only what its [Config] allows:
//
//   - local paths and file URIs below one of Config.Roots, opened without
//     following any symbolic link (on Linux one openat2 with
//     RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS from the root's descriptor, as
//     pkg/store's local store does), regular files only; a ".." segment
//     anywhere is refused, whatever it would resolve to;
//   - objects of the allow-listed Config.Buckets, each opened once from its URL
//     (whose query holds the endpoint and other settings; credentials come from
//     the environment, as for pkg/store) and reused, and only below one of the
//     bucket's key prefixes, whose {placeholder} segments match one segment, or
//     exactly the value given in [Vars].
//
// Anything else is refused before a byte is read, with a *[RefusedError] that
// wraps one of [ErrInvalidReference], [ErrOutsideRoots], [ErrBucketNotAllowed],
// [ErrPrefixNotAllowed], [ErrNoDigest] or [ErrNotRegular].
//
// The bytes are verified while they stream: the expected sha256 is the digest in
// a content-addressed name ("<64 hex>.<ext>", see pkg/blobname), else the
// object's "sha256" metadata, which `mediactl migrate` writes on every copy
// ([MetadataKey]). The Read that reaches the end returns io.EOF only when the
// bytes hash to it and number what the source announced; otherwise it returns an
// error wrapping [ErrDigestMismatch], so a caller that checks Read's error never
// takes altered or truncated bytes for the blob. A local file has no metadata:
// one whose name is not content-addressed is refused with ErrNoDigest, unless
// Config.AllowUnverifiedLocal says to serve it as it is (Info.Verified is then
// false): coffer's random attachment names are such files.
//
// With Config.Cache set, bucket objects are kept in a content-addressed
// directory (entries named by their sha256, written to a temporary name and
// renamed into place only once the digest matched). A cached entry is hashed
// in full before a byte of it is served (up to 4 MiB from the very buffer that
// was hashed; a larger one is verified again as it is read); an entry that does
// not match is removed and the object fetched again, never served. The cache is
// content-addressed: a reference whose digest it holds gets those proven bytes,
// whatever the bucket holds now. It is never pruned by replay; any entry may be
// removed at any time (it is fetched again), and so may the ".tmp-" files a
// process that died while filling it leaves behind.
//
// A Replayer is safe for concurrent use.
package replay

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/mediatype"
	"github.com/mediactl/mediactl/pkg/store"
)

// MetadataKey is the object metadata key that holds a copy's hex sha256, as
// `mediactl migrate` writes it (pkg/migrate.MetadataKey).
const MetadataKey = "sha256"

// Config says what a Replayer may read.
type Config struct {
	// Roots are the local directories below which paths and file:// URIs are
	// read (forge's "<workdir>/.forge/files", coffer's "~/.coffer"). Relative
	// roots, and relative references, are taken relative to the working
	// directory at the time of New.
	Roots []string
	// Buckets is the allow-list of buckets and key prefixes.
	Buckets []Bucket
	// Cache, when set, is a directory (created 0700 if missing) where verified
	// copies of bucket objects are kept by digest.
	Cache string
	// AllowUnverifiedLocal serves local files whose names carry no digest
	// (coffer's "<uuid>.jpg") without verification instead of refusing them
	// with ErrNoDigest.
	AllowUnverifiedLocal bool
}

// Bucket is one allowed bucket.
type Bucket struct {
	// URL opens the bucket as pkg/store does: "s3://NAME?endpoint=…&region=…",
	// "gs://NAME", "azblob://NAME?…", "file:///DIR". A path or prefix= in it
	// confines the bucket further. References name its objects as
	// scheme://NAME/KEY (file:///DIR/KEY for a file:// bucket).
	URL string
	// Prefixes are the allowed key folders, full keys of the bucket (the URL's
	// own prefix included): "inbound/", "agent-inputs/{user}/{thread}/uploads/".
	// A {placeholder} is one whole segment. "" allows the whole bucket; no
	// prefix allows nothing.
	Prefixes []string
	// Mount is the absolute local directory where the replaying pods mount
	// the bucket's root (gcsfuse, mountpoint-s3, an NFS export of a file://
	// bucket): a path or file URI below it names the object of that key, and
	// is read through the bucket's API, so that a host without the mount
	// reads what the pods will. A file:// bucket's own directory is always
	// one of its mounts.
	Mount string
	// Names are what the sessions call the bucket besides the name in its
	// URL, in {bucket, path} pairs and bucket URLs of its scheme: a file://
	// bucket's name is its folder, and a bucket behind another endpoint may
	// have another name there.
	Names []string
}

// Vars give placeholders of the allowed prefixes their values for one read: with
// Vars{"user": "u1"}, "agent-inputs/{user}/…" allows "agent-inputs/u1/…" only. A
// placeholder not in Vars matches any one segment.
type Vars map[string]string

// Source says where the bytes of a read come from.
type Source string

const (
	FromLocal  Source = "local"  // a file below a root
	FromBucket Source = "bucket" // an allowed bucket
	FromCache  Source = "cache"  // the cache's verified copy of a bucket object
)

// Info describes what Open opened.
type Info struct {
	// SHA256 is the hex digest the bytes are verified against ("" for an
	// unverified local file).
	SHA256 string `json:"sha256"`
	// Size is the size the source announces, or -1.
	Size int64 `json:"size"`
	// ContentType is the object's content type, or the one its extension
	// names, or "".
	ContentType string `json:"content_type"`
	Source      Source `json:"source"`
	// Location is the file's absolute path, or the object's URL
	// (scheme://bucket/key, without the allow-list URL's settings).
	Location string `json:"location"`
	// Verified is false only for a local file served under
	// Config.AllowUnverifiedLocal.
	Verified bool `json:"verified"`
}

// Replayer opens references as its Config allows.
type Replayer struct {
	wd      string
	roots   []*localRoot
	buckets []*allowedBucket
	cache   *cache
	unverif bool
}

type localRoot struct {
	dir   string // absolute and clean, as configured or its real path
	store *store.LocalStore
}

type allowedBucket struct {
	scheme   string
	name     string // bucket name; for file://, the absolute directory
	location string // the store's URL, without credentials
	// store reads a file:// bucket's objects (OpenObject, Stat) as a local
	// store reads blobs, whatever the key's spelling: never through a link,
	// only regular files, a FIFO never waited on. fileblob, behind blob,
	// opens through links, out of the folder.
	store    *store.BucketStore
	blob     *blob.Bucket // confined to the URL's prefix
	prefixes []pattern
	names    []string // Bucket.Names
	// mounts are the local directories below which a path names an object
	// (Bucket.Mount, and a file:// bucket's own directory), absolute and
	// clean.
	mounts []string
}

// called reports whether references may name the bucket name: its own
// name, or one of Bucket.Names.
func (b *allowedBucket) called(name string) bool {
	return name == b.name || slices.Contains(b.names, name)
}

func (b *allowedBucket) prefixList() string {
	s := make([]string, len(b.prefixes))
	for i, p := range b.prefixes {
		s[i] = fmt.Sprintf("%q", p.raw)
	}
	return strings.Join(s, ", ")
}

// New opens the roots, the cache and the allowed buckets (without contacting
// the buckets' services).
func New(cfg Config) (*Replayer, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("replay: working directory: %w", err)
	}
	r := &Replayer{wd: wd, unverif: cfg.AllowUnverifiedLocal}
	ok := false
	defer func() {
		if !ok {
			r.Close()
		}
	}()
	for _, dir := range cfg.Roots {
		if dir == "" {
			return nil, errors.New("replay: an empty root")
		}
		abs := filepath.Clean(dir)
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(wd, abs)
		}
		s, err := store.OpenLocal(abs)
		if err != nil {
			return nil, fmt.Errorf("replay: root: %w", err)
		}
		r.roots = append(r.roots, &localRoot{dir: abs, store: s})
		// A root reached through a link is also named by its real path.
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			r.roots = append(r.roots, &localRoot{dir: real, store: s})
		}
	}
	for _, bc := range cfg.Buckets {
		s, err := store.OpenBucket(context.Background(), bc.URL)
		if err != nil {
			return nil, fmt.Errorf("replay: allowed bucket: %w", err)
		}
		b := &allowedBucket{scheme: s.Scheme(), name: s.Name(), location: s.Location(), store: s, blob: s.Blob(), names: bc.Names}
		r.buckets = append(r.buckets, b)
		if b.scheme == "mem" {
			return nil, fmt.Errorf("replay: allowed bucket %s: a mem:// bucket cannot be named by a reference", b.location)
		}
		if b.scheme == "file" {
			b.mounts = append(b.mounts, b.name)
		}
		if m := bc.Mount; m != "" {
			if !filepath.IsAbs(m) || filepath.Clean(m) != m || m == string(filepath.Separator) {
				return nil, fmt.Errorf("replay: allowed bucket %s: the mount %q is not an absolute, clean folder below /", b.location, m)
			}
			b.mounts = append(b.mounts, m)
		}
		for _, p := range bc.Prefixes {
			pat, err := parsePattern(p)
			if err != nil {
				return nil, fmt.Errorf("replay: allowed bucket %s: %w", b.location, err)
			}
			b.prefixes = append(b.prefixes, pat)
		}
	}
	if cfg.Cache != "" {
		c, err := openCache(cfg.Cache)
		if err != nil {
			return nil, err
		}
		r.cache = c
	}
	ok = true
	return r, nil
}

// Close releases the roots, buckets and cache.
func (r *Replayer) Close() error {
	var errs []error
	seen := map[*store.LocalStore]bool{}
	for _, root := range r.roots {
		if !seen[root.store] {
			seen[root.store] = true
			errs = append(errs, root.store.Close())
		}
	}
	for _, b := range r.buckets {
		errs = append(errs, b.store.Close())
	}
	if r.cache != nil {
		errs = append(errs, r.cache.close())
	}
	return errors.Join(errs...)
}

// Open opens ref — a local path, a file:// URI or a bucket URL — as the
// Config allows, with vars for the allowed prefixes' placeholders. The reader's
// final Read returns io.EOF only for verified bytes (see the package comment);
// the caller closes it.
func (r *Replayer) Open(ctx context.Context, ref string, vars ...Vars) (io.ReadCloser, Info, error) {
	t, err := r.resolve(ref, mergeVars(vars))
	if err != nil {
		return nil, Info{}, err
	}
	return r.open(ctx, ref, t)
}

// OpenObject opens the object key of the allowed bucket named bucket (the
// {bucket, path} pair some runtimes keep instead of a URL), as Open does. When
// several allowed buckets of different schemes have that name, the first in
// Config order whose prefixes allow key is used.
func (r *Replayer) OpenObject(ctx context.Context, bucket, key string, vars ...Vars) (io.ReadCloser, Info, error) {
	ref := bucket + "/" + key
	if bucket == "" || strings.ContainsAny(bucket, "/\\\x00") {
		return nil, Info{}, refuse(ref, ErrInvalidReference, "bucket name %q", bucket)
	}
	var first error
	for _, b := range r.buckets {
		if !b.called(bucket) || !store.NamesBucket(b.scheme) && len(b.names) == 0 {
			continue
		}
		t, err := r.resolveObject(ref, b.scheme, bucket, key, mergeVars(vars))
		if err == nil {
			return r.open(ctx, ref, t)
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = refuse(ref, ErrBucketNotAllowed, "no allowed bucket is named %q", bucket)
	}
	return nil, Info{}, first
}

// Stat resolves ref as Open does and returns what Open would serve, without
// reading a byte of it: the digest the bytes are to hash to (from the name,
// else the object's sha256 metadata), the size the source announces, where
// it lies. An object whose content-addressed name and sha256 metadata
// disagree is an error wrapping ErrDigestMismatch. Info.Verified says whether
// Open would verify the bytes; Stat itself proves only that the object is
// there, as large as announced, and carries that digest.
func (r *Replayer) Stat(ctx context.Context, ref string, vars ...Vars) (Info, error) {
	t, err := r.resolve(ref, mergeVars(vars))
	if err != nil {
		return Info{}, err
	}
	if t.root != nil {
		name, verifiable := blobname.Parse(t.rel)
		if !verifiable && !r.unverif {
			return Info{}, refuse(ref, ErrNoDigest, "local file %s has no content-addressed name", path.Base(t.rel))
		}
		e, err := t.root.store.Stat(ctx, t.rel)
		if err != nil {
			return Info{}, fmt.Errorf("replay %q: %w", ref, err)
		}
		if !e.Regular() {
			return Info{}, refuse(ref, ErrNotRegular, "%s is not a regular file", t.rel)
		}
		info := Info{Size: e.Size, ContentType: mediatype.ForExt(path.Ext(t.rel)), Source: FromLocal,
			Location: filepath.Join(t.root.dir, filepath.FromSlash(t.rel))}
		if verifiable {
			info.SHA256, info.Verified = name.Digest.String(), true
		}
		return info, nil
	}
	b := t.bucket
	e, err := b.store.Stat(ctx, t.bucketK)
	if err != nil {
		return Info{}, objectErr(ref, err)
	}
	info := Info{Source: FromBucket, Location: objectURL(b, t.key), Verified: true, Size: e.Size, ContentType: e.ContentType}
	md, hasMD := blobname.ParseDigest(e.Metadata[MetadataKey])
	n, named := blobname.Parse(t.key)
	switch {
	case named && hasMD && blobname.Digest(md) != n.Digest:
		return Info{}, fmt.Errorf("replay %q: %w: the name says sha256 %s, the object's metadata %x", ref, ErrDigestMismatch, n.Digest, md)
	case named:
		info.SHA256 = n.Digest.String()
	case hasMD:
		info.SHA256 = blobname.Digest(md).String()
	default:
		return Info{}, refuse(ref, ErrNoDigest, "object %s has no content-addressed name and no %s metadata", info.Location, MetadataKey)
	}
	if info.ContentType == "" || info.ContentType == "application/octet-stream" {
		info.ContentType = mediatype.ForExt(path.Ext(t.key))
	}
	return info, nil
}

func mergeVars(vs []Vars) Vars {
	switch len(vs) {
	case 0:
		return nil
	case 1:
		return vs[0]
	}
	m := Vars{}
	for _, v := range vs {
		for k, x := range v {
			m[k] = x
		}
	}
	return m
}

func (r *Replayer) open(ctx context.Context, ref string, t target) (io.ReadCloser, Info, error) {
	if t.root != nil {
		return r.openLocal(ctx, ref, t)
	}
	return r.openObject(ctx, ref, t)
}

func (r *Replayer) openLocal(ctx context.Context, ref string, t target) (io.ReadCloser, Info, error) {
	name, verifiable := blobname.Parse(t.rel)
	if !verifiable && !r.unverif {
		return nil, Info{}, refuse(ref, ErrNoDigest, "local file %s has no content-addressed name", path.Base(t.rel))
	}
	rc, e, err := t.root.store.OpenEntry(ctx, t.rel)
	if err != nil {
		if errors.Is(err, store.ErrNotRegular) {
			return nil, Info{}, refuse(ref, ErrNotRegular, "%v", err)
		}
		return nil, Info{}, fmt.Errorf("replay %q: %w", ref, err)
	}
	info := Info{
		Size:        e.Size,
		ContentType: mediatype.ForExt(path.Ext(t.rel)),
		Source:      FromLocal,
		Location:    filepath.Join(t.root.dir, filepath.FromSlash(t.rel)),
	}
	if !verifiable {
		return rc, info, nil
	}
	info.SHA256, info.Verified = name.Digest.String(), true
	return newVerifier(rc, info.Location, name.Digest, e.Size), info, nil
}

func (r *Replayer) openObject(ctx context.Context, ref string, t target) (io.ReadCloser, Info, error) {
	b := t.bucket
	info := Info{Source: FromBucket, Location: objectURL(b, t.key), Verified: true, Size: -1}
	var want [sha256.Size]byte
	if n, ok := blobname.Parse(t.key); ok {
		want = n.Digest
	} else {
		md, ct, err := objectAttributes(ctx, b, t.bucketK)
		if err != nil {
			return nil, Info{}, objectErr(ref, err)
		}
		d, ok := blobname.ParseDigest(md[MetadataKey])
		if !ok {
			return nil, Info{}, refuse(ref, ErrNoDigest, "object %s has no content-addressed name and no %s metadata", info.Location, MetadataKey)
		}
		want = d
		info.ContentType = ct
	}
	info.SHA256 = blobname.Digest(want).String()
	if r.cache != nil {
		if rc, size, loc, ok := r.cache.open(want); ok {
			info.Source, info.Size, info.Location = FromCache, size, loc
			if info.ContentType == "" {
				info.ContentType = mediatype.ForExt(path.Ext(t.key))
			}
			return rc, info, nil
		}
	}
	if b.scheme == "file" {
		rc, e, err := b.store.OpenObject(ctx, t.bucketK)
		if err != nil {
			return nil, Info{}, objectErr(ref, err)
		}
		info.Size = e.Size
		if info.ContentType == "" {
			info.ContentType = mediatype.ForExt(path.Ext(t.key))
		}
		v := newVerifier(rc, info.Location, want, info.Size)
		if r.cache != nil {
			v.fill = r.cache.startFill(want)
		}
		return v, info, nil
	}
	rd, err := b.blob.NewReader(ctx, t.bucketK, nil)
	if err != nil {
		return nil, Info{}, objectErr(ref, err)
	}
	info.Size = rd.Size()
	if ct := rd.ContentType(); ct != "" && ct != "application/octet-stream" {
		info.ContentType = ct
	} else if info.ContentType == "" {
		// A generic type (fileblob without attributes) says less than the
		// name's extension.
		info.ContentType = mediatype.ForExt(path.Ext(t.key))
	}
	v := newVerifier(objectReader{rd, ref}, info.Location, want, info.Size)
	if r.cache != nil {
		v.fill = r.cache.startFill(want)
	}
	return v, info, nil
}

// objectURL is the URL a reference names an object of b by.
func objectURL(b *allowedBucket, key string) string {
	if b.scheme == "file" {
		return "file://" + filepath.ToSlash(b.name) + "/" + key
	}
	return b.scheme + "://" + b.name + "/" + key
}

// objectAttributes returns the metadata and content type of the object key
// of b: a file:// bucket's through the store, which reads the attributes
// file confined to the bucket's folder as it reads objects.
func objectAttributes(ctx context.Context, b *allowedBucket, key string) (map[string]string, string, error) {
	if b.scheme == "file" {
		e, err := b.store.Stat(ctx, key)
		return e.Metadata, e.ContentType, err
	}
	a, err := b.blob.Attributes(ctx, key)
	if err != nil {
		return nil, "", err
	}
	return a.Metadata, a.ContentType, nil
}

func objectErr(ref string, err error) error {
	if errors.Is(err, store.ErrNotRegular) {
		return refuse(ref, ErrNotRegular, "%v", err)
	}
	if gcerrors.Code(err) == gcerrors.NotFound && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replay %q: %w: %w", ref, fs.ErrNotExist, err)
	}
	return fmt.Errorf("replay %q: %w", ref, err)
}

// objectReader gives read errors of a bucket object the reference.
type objectReader struct {
	r   *blob.Reader
	ref string
}

func (r objectReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = objectErr(r.ref, err)
	}
	return n, err
}

func (r objectReader) Close() error { return r.r.Close() }
