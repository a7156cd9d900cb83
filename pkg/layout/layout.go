// Package layout knows where the agent runtimes mediactl serves keep their
// blobs and sessions, and how their sessions name those blobs.
//
// A [Layout] is what [Find] found of a runtime under one root: the blob stores
// that exist there (with the earlier locations of their files, when the
// runtime moved them without rewriting its references), the session sources,
// the directories relative references are relative to, the home directory that
// "~/" stands for, the runtime's own directories (whose files are neither blobs
// nor "outside" noise), and the companion rule of stores whose files come in
// pairs. [Layout.Resolver] turns all of that into the lexical resolver of one
// store.
//
// The presets follow what the runtimes really write:
//
//   - forge (root: the agent's work directory, the one holding .forge/): stores
//     .forge/files/inbound and .forge/files/generated; sessions .forge/sessions;
//     references are absolute, relative to the root (".forge/files/…") or to its
//     parent ("work/.forge/files/…"); the reports and screenshots forge's tools
//     write directly in .forge/files are the runtime's own files.
//   - coffer (root: ~/.coffer): the legacy layout (channel-media/, coffer.db)
//     and the upgraded one (content/channel-media/, content/chat-media/,
//     runs.db), either or both. The upgrade moves channel-media to
//     content/channel-media without rewriting rows, so the old directory is an
//     alias of the new one. Web uploads in content/chat-media have an <id>.json
//     sidecar beside <id>.<ext> that lives and dies with its upload.
//
// Finding a layout only looks at which directories and files exist; it reads
// no blob and no session.
package layout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/ref"
)

// Names of the known layouts.
const (
	Forge  = "forge"
	Coffer = "coffer"
)

// Names lists the known layouts.
var Names = []string{Forge, Coffer}

// Store is one blob store of a layout.
type Store struct {
	// Dir is the store directory, absolute and clean.
	Dir string `json:"dir"`
	// Aliases are earlier locations of the same files: a reference to a path
	// below one names the file of the same key in Dir.
	Aliases []string `json:"aliases,omitempty"`
	// Sidecars is set for a store whose files <id>.<ext> have a companion
	// <id>.json (coffer's web uploads): see [Layout.Companion].
	Sidecars bool `json:"sidecars,omitempty"`
}

// Layout is a runtime's stores and sessions under one root.
type Layout struct {
	// Name is the layout's name, "forge" or "coffer".
	Name string `json:"name"`
	// Root is the directory the layout was found in, absolute.
	Root string `json:"root"`
	// Stores are the blob stores that exist, in the order references are
	// resolved against them.
	Stores []Store `json:"stores"`
	// Sessions are the session sources that exist, as sessions.Open takes them.
	Sessions []string `json:"sessions"`
	// Bases are the directories relative references are relative to.
	Bases []string `json:"bases,omitempty"`
	// Home is the directory "~/" stands for; empty when unknown.
	Home string `json:"home,omitempty"`
	// Runtime are the runtime's own directories: a file below one that is in
	// no store is the runtime's, never acted on.
	Runtime []string `json:"runtime,omitempty"`
	// Reads are the directories below which the runtime reads a session's
	// media back, as local paths, when it replays the session: forge reads
	// only files inside .forge/files, coffer any local file ("/"). Neither
	// reads a bucket URL: a reference rewritten into one breaks the replay.
	Reads []string `json:"reads"`
	// Vars are the layout's placeholders a rewrite template may use, by
	// name without braces: forge's files_dir.
	Vars map[string]string `json:"vars,omitempty"`

	mu       sync.Mutex
	owners   map[string]string // sidecar id → the upload's key, from the last listing
	listedAt time.Time
	dirTime  time.Time // the folder's mtime before that listing
}

// UnknownError is returned by Find for a layout name it does not know.
type UnknownError struct {
	Name string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown layout %q (known: %s)", e.Name, strings.Join(Names, ", "))
}

// NotFoundError is returned by Find when the root lacks what the layout needs.
type NotFoundError struct {
	Layout string
	Root   string
	// What is missing: "blob store" or "session source".
	What string
	// Looked are the paths looked for, none of which exists.
	Looked []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no %s of the %s layout in %s (none of %s exists)", e.What, e.Layout, e.Root, strings.Join(e.Looked, ", "))
}

// ErrNoHome is returned (wrapped) by Find for coffer without a root when the
// user's home directory is unknown.
var ErrNoHome = errors.New("no home directory")

// Find returns the stores and session sources of the named layout that exist
// under root. An empty root means the current directory for forge and
// ~/.coffer for coffer.
func Find(name, root string) (*Layout, error) {
	switch name {
	case Forge:
		return findForge(root)
	case Coffer:
		return findCoffer(root)
	}
	return nil, &UnknownError{Name: name}
}

