// Package target opens what a run works on: the blob stores and session
// sources named by a [Spec], either given one by one, or chosen by a layout
// (forge, coffer) under a root, or found by detecting ./.forge when nothing is
// given at all.
//
// [Open] refuses, before any session is read, a local store and a local
// session source that are the same folder or lie inside one another (paths
// compared with symlinks resolved; a sqlite:PATH source by its database file,
// a file:// URL by its folder):
// a store that holds the sessions would list session files as blobs, and a
// store inside a sessions folder would be read as sessions.
//
// The opened [Targets] know, for each store, the resolver its references are
// resolved with (the layout's, for a layout's local store) and the companion
// rule of stores whose files have sidecars.
//
// Errors carry data ([OverlapError], [NothingToDetectError],
// [RootWithoutLayoutError], [TooManySourcesError], [StoreError],
// [SourceError], [BucketNameError]); layout errors are the layout package's, unwrapped. None
// names a command-line flag: a CLI words its own hints.
package target

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mediactl/mediactl/pkg/layout"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/usage"
)

// Spec says what a run works on.
type Spec struct {
	// Stores are blob stores as store.Open takes them: directories or bucket
	// URLs. Given, they replace the layout's stores.
	Stores []string
	// Sessions are session sources as sessions.Open takes them. Given, they
	// replace the layout's sources.
	Sessions []string
	// Query and Exclude are passed to every session source
	// (sessions.Options).
	Query   string
	Exclude []string
	// Layout is a layout name (layout.Forge, layout.Coffer) whose stores and
	// sources under Root are used where Stores or Sessions are empty.
	Layout string
	// BucketNames say what the sessions call a bucket whose URL does not
	// carry that name, each "NAME=URL": a file:// folder (whose name is its
	// path), or a bucket reached by another name behind another endpoint.
	// A {bucket, path} pair or bucket URL naming NAME then names that
	// bucket, in every store of it (see ref.Resolver.AlsoNamed).
	BucketNames []string
	// Root is the directory the layout lives in. With no Layout, no Stores
	// and no Sessions, it is where .forge is looked for ("" is the current
	// directory). With no Layout but Stores or Sessions, it must be empty.
	Root string
}

// Targets are the opened stores and sources of one run. Close releases them.
type Targets struct {
	Stores  []store.Store
	Sources []sessions.Source
	// Bases are the directories relative references are relative to.
	Bases []string
	// Layout is the layout the stores and sources came from, if any: it
	// knows the aliases, home and runtime folders their references are
	// resolved with.
	Layout *layout.Layout
	// Detected is set when Layout was chosen by finding ./.forge, not asked
	// for.
	Detected bool
	// StoreSpecs and SessionSpecs are the stores and sources as given, or as
	// the layout chose them; commands that open the sources again for
	// writing use SessionSpecs.
	StoreSpecs   []string
	SessionSpecs []string
	// SessionOptions are the options every session source was opened with
	// (the Spec's Query and Exclude).
	SessionOptions sessions.Options

	// names are the Spec's BucketNames, by the bucket's scheme and name
	// ("s3://media", "file:///srv/b").
	names map[string][]string
}

// BucketNameError is a Spec.BucketNames entry that cannot be used.
type BucketNameError struct {
	Entry  string
	Reason string
}

func (e *BucketNameError) Error() string {
	return fmt.Sprintf("bucket name %q: %s", e.Entry, e.Reason)
}

// Is makes a BucketNameError a usage error.
func (e *BucketNameError) Is(target error) bool { return target == usage.Err }

// ParseBucketNames reads NAME=URL entries (Spec.BucketNames): it opens the
// bucket of each URL, without contacting its service, to learn its scheme
// and name, and returns the names by "scheme://name" ("s3://media",
// "file:///srv/b").
func ParseBucketNames(ctx context.Context, entries []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, e := range entries {
		name, u, ok := strings.Cut(e, "=")
		switch {
		case !ok || name == "" || u == "":
			return nil, &BucketNameError{Entry: e, Reason: "write it as NAME=URL, e.g. agent-runs=file:///srv/buckets/agent-runs"}
		case strings.ContainsAny(name, "/\\\x00"):
			return nil, &BucketNameError{Entry: e, Reason: "a bucket name has no slash"}
		}
		st, err := store.Open(ctx, u)
		if err != nil {
			return nil, &BucketNameError{Entry: store.Redact(e), Reason: err.Error()}
		}
		b, isBucket := st.(store.Bucket)
		if !isBucket {
			st.Close()
			return nil, &BucketNameError{Entry: store.Redact(e), Reason: "not a bucket URL (file://, s3://, gs://, azblob://)"}
		}
		id := b.Scheme() + "://" + b.Name()
		if !slices.Contains(out[id], name) {
			out[id] = append(out[id], name)
		}
		st.Close()
	}
	return out, nil
}

