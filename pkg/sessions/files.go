package sessions

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/mediactl/mediactl/pkg/ref"
)

// filesSource reads session files from a directory tree or a single file.
//
// The promise: every entry of the folder is read, or excluded by the operator,
// or reported. Nothing is skipped silently, because a session that is not read
// leaves its blobs unprotected. A directory is walked recursively, entries in
// lexical (byte) order, and each entry is exactly one of:
//
//   - excluded: its slash path relative to the folder, or its base name,
//     matches one of Options.Exclude (path.Match syntax). It is not read (a
//     folder is not entered) and is counted in Counts.Excluded.
//   - a document: a regular file whose name ends, in any letter case, in
//     .json, .jsonl or .ndjson, optionally followed by .gz (gzip) or .zst /
//     .zstd (zstandard). Item.Open returns the decompressed stream; a corrupt
//     stream is a read error. Counted in Counts.Documents. A 0-byte .json file
//     (or a 0-byte compressed file) is an Item with Err: a session document
//     holds JSON. A 0-byte .jsonl or .ndjson file is a valid empty stream.
//   - a leftover: a regular file named <document name>.tmp, in any letter case
//     (forge's "t-1.json.tmp" atomic-write leftover, which may be the only copy
//     of a new session), or .<document name>.<12 hex digits>.tmp (the temporary
//     file of mediactl's own rewriter, left by a killed migrate --rewrite). It
//     is yielded like a document with Item.Leftover set and counted in
//     Counts.Leftovers, not in Documents. A 0-byte leftover holds nothing to
//     read: it is counted and not yielded. A runtime's leftover beside its own
//     session ("t-1.json.tmp" next to a non-empty "t-1.json": an update whose
//     rename never happened) is not read either, but counted in
//     Counts.Skipped: the runtime reads the session, never the leftover, and
//     overwrites it on its next save.
//   - unread: every other file, and every socket, named pipe or device whatever
//     its name (never opened: opening a pipe could block forever). It is an
//     Item with Err of type [*UnreadError], counted in Counts.Unread.
//   - a problem: a folder that cannot be listed, a file that cannot be opened,
//     a dangling symbolic link, a link loop. An Item with Err.
//
// Symbolic links inside the folder, to a file or to a folder, are followed,
// wherever they lead (reading more can only protect more). Every folder is
// entered once, known by device and inode: a link back to a folder on the
// current path is a loop (an Item with Err); a link to a folder already walked
// elsewhere adds nothing. A file reached twice (through links or hard links) is
// read once. A document is known by device and inode and by its change time
// and size (docKey): a freed inode is handed to the next new file at once, so
// device and inode alone could take a new session for one already read.
//
// A folder may change while it is walked (a runtime moves a session from a
// folder not walked yet into one already walked). So after the walk the tree
// is listed again, and every entry that appeared or whose identity changed
// since the previous listing is handled as above: a new, replaced or
// rewritten document is read, a new unread file reported. This repeats until
// a listing finds no change, at most filesRelists times; a tree that still
// changes then is reported as an Item with Err (the read is incomplete). A
// document replaced since it was read (forge renames a new version over it) or
// written to (a .jsonl appended) is read again, and counted again.
//
// The spec itself may be a symbolic link (~/.forge → /data/forge). A spec naming
// a file is one document whatever its name (decompressed when its name ends in
// .gz, .zst or .zstd).
//
// Each document is probed (opened and closed) during the walk, so that an
// unreadable file is reported as an Item with Err. Item.Open opens it again,
// and refuses a name that was replaced since it was listed by something that
// is not what the listing saw: a file listed as a regular file that is now a
// symbolic link, or a name listed as a link that no longer resolves to the
// file opened (compared by device and inode with the link's resolved target),
// or anything that is not a regular file (a pipe is opened non-blocking, so it
// cannot hang the read). The file's current
// content is read: a session rewritten (renamed over) since the listing is fine.
type filesSource struct {
	spec    string
	exclude []string // path.Match patterns, checked valid by Open
	// since, when not 0, reads only the documents changed at or after it
	// (Unix ns; see ChangedSince).
	since int64
	// lastRoot is the top folder's identity as the last whole walk found
	// it, shared with the sources ChangedSince makes: a top folder swapped
	// for another since is read whole.
	lastRoot *rootMemo
}