// ForReplay returns what the named layout's runtime reads on replay (Root,
// Reads, Vars, Home) under root, without its stores and sessions: a pod that
// replays conversations from migrated copies has the sessions and the mount,
// not the local stores. Only the folder the runtime reads must exist (forge's
// files folder, coffer's root).
func ForReplay(name, root string) (*Layout, error) {
	var (
		l   *Layout
		err error
	)
	switch name {
	case Forge:
		l, err = forgeBase(root)
	case Coffer:
		l, err = cofferBase(root)
	default:
		return nil, &UnknownError{Name: name}
	}
	if err != nil {
		return nil, err
	}
	need := l.Root
	if name == Forge {
		need = l.Runtime[0]
	}
	if !isDir(need) {
		return nil, &NotFoundError{Layout: name, Root: l.Root, What: "folder the runtime reads", Looked: []string{need}}
	}
	return l, nil
}

func findForge(root string) (*Layout, error) {
	l, err := forgeBase(root)
	if err != nil {
		return nil, err
	}
	files := l.Runtime[0]
	root = l.Root
	var looked []string
	for _, d := range []string{"inbound", "generated"} {
		dir := filepath.Join(files, d)
		looked = append(looked, dir)
		if isDir(dir) {
			l.Stores = append(l.Stores, Store{Dir: dir})
		}
	}
	if len(l.Stores) == 0 {
		return nil, &NotFoundError{Layout: Forge, Root: root, What: "blob store", Looked: looked}
	}
	sess := filepath.Join(root, ".forge", "sessions")
	if !isDir(sess) {
		return nil, &NotFoundError{Layout: Forge, Root: root, What: "session source", Looked: []string{sess}}
	}
	l.Sessions = []string{sess}
	return l, nil
}

// forgeBase is the forge layout under root before its stores are looked for.
func forgeBase(root string) (*Layout, error) {
	if root == "" {
		root = "."
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("forge layout: %w", err)
	}
	files := filepath.Join(root, ".forge", "files")
	l := &Layout{
		Name: Forge,
		Root: root,
		// forge runs in the parent of its work directory as often as in it:
		// "work/.forge/files/…" is relative to the parent.
		Bases:   []string{root, filepath.Dir(root)},
		Runtime: []string{files},
		// forge's RehydrateMedia opens only files inside its files dir and
		// refuses every URI.
		Reads: []string{files},
		Vars:  map[string]string{"files_dir": files},
	}
	return l, nil
}

func findCoffer(root string) (*Layout, error) {
	l, err := cofferBase(root)
	if err != nil {
		return nil, err
	}
	root = l.Root
	legacy := filepath.Join(root, "channel-media")
	channel := filepath.Join(root, "content", "channel-media")
	chat := filepath.Join(root, "content", "chat-media")
	if isDir(legacy) {
		l.Stores = append(l.Stores, Store{Dir: legacy})
	}
	if isDir(channel) {
		// coffer's upgrade moved the files here and left the rows naming legacy.
		l.Stores = append(l.Stores, Store{Dir: channel, Aliases: []string{legacy}})
	}
	if isDir(chat) {
		l.Stores = append(l.Stores, Store{Dir: chat, Sidecars: true})
	}
	if len(l.Stores) == 0 {
		return nil, &NotFoundError{Layout: Coffer, Root: root, What: "blob store", Looked: []string{legacy, channel, chat}}
	}
	var looked []string
	for _, db := range []string{"runs.db", "coffer.db"} {
		p := filepath.Join(root, db)
		looked = append(looked, p)
		// Only a name that is not there at all is passed over. One that is
		// there but cannot be reached (a link to a volume not mounted, an
		// error reading the folder) is a source all the same: reading it
		// then fails and the run reads less than everything, where without
		// it gc would remove the blobs only that database's sessions name.
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if fi, err := os.Stat(p); err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("coffer layout: session database %s is not a regular file", p)
		}
		l.Sessions = append(l.Sessions, "sqlite:"+p)
	}
	if len(l.Sessions) == 0 {
		return nil, &NotFoundError{Layout: Coffer, Root: root, What: "session source", Looked: looked}
	}
	return l, nil
}

// cofferBase is the coffer layout under root (default ~/.coffer) before its
// stores are looked for.
func cofferBase(root string) (*Layout, error) {
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("coffer layout: %w to find .coffer in: %v", ErrNoHome, err)
		}
		root = filepath.Join(home, ".coffer")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("coffer layout: %w", err)
	}
	// coffer opens an attachment's path if it is a file (Path(p).is_file()).
	l := &Layout{Name: Coffer, Root: root, Bases: []string{root}, Reads: []string{string(filepath.Separator)}}
	if filepath.Base(root) == ".coffer" {
		// coffer writes "~/.coffer/…" in its tool calls.
		l.Home = filepath.Dir(root)
	}
	return l, nil
}