// BucketNames are the names the Spec's BucketNames give the bucket of the
// scheme and name ("s3", "media"; "file", "/srv/b").
func (t *Targets) BucketNames(scheme, name string) []string {
	return t.names[scheme+"://"+name]
}

// Open resolves spec and opens its stores, checks that no local store and
// local session source contain one another, then opens its session sources.
// On error everything opened is closed again.
func Open(ctx context.Context, spec Spec) (*Targets, error) {
	t, err := resolve(spec)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			t.Close()
		}
	}()
	if t.names, err = ParseBucketNames(ctx, spec.BucketNames); err != nil {
		return nil, err
	}
	for _, s := range t.StoreSpecs {
		st, err := store.Open(ctx, s)
		if err != nil {
			return nil, &StoreError{Spec: store.Redact(s), Err: store.Classify(store.Redact(s), err)}
		}
		t.Stores = append(t.Stores, st)
		// A bucket that refuses to be read at all (wrong credentials, a
		// mistyped name) is a mistake to fix, not an I/O error to retry.
		if err := store.Probe(ctx, st); err != nil {
			var ae *store.AccessError
			if errors.As(err, &ae) {
				return nil, &StoreError{Spec: store.Redact(s), Err: err}
			}
		}
	}
	if err := checkOverlap(ctx, t.Stores, t.SessionSpecs); err != nil {
		return nil, err
	}
	t.SessionOptions = sessions.Options{Query: spec.Query, Exclude: slices.Clone(spec.Exclude)}
	for _, s := range t.SessionSpecs {
		// A local path that is not there at all is a typo to fix, not a
		// source that failed to read (a retry would fail the same way).
		// One that is there but cannot be read (a link to a volume not
		// mounted) is read, and reported, as any other.
		if localPath(s) {
			if _, err := os.Lstat(s); errors.Is(err, fs.ErrNotExist) {
				return nil, &SourceError{Spec: s, Err: usage.Errorf("session folder or file %s does not exist", s)}
			}
		}
		src, err := sessions.Open(ctx, s, t.SessionOptions)
		if err != nil {
			return nil, &SourceError{Spec: store.Redact(s), Err: err}
		}
		t.Sources = append(t.Sources, src)
	}
	ok = true
	return t, nil
}

// resolve decides the layout and the store and source specs, opening nothing.
func resolve(spec Spec) (*Targets, error) {
	t := &Targets{StoreSpecs: slices.Clone(spec.Stores), SessionSpecs: slices.Clone(spec.Sessions)}
	name, root := spec.Layout, spec.Root
	if name == "" && len(spec.Stores) == 0 && len(spec.Sessions) == 0 {
		if root == "" {
			root = "."
		}
		fi, err := os.Stat(filepath.Join(root, ".forge"))
		if err != nil || !fi.IsDir() {
			return nil, &NothingToDetectError{Dir: absOr(root)}
		}
		name, t.Detected = layout.Forge, true
	}
	switch {
	case name != "":
		l, err := layout.Find(name, root)
		if err != nil {
			return nil, err
		}
		if len(t.StoreSpecs) == 0 {
			t.StoreSpecs = l.StoreDirs()
		}
		if len(t.SessionSpecs) == 0 {
			t.SessionSpecs = l.Sessions
		}
		t.Bases = append(t.Bases, l.Bases...)
		t.Layout = l
	case root != "":
		return nil, &RootWithoutLayoutError{Root: root}
	}
	if len(t.SessionSpecs) > scan.MaxSources {
		return nil, &TooManySourcesError{Count: len(t.SessionSpecs), Max: scan.MaxSources}
	}
	return t, nil
}

// OpenRewriters opens every session source again for writing, with the
// options it was read with: a rewrite changes only what the run's reads see,
// never a file or table the operator excluded from them. On error, those
// opened are closed again and the error is a [*SourceError].
func (t *Targets) OpenRewriters(ctx context.Context) ([]sessions.Rewriter, error) {
	var rws []sessions.Rewriter
	for _, s := range t.SessionSpecs {
		rw, err := sessions.OpenRewriter(ctx, s, t.SessionOptions)
		if err != nil {
			for i := len(rws) - 1; i >= 0; i-- {
				rws[i].Close()
			}
			return nil, &SourceError{Spec: store.Redact(s), Err: err}
		}
		rws = append(rws, rw)
	}
	return rws, nil
}