// rootMemo remembers, across walks, the folders the last whole walk entered
// (the top folder first): a later walk that reads only what changed reads
// whole a folder that walk did not enter (mounted, or moved in, since), and
// everything when the top folder is another.
type rootMemo struct {
	mu   sync.Mutex
	root fileKey
	dirs map[fileKey]bool // nil until a whole walk ended
}

func (m *rootMemo) remember(root fileKey, dirs map[fileKey]bool) {
	m.mu.Lock()
	m.root, m.dirs = root, dirs
	m.mu.Unlock()
}

// known reports whether the last whole walk had root as its top folder, and
// gives the folders it entered.
func (m *rootMemo) known(root fileKey) (map[fileKey]bool, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dirs, m.dirs != nil && m.root == root
}

// filesRelists bounds how many times a folder is listed again after its walk.
const filesRelists = 3

// zstdMaxWindow bounds the memory a zstandard stream may ask for (the window
// of `zstd --long=27`); a stream that needs more is a read error, not a
// silent skip.
const zstdMaxWindow = 128 << 20

// walkDirHook, when set (by tests), is called with a folder's path right
// before the folder is listed; probeHook with a document's right before it
// is opened.
var (
	walkDirHook func(dir string)
	probeHook   func(path string)
)

// UnreadError is the Item.Err of a file in a sessions folder that is neither
// read nor excluded: a file without a document's name, a socket, a pipe, a
// device; or of a PostgreSQL foreign table, whose rows are on another server.
// It makes the read incomplete, like any Item with Err; the operator can
// exclude the file or table explicitly (Options.Exclude) once it is known not
// to hold sessions.
type UnreadError struct {
	Path   string // the file, or the table as Place.Table names it
	Reason string // e.g. "not a session document (by its name)", "a socket"
}

func (e *UnreadError) Error() string {
	return fmt.Sprintf("%s not read: %s", e.Path, e.Reason)
}

// reasonNotDocument is why a regular file with another name is not read.
const reasonNotDocument = "not a session document (by its name)"

// errEmptyJSON is why a 0-byte .json file is a problem.
var errEmptyJSON = errors.New("empty file: a session document holds JSON")

func (s *filesSource) String() string { return s.spec }
func (s *filesSource) Close() error   { return nil }

// compression is how a document's bytes are stored.
type compression uint8

const (
	plain compression = iota
	compGzip
	compZstd
)

// docFormat is what a document's name says about it.
type docFormat struct {
	comp compression
	// oneJSON: the format is one JSON value (.json), so an empty file is not
	// a valid document; .jsonl and .ndjson may be empty.
	oneJSON bool
}

// documentFormat reports whether name is a session document's name, in any
// letter case, and what the name says about its content.
func documentFormat(name string) (docFormat, bool) {
	var f docFormat
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".gz"):
		f.comp, lower = compGzip, lower[:len(lower)-len(".gz")]
	case strings.HasSuffix(lower, ".zst"):
		f.comp, lower = compZstd, lower[:len(lower)-len(".zst")]
	case strings.HasSuffix(lower, ".zstd"):
		f.comp, lower = compZstd, lower[:len(lower)-len(".zstd")]
	}
	switch {
	case strings.HasSuffix(lower, ".json"):
		f.oneJSON = true
		return f, true
	case strings.HasSuffix(lower, ".jsonl"), strings.HasSuffix(lower, ".ndjson"):
		return f, true
	}
	return f, false
}

// leftoverFormat reports whether name is "<document name>.tmp" (any case), or
// the temporary file of mediactl's own rewriter, ".<document name>.<12 hex
// digits>.tmp", which a killed rewrite leaves holding a whole or partial new
// version of the session.
func leftoverFormat(name string) (docFormat, bool) {
	if len(name) <= len(".tmp") || !strings.EqualFold(name[len(name)-len(".tmp"):], ".tmp") {
		return docFormat{}, false
	}
	base := name[:len(name)-len(".tmp")]
	if f, ok := documentFormat(base); ok {
		return f, true
	}
	const suffix = len(".") + 12
	if len(base) > 1+suffix && base[0] == '.' && base[len(base)-suffix] == '.' && isLowerHex(base[len(base)-suffix+1:]) {
		return documentFormat(base[1 : len(base)-suffix])
	}
	return docFormat{}, false
}