// StoreDirs are the directories of the layout's stores, in order.
func (l *Layout) StoreDirs() []string {
	if l == nil {
		return nil
	}
	out := make([]string, len(l.Stores))
	for i, s := range l.Stores {
		out[i] = s.Dir
	}
	return out
}

// Resolver is the resolver of the local store at dir under this layout: the
// store's aliases (and its directory with symlinks resolved), the layout's
// bases, home and runtime directories, and its other stores. dir need not be
// one of the layout's stores (an explicit store given beside a layout); then
// it has no alias. A nil layout gives the plain resolver of dir.
func (l *Layout) Resolver(dir string) *ref.Resolver {
	dir = filepath.Clean(dir)
	spec := ref.Local{Dir: dir, Aliases: realDirs(dir)}
	if l == nil {
		return ref.NewLocal(spec)
	}
	spec.Bases, spec.Home, spec.Runtime = l.Bases, l.Home, l.Runtime
	for _, s := range l.Stores {
		if s.Dir == dir {
			for _, a := range s.Aliases {
				spec.Aliases = append(spec.Aliases, a)
				spec.Aliases = append(spec.Aliases, realDirs(a)...)
			}
			continue
		}
		spec.Others = append(spec.Others, s.Dir)
	}
	return ref.NewLocal(spec)
}

// Companion says whether key, a key of the layout's store with sidecars
// (coffer's content/chat-media), is the sidecar "<id>.json" of an upload
// "<id>.<ext>" there, and returns the upload's key: the sidecar is kept while
// its upload is, and goes with it. It answers from a listing of that store
// directory, listed again when a sidecar's upload is not in the last listing.
// When that directory cannot be listed it cannot tell, and says so with an
// empty owner and ok: a sidecar whose upload is unknown must not be taken for
// an orphan (see retain.MarkOptions.Companion). A layout without such a store
// (and a nil layout) has no companions.
func (l *Layout) Companion(key string) (owner string, ok bool) {
	if l == nil {
		return "", false
	}
	id, isSidecar := strings.CutSuffix(key, ".json")
	if !isSidecar || id == "" || strings.ContainsAny(id, "/\\\x00") {
		return "", false
	}
	i := slices.IndexFunc(l.Stores, func(s Store) bool { return s.Sidecars })
	if i < 0 {
		return "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if owner, ok := l.owners[id]; ok {
		return owner, true
	}
	// An upload and its sidecar may have arrived after the last listing: list
	// again when the folder changed since (or changed so shortly before that a
	// coarse timestamp would not tell), not for every orphan sidecar.
	dir := l.Stores[i].Dir
	fi, err := os.Stat(dir)
	if err != nil {
		return "", true // cannot tell
	}
	if l.owners != nil && fi.ModTime().Equal(l.dirTime) && l.listedAt.Sub(l.dirTime) > 2*time.Second {
		return "", false
	}
	owners, err := uploads(dir)
	if err != nil {
		return "", true // cannot tell; listed again at the next sidecar
	}
	l.owners, l.listedAt, l.dirTime = owners, time.Now(), fi.ModTime()
	owner, ok = l.owners[id]
	return owner, ok
}

// uploads maps every id with a sidecar "<id>.json" in dir to its upload
// "<id>.<ext>" (the first by name, should there be several).
func uploads(dir string) (map[string]string, error) {
	owners := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(entries))
	for _, e := range entries {
		if e.Type().IsRegular() {
			names[e.Name()] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		for dot := strings.IndexByte(n, '.'); dot > 0; {
			id := n[:dot]
			if n != id+".json" && names[id+".json"] {
				if _, seen := owners[id]; !seen {
					owners[id] = n
				}
			}
			next := strings.IndexByte(n[dot+1:], '.')
			if next < 0 {
				break
			}
			dot += 1 + next
		}
	}
	return owners, nil
}

// realDirs is dir with symlinks resolved, when that differs: references may
// use either spelling.
func realDirs(dir string) []string {
	if r, err := filepath.EvalSymlinks(dir); err == nil && r != dir {
		return []string{r}
	}
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// ReadsPath reports whether the runtime reads a reference of the text p on
// replay: an absolute local path, clean, below one of Reads.
func (l *Layout) ReadsPath(p string) bool {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return false
	}
	for _, d := range l.Reads {
		if d == string(filepath.Separator) || p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