// Close closes every store and source.
func (t *Targets) Close() error {
	var errs []error
	for _, s := range t.Stores {
		errs = append(errs, s.Close())
	}
	for _, s := range t.Sources {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// ScanTargets pairs every store with its resolver.
func (t *Targets) ScanTargets() []scan.Target {
	out := make([]scan.Target, 0, len(t.Stores))
	for _, s := range t.Stores {
		out = append(out, scan.Target{Store: s, Resolver: t.Resolver(s)})
	}
	return out
}

// Resolver is the resolver of a store of the run: the layout's, for a local
// store of a layout run, else the plain one over Bases.
func (t *Targets) Resolver(s store.Store) *ref.Resolver {
	if ls, ok := store.Unwrap(s).(store.Local); ok && t.Layout != nil {
		return t.Layout.Resolver(ls.Dir())
	}
	r := scan.NewResolver(s, t.Bases)
	if b, ok := store.Unwrap(s).(store.Bucket); ok {
		r = r.AlsoNamed(t.BucketNames(b.Scheme(), b.Name())...)
	}
	return r
}

// Companion is the layout's companion rule for a local store whose files
// have sidecars (coffer's content/chat-media), else nil. The store is that
// folder whatever stands in front of it (a --trash-dir) and however it is
// spelled (by a symbolic link, or by its real path): a rule dropped there
// would leave a referenced upload's sidecar to be removed as unreferenced.
func (t *Targets) Companion(s store.Store) func(key string) (string, bool) {
	ls, ok := store.Unwrap(s).(store.Local)
	if !ok || t.Layout == nil {
		return nil
	}
	dir := realOr(ls.Dir())
	for _, l := range t.Layout.Stores {
		if l.Sidecars && (filepath.Clean(l.Dir) == filepath.Clean(ls.Dir()) || realOr(l.Dir) == dir) {
			return t.Layout.Companion
		}
	}
	return nil
}

// Relations of a session source to a store in an [OverlapError].
const (
	// Inside: the source is the store's folder or below it.
	Inside = "inside"
	// Contains: the store's folder is below the source.
	Contains = "contains"
)

// OverlapError refuses a local store and a local session source that contain
// one another.
type OverlapError struct {
	// Store is the store's directory.
	Store string
	// Source is the session source as given.
	Source string
	// Relation is the source's relation to the store: Inside or Contains.
	Relation string
}

func (e *OverlapError) Error() string {
	if e.Relation == Contains {
		return fmt.Sprintf("the store %s is inside the session source %s: its blobs would be read as sessions", e.Store, e.Source)
	}
	return fmt.Sprintf("the session source %s is inside the store %s: its files would be taken for blobs", e.Source, e.Store)
}

// NothingToDetectError is returned when a Spec names no layout, store or
// source and Dir holds no .forge folder.
type NothingToDetectError struct {
	// Dir is the directory looked in, absolute.
	Dir string
}

func (e *NothingToDetectError) Error() string {
	return fmt.Sprintf("no store or session source given and no .forge folder in %s to detect", e.Dir)
}

// RootWithoutLayoutError is returned for a Spec with a Root, no Layout, and
// stores or sources of its own: the root would be ignored.
type RootWithoutLayoutError struct {
	Root string
}

func (e *RootWithoutLayoutError) Error() string {
	return fmt.Sprintf("root %s given without a layout", e.Root)
}

// TooManySourcesError is returned for more session sources than a scan reads.
type TooManySourcesError struct {
	Count, Max int
}

func (e *TooManySourcesError) Error() string {
	return fmt.Sprintf("%d session sources given, at most %d are supported", e.Count, e.Max)
}

// StoreError is an error opening one store.
type StoreError struct {
	// Spec is the store as given, URLs redacted (store.Redact).
	Spec string
	Err  error
}

func (e *StoreError) Error() string { return fmt.Sprintf("store %s: %v", e.Spec, e.Err) }
func (e *StoreError) Unwrap() error { return e.Err }

// localPath reports whether a session spec names a local folder or file
// (not sqlite:, a database URL or a bucket URL).
func localPath(spec string) bool {
	return !strings.Contains(spec, "://") && !strings.HasPrefix(strings.ToLower(spec), "sqlite:")
}

// SourceError is an error opening one session source.
type SourceError struct {
	// Spec is the source as given, URLs redacted (store.Redact).
	Spec string
	Err  error
}

func (e *SourceError) Error() string { return fmt.Sprintf("session source %s: %v", e.Spec, e.Err) }
func (e *SourceError) Unwrap() error { return e.Err }

// checkOverlap returns an OverlapError for the first local store and local
// session source that are the same folder or lie inside one another. A
// file:// URL, as a store or as a source, is the local folder it names. Paths
// are compared with symlinks resolved, so another spelling of the same folder
// is caught too.
func checkOverlap(ctx context.Context, stores []store.Store, sessionSpecs []string) error {
	for _, st := range stores {
		if b, ok := st.(store.Bucket); ok && b.Scheme() != "file" {
			if err := checkBucketOverlap(ctx, b, sessionSpecs); err != nil {
				return err
			}
			continue
		}
		dir, name, ok := localStoreDir(st)
		if !ok {
			continue
		}
		dir = realOr(dir)
		for _, spec := range sessionSpecs {
			p, ok := localSessionPath(ctx, spec)
			if !ok {
				continue
			}
			p = realOr(p)
			switch {
			case store.Within(p, dir):
				return &OverlapError{Store: name, Source: store.Redact(spec), Relation: Inside}
			case store.Within(dir, p):
				return &OverlapError{Store: name, Source: store.Redact(spec), Relation: Contains}
			}
		}
	}
	return nil
}

// checkBucketOverlap is checkOverlap for a bucket store (not file://) and
// the session sources that are buckets of its service.
func checkBucketOverlap(ctx context.Context, b store.Bucket, sessionSpecs []string) error {
	for _, spec := range sessionSpecs {
		if !strings.HasPrefix(strings.ToLower(spec), b.Scheme()+"://") {
			continue
		}
		src, err := store.OpenBucket(ctx, spec)
		if err != nil {
			continue // opening the source reports it next
		}
		inside, contains := bucketWithin(src, b), bucketWithin(b, src)
		src.Close()
		switch {
		case inside:
			return &OverlapError{Store: b.Location(), Source: store.Redact(spec), Relation: Inside}
		case contains:
			return &OverlapError{Store: b.Location(), Source: store.Redact(spec), Relation: Contains}
		}
	}
	return nil
}

// bucketWithin reports whether bucket store a lies within b: the same
// service and bucket, and a's prefix below b's (prefixes end in "/", or
// are empty for the whole bucket). Two buckets of one name on different
// endpoints are taken for one: refusing costs a flag, a wrong answer data.
func bucketWithin(a, b store.Bucket) bool {
	return a != nil && b != nil && a.Scheme() == b.Scheme() && a.Name() == b.Name() && strings.HasPrefix(a.Prefix(), b.Prefix())
}

// Overlap reports whether the stores a and b hold some of the same keys'
// files or objects: local folders (and file:// buckets) that are the same or
// lie inside one another, symlinks resolved; buckets of one service and name
// whose prefixes are the same or one below the other.
func Overlap(a, b store.Store) bool {
	ba, aBucket := a.(store.Bucket)
	bb, bBucket := b.(store.Bucket)
	if aBucket && bBucket && ba.Scheme() != "file" && bb.Scheme() != "file" {
		return bucketWithin(ba, bb) || bucketWithin(bb, ba)
	}
	da, _, okA := localStoreDir(a)
	db, _, okB := localStoreDir(b)
	if !okA || !okB {
		return false
	}
	da, db = realOr(da), realOr(db)
	return store.Within(da, db) || store.Within(db, da)
}

// localStoreDir is the folder a store keeps its blobs in, and the name the
// operator knows it by: a local store's directory, or a file:// bucket's
// directory (below its prefix) and its URL. Other buckets have none.
func localStoreDir(st store.Store) (dir, name string, ok bool) {
	if ls, ok := st.(store.Local); ok {
		return ls.Dir(), ls.Dir(), true
	}
	if b, ok := st.(store.Bucket); ok && b.Scheme() == "file" {
		return filepath.Join(b.Name(), filepath.FromSlash(b.Prefix())), st.Location(), true
	}
	return "", "", false
}

// localSessionPath is the local path a session spec reads: a folder or file,
// the database file of sqlite:PATH, or the folder of a file:// bucket URL.
// Other URLs have none; so has a file:// URL that does not open, which
// opening the source reports next.
func localSessionPath(ctx context.Context, spec string) (string, bool) {
	if p, ok := strings.CutPrefix(spec, "sqlite:"); ok {
		return absOr(p), true
	}
	if strings.HasPrefix(strings.ToLower(spec), "file://") {
		b, err := store.OpenBucket(ctx, spec)
		if err != nil {
			return "", false
		}
		defer b.Close()
		dir, _, ok := localStoreDir(b)
		return dir, ok
	}
	if strings.Contains(spec, "://") {
		return "", false
	}
	return absOr(spec), true
}

// realOr is p (absolute) with symlinks resolved (see store.RealPath: a
// path not created yet is resolved through its nearest existing parent, a
// link on the way followed), or p cleaned where that fails.
func realOr(p string) string {
	if r, err := store.RealPath(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// absOr is p made absolute, or p where that fails.
func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