// besideItsSession reports whether p, a leftover "<document>.tmp" of a
// runtime's atomic write, has its document beside it. mediactl's own
// rewriter's temporary files do not count: one left behind may hold another
// writer's version of the session, so they are always read.
func besideItsSession(p string) bool {
	dir, name := filepath.Split(p)
	base := name[:len(name)-len(".tmp")]
	if _, ok := documentFormat(base); !ok {
		return false
	}
	fi, err := os.Lstat(filepath.Join(dir, base))
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// documentExt reports whether a name is a session document's (not a leftover's).
func documentExt(name string) bool {
	_, ok := documentFormat(name)
	return ok
}

// checkExclude checks patterns for path.Match syntax.
func checkExclude(patterns []string) error {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("exclude pattern %q: %w (the syntax is path.Match's: * ? [a-z] and \\ to escape)", p, err)
		}
	}
	return nil
}

// excluded reports whether an entry (rel: slash path relative to the folder)
// matches an exclude pattern.
func (s *filesSource) excluded(rel, name string) bool {
	return excludedBy(s.exclude, rel, name)
}

// excludedBy reports whether rel (a slash path) or its base name matches one
// of patterns.
func excludedBy(patterns []string, rel, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, rel); ok {
			return true
		}
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// statRoot checks what a spec names: a folder, or a regular file that is
// one document. Walk and the rewriter refuse anything else alike.
func statRoot(root string) (fs.FileInfo, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err // names the path
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a folder or a regular file (%s)", root, fi.Mode().Type())
	}
	return fi, nil
}

func (s *filesSource) Walk(ctx context.Context, fn func(Item) error) (Counts, error) {
	var c Counts
	root := s.spec
	fi, err := statRoot(root)
	if err != nil {
		return c, err
	}
	if !fi.IsDir() {
		f, ok := documentFormat(filepath.Base(root))
		if !ok {
			f = docFormat{oneJSON: true} // the operator named it: JSON whatever its name
		}
		if fi.Size() == 0 && (f.oneJSON || f.comp != plain) {
			return c, fn(Item{Place: s.place(root), Size: -1, Err: fmt.Errorf("%s: %w", root, errEmptyJSON)})
		}
		c.Documents++
		return c, fn(s.document(root, fi, f, true, false))
	}
	w := newFilesWalk(s, ctx, fn, &c)
	rootID, idErr := fileIdentity(fi, root)
	if w.since != 0 {
		// Only what changed since a whole walk of this very folder: every
		// folder that walk did not enter is read whole.
		dirs, ok := map[fileKey]bool(nil), false
		if idErr == nil && s.lastRoot != nil {
			dirs, ok = s.lastRoot.known(rootID)
		}
		if ok {
			w.knownDirs = dirs
		} else {
			w.since = 0
		}
	}
	entered := map[fileKey]bool{}
	for pass := 0; ; pass++ {
		w.pass, w.changes = pass, 0
		w.visited = map[fileKey]bool{}
		if err := w.dir(root, "", nil); err != nil {
			return c, err
		}
		maps.Copy(entered, w.visited)
		if pass > 0 && w.changes == 0 {
			if s.since == 0 && idErr == nil && s.lastRoot != nil {
				s.lastRoot.remember(rootID, entered)
			}
			return c, nil
		}
		if pass == filesRelists {
			return c, fn(Item{Place: s.place(root), Size: -1, Err: fmt.Errorf(
				"%s kept changing while it was read: %d entries appeared or changed since the previous listing, %d listings after the walk; read it again when the runtime is idle",
				root, w.changes, filesRelists)})
		}
	}
}

// walkRewritable is the walk the rewriter works from: the same places, but only
// the files it can rewrite in place. It is one pass, without listing again (the
// rewriter's own renames would look like changes), and it reads only regular,
// uncompressed documents reached without a link. Links, leftovers, compressed
// documents and pipes or devices with a document's name are counted in
// Counts.Skipped; other files are passed over (Walk reports them to the scan).
// A link swapped in after the listing is refused by the rewriter itself.
func (s *filesSource) walkRewritable(ctx context.Context, fn func(Item) error) (Counts, error) {
	var c Counts
	fi, err := statRoot(s.spec)
	if err != nil {
		return c, err
	}
	if !fi.IsDir() {
		c.Documents++
		return c, fn(s.document(s.spec, fi, docFormat{oneJSON: true}, true, false))
	}
	w := newFilesWalk(s, ctx, fn, &c)
	w.rewrite, w.visited = true, map[fileKey]bool{}
	return c, w.dir(s.spec, "", nil)
}

// rewritableEntry is entry for walkRewritable.
func (w *filesWalk) rewritableEntry(p, rel, name string, ancestors []fileKey) error {
	fi, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone since the listing: nothing to rewrite
		}
		return w.report(p, err)
	}
	t := fi.Mode().Type()
	switch {
	case t.IsDir():
		return w.dir(p, rel, ancestors)
	case t&fs.ModeSymlink != 0:
		w.c.Skipped++
		return nil
	}
	f, isDoc := documentFormat(name)
	if !isDoc {
		if _, ok := leftoverFormat(name); ok {
			w.c.Skipped++
		}
		return nil
	}
	if !t.IsRegular() || f.comp != plain {
		w.c.Skipped++
		return nil
	}
	if err := probe(p); err != nil {
		return w.report(p, err)
	}
	w.c.Documents++
	return w.fn(w.s.document(p, fi, f, false, false))
}

// fileKey is a file's identity, docKey a document's (files_unix.go,
// files_other.go).

// entryState is what a listing saw at a path, to tell a later listing's
// changes from what was already handled: its kind in the low 4 bits and, for
// documents, 60 bits of a hash of the docKey above them (a replaced document
// is read again). 8 bytes a file where a kind beside a Unix docKey is 40, paid
// by every shard. A hash can collide, so it never says alone that a document
// was read: see noteDocument.
type entryState uint64

func state(kind entryKind, id uint64) entryState { return entryState(id<<4 | uint64(kind)) }

type entryKind uint8

const (
	entryDocument  entryKind = iota + 1
	entryDocFailed           // a document reported as a problem (empty, cannot be opened)
	entryEmptyLeftover
	entryStaleLeftover
	entryUnread
	entryExcluded
	entryProblem
	entryWalkedDir // a link to a folder walked elsewhere
	// at most 15: entryState holds a kind in 4 bits
)

// filesWalk is one Walk of a folder: its first pass and the listings after it.
type filesWalk struct {
	s   *filesSource
	ctx context.Context
	fn  func(Item) error
	c   *Counts

	rewrite bool // walkRewritable
	pass    int
	changes int                   // entries new or changed in this pass (after the first)
	seed    maphash.Seed          // of pathHash
	seen    map[uint64]entryState // a path's hash → what the latest listing saw there
	read    map[docKey]struct{}   // versions of files yielded as documents (read once)
	visited map[fileKey]bool      // folders entered in this pass

	// since is the source's since while the walk is in a part of the tree
	// that may hold unchanged documents; 0 below a folder that changed (one
	// moved in keeps its files' old times: all of it is read).
	since int64
	// freshEntry says the entry being entered as a folder changed itself
	// (a link made, a folder renamed in) since since.
	freshEntry bool
	// knownDirs are the folders the last whole walk entered (with since).
	knownDirs map[fileKey]bool
}

func newFilesWalk(s *filesSource, ctx context.Context, fn func(Item) error, c *Counts) *filesWalk {
	return &filesWalk{s: s, ctx: ctx, fn: fn, c: c, seed: maphash.MakeSeed(),
		seen: map[uint64]entryState{}, read: map[docKey]struct{}{}, since: s.since}
}

// pathHash is what seen is keyed by. Every shard of a sharded run walks every
// session file, so what the walk keeps per file is paid N times: a path's
// 64-bit hash is 8 bytes where the path was a string of ~100. Two paths with
// one hash cannot make a document go unread: a document counts as already
// seen only if the identity last seen under its hash is its own, and a file of
// that identity has been read (read is keyed by the whole identity, not a
// hash; see noteDocument). At worst
// the two keep looking changed and the walk ends as a tree that kept changing:
// incomplete, which deletes nothing. (A document that could not be read was
// reported, which makes the walk incomplete too.) A variable so a test can make every
// path collide.
var pathHash = func(seed maphash.Seed, p string) uint64 { return maphash.String(seed, p) }

// versionHash is what seen keeps of a document's identity. A variable so a
// test can make every version collide.
var versionHash = func(seed maphash.Seed, key docKey) uint64 { return maphash.Comparable(seed, key) }

// note records what this pass sees at p and reports whether it is new: in the
// first pass everything is; later, what differs from the last listing.
func (w *filesWalk) note(p string, st entryState) bool {
	h := pathHash(w.seed, p)
	old, had := w.seen[h]
	w.seen[h] = st
	if w.pass == 0 {
		return true
	}
	if had && old == st {
		return false
	}
	w.changes++
	return true
}

// noteDocument is note for a document of identity key. What seen keeps is a
// hash of key, which two versions may share; so the document is unchanged
// only if the last listing saw that hash here and the read set, keyed by the
// whole identity, holds key: this version was read. (Or the last listing
// reported a document here with that hash: the walk is incomplete anyway.)
// At worst a name now on another version read elsewhere, whose hash is the
// same, is not counted as a change: there is nothing new to read at it.
func (w *filesWalk) noteDocument(p string, key docKey) bool {
	h := pathHash(w.seed, p)
	id := versionHash(w.seed, key)
	st := state(entryDocument, id)
	old, had := w.seen[h]
	if w.pass > 0 && had {
		if old == state(entryDocFailed, id) {
			return false
		}
		if _, done := w.read[key]; done && old == st {
			return false
		}
	}
	w.seen[h] = st
	if w.pass > 0 {
		w.changes++
	}
	return true
}

// docProblem yields an Item with Err for the document at p, of identity key,
// and records it so that the next listing does not report it again unless it
// changed.
func (w *filesWalk) docProblem(p string, key docKey, err error) error {
	w.seen[pathHash(w.seed, p)] = state(entryDocFailed, versionHash(w.seed, key))
	return w.report(p, err)
}

// problem yields an Item with Err for p, once per listing that finds it new.
func (w *filesWalk) problem(p string, err error) error {
	if !w.note(p, state(entryProblem, 0)) {
		return nil
	}
	return w.report(p, err)
}

// report yields an Item with Err for p.
func (w *filesWalk) report(p string, err error) error {
	return w.fn(Item{Place: w.s.place(p), Size: -1, Err: err})
}

func (w *filesWalk) unread(p, reason string) error {
	if !w.note(p, state(entryUnread, 0)) {
		return nil
	}
	w.c.Unread++
	return w.fn(Item{Place: w.s.place(p), Size: -1, Err: &UnreadError{Path: p, Reason: reason}})
}

// dir walks the folder at p (rel: its slash path below the root, "" for the
// root). ancestors are the folders on the way to it, for loop detection.
func (w *filesWalk) dir(p, rel string, ancestors []fileKey) error {
	fresh := w.freshEntry
	w.freshEntry = false
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if walkDirHook != nil {
		walkDirHook(p)
	}
	failed := func(err error) error {
		if rel == "" {
			return err // the top folder: the source fails as a whole
		}
		if errors.Is(err, fs.ErrNotExist) {
			// Gone since its parent was listed (moved or removed): the next
			// listing finds where it went.
			w.changes++
			return nil
		}
		return w.problem(p, err)
	}
	f, err := os.Open(p)
	if err != nil {
		return failed(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return failed(err)
	}
	if !fi.IsDir() {
		f.Close()
		// Replaced by a file since its parent was listed.
		w.changes++
		return nil
	}
	id, err := fileIdentity(fi, p)
	if err != nil {
		f.Close()
		return w.problem(p, err)
	}
	for _, a := range ancestors {
		if a == id {
			f.Close()
			return w.problem(p, fmt.Errorf("%s: symbolic link loop: it leads back to a folder on its own path", p))
		}
	}
	if w.visited[id] {
		f.Close()
		w.note(p, state(entryWalkedDir, 0))
		return nil
	}
	w.visited[id] = true
	if w.since != 0 && rel != "" && (fresh || !w.knownDirs[id] || !before(fi, time.Unix(0, w.since))) {
		// A folder that changed since (entries added or removed, or the
		// folder itself renamed or linked in): its files may be old files
		// new here, with their old times. Read all of it.
		defer func(since int64) { w.since = since }(w.since)
		w.since = 0
	}
	// Names only: each entry is lstat'ed when its turn comes anyway, and a
	// large folder's listing is held while it is walked (a name is ~16 bytes
	// beside its string; a DirEntry ~100).
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return failed(err)
	}
	slices.Sort(names) // byte order, os.ReadDir's
	ancestors = append(ancestors, id)
	for _, name := range names {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if err := w.entry(p, rel, name, ancestors); err != nil {
			return err
		}
	}
	return nil
}

// entry handles one entry of a folder.
func (w *filesWalk) entry(dir, dirRel, name string, ancestors []fileKey) error {
	p := filepath.Join(dir, name)
	rel := name
	if dirRel != "" {
		rel = dirRel + "/" + name
	}
	if w.s.excluded(rel, name) {
		if w.note(p, state(entryExcluded, 0)) {
			w.c.Excluded++
		}
		return nil
	}
	if w.rewrite {
		return w.rewritableEntry(p, rel, name, ancestors)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			w.changes++ // gone since the listing: the next one finds where
			return nil
		}
		return w.problem(p, err)
	}
	// Whether the entry itself changed since (a link made, a file or folder
	// renamed in): what it leads to may be old.
	entryChanged := w.since != 0 && !before(fi, time.Unix(0, w.since))
	if fi.IsDir() {
		w.freshEntry = entryChanged
		return w.dir(p, rel, ancestors)
	}
	linked := fi.Mode()&fs.ModeSymlink != 0
	if linked {
		if fi, err = os.Stat(p); err != nil { // follows the whole chain
			return w.linkProblem(p, err)
		}
		if fi.IsDir() {
			w.freshEntry = entryChanged
			return w.dir(p, rel, ancestors)
		}
	}
	if !fi.Mode().IsRegular() {
		return w.unread(p, fileTypeName(fi.Mode()))
	}
	f, isDoc := documentFormat(name)
	leftover := false
	if !isDoc {
		f, leftover = leftoverFormat(name)
		if !leftover {
			return w.unread(p, reasonNotDocument)
		}
	}
	if leftover && besideItsSession(p) {
		// "t-1.json.tmp" beside "t-1.json": an update whose rename never
		// happened. The runtime reads the session, never this file, and
		// overwrites it on its next save, so what only it names is not in
		// use. A leftover without its session is read: it may be the only copy.
		if w.note(p, state(entryStaleLeftover, 0)) {
			w.c.Skipped++
		}
		return nil
	}
	key, err := docIdentity(fi, p)
	if err != nil {
		return w.problem(p, err)
	}
	if fi.Size() == 0 && leftover {
		// An empty leftover: the write it was meant for never started.
		if w.note(p, state(entryEmptyLeftover, 0)) {
			w.c.Leftovers++
		}
		return nil
	}
	if !w.noteDocument(p, key) {
		return nil
	}
	if _, done := w.read[key]; done {
		return nil // this version was read under another name (a hard link)
	}
	if w.since != 0 && !entryChanged && before(fi, time.Unix(0, w.since)) {
		// Read whole before, and not changed since (ChangedSince): this
		// version counts as read, so the listings after the walk do not
		// take it for a change.
		w.read[key] = struct{}{}
		return nil
	}
	// A document found new (or replaced) in this listing: read, or a problem.
	if fi.Size() == 0 && (f.oneJSON || f.comp != plain) {
		return w.docProblem(p, key, fmt.Errorf("%s: %w", p, errEmptyJSON))
	}
	if probeHook != nil {
		probeHook(p)
	}
	if err := probe(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Gone since its lstat (a runtime's rename, or a session it
			// deleted): like a file gone since the listing, a change the
			// next listing finds the outcome of.
			delete(w.seen, pathHash(w.seed, p))
			w.changes++
			return nil
		}
		return w.docProblem(p, key, err)
	}
	w.read[key] = struct{}{}
	if leftover {
		w.c.Leftovers++
	} else {
		w.c.Documents++
	}
	return w.fn(w.s.document(p, fi, f, linked, leftover))
}

// linkProblem reports a symbolic link that does not lead to anything.
func (w *filesWalk) linkProblem(p string, err error) error {
	target, _ := os.Readlink(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(p); errors.Is(lerr, fs.ErrNotExist) {
			w.changes++ // the link itself is gone since the listing
			return nil
		}
		return w.problem(p, fmt.Errorf("%s: dangling symbolic link to %s: %w", p, target, err))
	case errors.Is(err, syscall.ELOOP):
		return w.problem(p, fmt.Errorf("%s: symbolic link loop (via %s): %w", p, target, err))
	}
	return w.problem(p, fmt.Errorf("%s: symbolic link to %s cannot be followed: %w", p, target, err))
}

// fileTypeName says what a file that is not regular is.
func fileTypeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

func (s *filesSource) place(path string) ref.Place {
	return ref.Place{Source: s.spec, Document: path, Offset: -1}
}

// document makes the Item for a file; linked says whether path is (or may be,
// for the spec itself) a symbolic link.
func (s *filesSource) document(path string, fi fs.FileInfo, f docFormat, linked, leftover bool) Item {
	size := fi.Size()
	if f.comp != plain {
		size = -1 // the decompressed size is not known before reading
	}
	return Item{
		Place:    s.place(path),
		Size:     size,
		Leftover: leftover,
		Open:     func() (io.ReadCloser, error) { return openDocument(path, f, linked) },
	}
}

// probe checks that a file can be opened for reading.
func probe(path string) error {
	f, err := openFile(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// openDocument opens a document and decompresses it as its name says.
func openDocument(path string, f docFormat, linked bool) (io.ReadCloser, error) {
	file, err := openRegular(path, linked)
	if err != nil {
		return nil, err
	}
	return decompress(file, f, path)
}

// decompress wraps file (a document named path) in the decompression its name
// says; closing the result closes file.
func decompress(file io.ReadCloser, f docFormat, path string) (io.ReadCloser, error) {
	switch f.comp {
	case compGzip:
		zr, err := gzip.NewReader(file)
		if err != nil {
			file.Close()
			return nil, &fs.PathError{Op: "gunzip", Path: path, Err: err}
		}
		return &decompressed{r: zr, close: zr.Close, file: file, op: "gunzip", path: path}, nil
	case compZstd:
		zr, err := zstd.NewReader(file, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow))
		if err != nil {
			file.Close()
			return nil, &fs.PathError{Op: "unzstd", Path: path, Err: err}
		}
		return &decompressed{r: zr, close: func() error { zr.Close(); return nil }, file: file, op: "unzstd", path: path}, nil
	}
	return file, nil
}

// SniffDecompressed is rc decompressed as its first bytes say (gzip, zstd),
// or rc as it is, its first bytes still to be read: for a leftover whose name
// says nothing of how it is stored (a bucket object kept gzip-encoded, a
// ".json.gz.tmp" whose ".gz" is not its last extension). name is for errors.
func SniffDecompressed(rc io.ReadCloser, name string) (io.ReadCloser, error) {
	br := bufio.NewReader(rc)
	head, _ := br.Peek(4)
	var f docFormat
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		f.comp = compGzip
	case len(head) == 4 && head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd:
		f.comp = compZstd
	}
	return decompress(bufferedFile{br, rc}, f, name)
}

// bufferedFile reads through a buffer and closes the file under it.
type bufferedFile struct {
	*bufio.Reader
	io.Closer
}

// decompressed is a decompressing reader over a file; its errors name the file.
type decompressed struct {
	r     io.Reader
	close func() error
	file  io.Closer
	op    string
	path  string
}

func (d *decompressed) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		var pe *fs.PathError
		if !errors.As(err, &pe) {
			err = &fs.PathError{Op: d.op, Path: d.path, Err: err}
		}
	}
	return n, err
}

func (d *decompressed) Close() error {
	err := d.close()
	if ferr := d.file.Close(); err == nil {
		err = ferr
	}
	return err
}

// openRegular opens path for reading (never blocking on a pipe swapped in)
// and checks that it is a regular file and that the name still leads to it the
// way it did when it was listed: a name listed as a regular file must not be a
// symbolic link now; a name listed as a link must still resolve to the file
// opened (compared by identity, not just by name). The file's current content
// is read: a session rewritten (renamed over) since the listing is fine.
func openRegular(path string, linked bool) (*os.File, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
	}
	check := os.Lstat
	if linked {
		check = os.Stat
	}
	if cfi, err := check(path); err != nil || !os.SameFile(fi, cfi) {
		// The name now is (or leads through) a link, or was swapped since Open.
		f.Close()
		if err == nil {
			err = errors.New("file was replaced while being opened")
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}
