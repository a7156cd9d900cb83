//go:build unix

package sessions

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/mediactl/mediactl/pkg/ref"
)

// filesRewriter rewrites the session files of a folder or a single file; see
// OpenRewriter.
//
// Files are selected by the source's own Walk (same selection, same places, links
// skipped). Every file is then reached again through directory descriptors: the
// top folder as the operator named it (it may be a link), every folder below
// opened with O_NOFOLLOW, and the file itself opened, created, swapped and
// removed relative to its folder's descriptor with O_NOFOLLOW, so that a link
// swapped in after the listing is never followed.
type filesRewriter struct {
	src *filesSource

	// noExchange is set once renameat2(RENAME_EXCHANGE) was refused here.
	noExchange atomic.Bool

	// beforeInstall, when set (by tests), is called after the temporary file is
	// written and Prepare returned, right before it is installed; afterExchange
	// right after the exchange, before what came out is examined.
	beforeInstall func(dir, name string)
	afterExchange func(dir, name string)
}

func newFilesRewriter(src *filesSource) Rewriter { return &filesRewriter{src: src} }

func (w *filesRewriter) String() string { return w.src.spec }
func (w *filesRewriter) Close() error   { return nil }

func (w *filesRewriter) Rewrite(ctx context.Context, edit Edit, opts RewriteOptions) (RewriteCounts, error) {
	r := newRewriteRun(w.src.spec, edit, opts)
	root := w.src.spec
	fi, err := statRoot(root)
	if err != nil {
		return r.result(err)
	}
	if !fi.IsDir() {
		// A spec naming a file: its folder is followed as named, the file never.
		dirPath := filepath.Dir(root)
		fd, err := unix.Open(dirPath, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return r.result(&os.PathError{Op: "open", Path: dirPath, Err: err})
		}
		defer unix.Close(fd)
		d := &fileDir{fd: fd, path: dirPath}
		return r.result(w.rewriteFile(ctx, r, d, filepath.Base(root), w.src.place(root)))
	}
	rootFD, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return r.result(&os.PathError{Op: "open", Path: root, Err: err})
	}
	dirs := &dirCache{root: root, rootFD: rootFD, rel: ".", fd: -1}
	defer dirs.close()
	counts, err := w.src.walkRewritable(ctx, func(it Item) error {
		if it.Err != nil {
			r.fail(it.Place, it.Err)
			return nil
		}
		path := it.Place.Document
		rel, rerr := filepath.Rel(root, path)
		if rerr != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			r.fail(it.Place, fmt.Errorf("not below %s", root)) // cannot happen: Walk lists below root
			return nil
		}
		d, derr := dirs.open(filepath.Dir(rel))
		if derr != nil {
			r.fail(it.Place, derr)
			return nil
		}
		return w.rewriteFile(ctx, r, d, filepath.Base(rel), it.Place)
	})
	r.c.Skipped = counts.Skipped
	return r.result(err)
}

// fileDir is an open folder: its descriptor and its path, for messages.
type fileDir struct {
	fd   int
	path string
}

func (d *fileDir) join(name string) string { return filepath.Join(d.path, name) }

// syncInstalled syncs the folder after a new version was renamed or swapped
// into it: until then the rename may not survive a crash.
func (d *fileDir) syncInstalled() error {
	if err := unix.Fsync(d.fd); err != nil {
		return fmt.Errorf("the new version is in place but the folder could not be synced, it may not survive a crash: %w", &os.PathError{Op: "fsync", Path: d.path, Err: err})
	}
	return nil
}

// dirCache keeps the descriptor of the folder of the last file: Walk goes folder
// by folder, so consecutive files mostly share it.
type dirCache struct {
	root   string
	rootFD int
	rel    string // folder of fd, relative to root
	fd     int    // -1 when none besides rootFD is open
}

// open returns the folder rel (relative to the root), reached component by
// component without following any link.
func (c *dirCache) open(rel string) (*fileDir, error) {
	if rel == "." {
		return &fileDir{fd: c.rootFD, path: c.root}, nil
	}
	if c.fd >= 0 && c.rel == rel {
		return &fileDir{fd: c.fd, path: filepath.Join(c.root, rel)}, nil
	}
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	fd := c.rootFD
	walked := c.root
	for _, comp := range strings.Split(filepath.ToSlash(rel), "/") {
		walked = filepath.Join(walked, comp)
		next, err := unix.Openat(fd, comp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if fd != c.rootFD {
			unix.Close(fd)
		}
		if err != nil {
			if err == unix.ELOOP || err == unix.ENOTDIR {
				err = errors.New("not a folder any more (replaced by a link or a file since it was listed)")
			}
			return nil, &os.PathError{Op: "open", Path: walked, Err: err}
		}
		fd = next
	}
	c.rel, c.fd = rel, fd
	return &fileDir{fd: fd, path: filepath.Join(c.root, rel)}, nil
}

func (c *dirCache) close() {
	if c.fd >= 0 {
		unix.Close(c.fd)
	}
	unix.Close(c.rootFD)
}

// installResult is how one attempt to install a new version ended.
type installResult int

const (
	installed  installResult = iota // the new version is in place, durably
	changed                         // the file changed since it was read: nothing installed
	gone                            // the file was removed since it was read
	unitFailed                      // a problem confined to this file, already recorded
)

// rewriteFile reads, edits and installs one file, retrying while it changes under
// us. It returns only errors that stop the whole rewrite.
func (w *filesRewriter) rewriteFile(ctx context.Context, r *rewriteRun, d *fileDir, name string, place ref.Place) error {
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if attempt > 0 {
			r.c.Retried++
		}
		old, st, err := readFileAt(d, name)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				r.c.Gone++
				return nil
			}
			r.fail(place, err)
			return nil
		}
		if attempt == 0 {
			r.c.Units++
		}
		nw, ok, err := r.callEdit(place, old)
		if err != nil || !ok {
			return err
		}
		res, err := w.install(r, d, name, place, old, nw, st)
		if err != nil {
			return err
		}
		switch res {
		case installed, unitFailed:
			return nil
		case gone:
			r.c.Gone++
			return nil
		}
		if attempt >= r.retries {
			r.conflict(place, attempt+1)
			return nil
		}
	}
}

// readFileAt reads a regular file of folder d, never through a link.
func readFileAt(d *fileDir, name string) ([]byte, *unix.Stat_t, error) {
	path := d.join(name)
	// O_NONBLOCK: a FIFO swapped in since the listing must not block the open.
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP {
			return nil, nil, &os.PathError{Op: "open", Path: path, Err: errors.New("is a symbolic link: never read nor written through")}
		}
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, err // names the path
	}
	return b, &st, nil
}

// tempName is the name of the temporary file for name: hidden, and ending in
// .tmp, so that session readers (forge, Walk) skip it.
func tempName(name string) string {
	var rnd [6]byte
	rand.Read(rnd[:])
	const max = 255 - len("..") - 2*len(rnd) - len(".tmp")
	if len(name) > max {
		name = name[:max]
	}
	return "." + name + "." + hex.EncodeToString(rnd[:]) + ".tmp"
}

// install writes nw to a temporary file beside name and puts it in name's place
// if name still holds old. It returns an error only when the rewrite must stop
// (Prepare failed).
func (w *filesRewriter) install(r *rewriteRun, d *fileDir, name string, place ref.Place, old, nw []byte, st *unix.Stat_t) (installResult, error) {
	path := d.join(name)
	tmp, tmpStat, err := writeTemp(d, name, nw, st)
	if err != nil {
		r.fail(place, fmt.Errorf("writing the new version failed, the file is unchanged: %w", err))
		return unitFailed, nil
	}
	removeTemp := func() { unix.Unlinkat(d.fd, tmp, 0) }
	ch := Change{Place: place, Old: old, New: nw}
	if err := r.prepare(ch); err != nil {
		removeTemp()
		return unitFailed, err
	}
	if w.beforeInstall != nil {
		w.beforeInstall(d.path, name)
	}

	if !w.noExchange.Load() {
		err := exchange(d.fd, tmp, name)
		switch {
		case err == nil:
			if w.afterExchange != nil {
				w.afterExchange(d.path, name)
			}
			return w.checkExchange(r, d, name, tmp, place, ch, tmpStat)
		case errors.Is(err, errNoExchange):
			w.noExchange.Store(true)
		case err == unix.ENOENT:
			removeTemp()
			return gone, nil
		default:
			removeTemp()
			r.fail(place, &os.LinkError{Op: "exchange", Old: d.join(tmp), New: path, Err: err})
			return unitFailed, nil
		}
	}

	// No atomic exchange here: compare, then rename. A writer that replaces the
	// file between the two loses its version; the exchange closes that window.
	cur, _, err := readFileAt(d, name)
	if err != nil || !bytes.Equal(cur, old) {
		removeTemp()
		if errors.Is(err, unix.ENOENT) {
			return gone, nil
		}
		return changed, nil
	}
	if openElsewhere(d.fd, name) {
		removeTemp()
		r.inUse(place)
		return unitFailed, nil
	}
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		removeTemp()
		r.fail(place, &os.LinkError{Op: "rename", Old: d.join(tmp), New: path, Err: err})
		return unitFailed, nil
	}
	if err := d.syncInstalled(); err != nil {
		r.fail(place, err)
		return unitFailed, nil
	}
	r.committed(ch)
	return installed, nil
}

// checkExchange checks, after the new version and the original were swapped, that
// what came out is the original as read. If another writer replaced or changed
// the file in between, the swap is undone and the caller re-reads.
func (w *filesRewriter) checkExchange(r *rewriteRun, d *fileDir, name, tmp string, place ref.Place, ch Change, tmpStat *unix.Stat_t) (installResult, error) {
	out, _, err := readFileAt(d, tmp)
	if err == nil && bytes.Equal(out, ch.Old) && openElsewhere(d.fd, tmp) {
		// A writer holds the old version open (a runtime appending to its
		// JSON Lines file): what it writes next would go into a file no
		// name leads to any more. Put it back; a later run rewrites it.
		res, err := w.undoExchange(r, d, name, tmp, place, tmpStat)
		if err != nil || res != changed {
			return res, err
		}
		r.inUse(place)
		return unitFailed, nil
	}
	if err == nil && bytes.Equal(out, ch.Old) {
		unlinkErr := unix.Unlinkat(d.fd, tmp, 0)
		if err := d.syncInstalled(); err != nil {
			r.fail(place, err)
			return unitFailed, nil
		}
		r.committed(ch)
		if unlinkErr != nil {
			// Only the old version is left behind, under a name readers skip.
			r.fail(place, fmt.Errorf("rewritten, but the old version could not be removed: %w", &os.PathError{Op: "remove", Path: d.join(tmp), Err: unlinkErr}))
		}
		return installed, nil
	}
	// Someone else's version came out: swap it back.
	return w.undoExchange(r, d, name, tmp, place, tmpStat)
}

// maxUndoSwaps bounds undoExchange against a writer that never pauses.
const maxUndoSwaps = 100

// undoExchange puts back at name the version that the exchange moved to tmp, or a
// newer one: a writer may replace name again at any moment, always with a newer
// version, and never touches tmp. Each swap puts the newest version known at name
// and takes out what name held; when that is what the previous swap put there, no
// writer came in between, so name holds the newest version, and what is at tmp
// (our version, or one its writer has already replaced) can go.
func (w *filesRewriter) undoExchange(r *rewriteRun, d *fileDir, name, tmp string, place ref.Place, ours *unix.Stat_t) (installResult, error) {
	path := d.join(name)
	var atTmp unix.Stat_t // what the next swap puts at name
	if err := unix.Fstatat(d.fd, tmp, &atTmp, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		r.fail(place, fmt.Errorf("another writer changed the file while it was installed, and its version at %s cannot be examined (%v): the rewritten version is at %s; put the other one back by hand", d.join(tmp), err, path))
		return unitFailed, nil
	}
	expect := statID(ours) // what name should hold
	for range maxUndoSwaps {
		if err := exchange(d.fd, tmp, name); err != nil {
			r.fail(place, fmt.Errorf("another writer changed the file while it was installed, and swapping its version back failed (%v): its version is at %s, the other at %s; keep the right one by hand", err, d.join(tmp), path))
			return unitFailed, nil
		}
		placed := statID(&atTmp)
		if err := unix.Fstatat(d.fd, tmp, &atTmp, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			r.fail(place, fmt.Errorf("another writer changed the file while it was installed; its version is back at %s, but %s cannot be examined (%v): remove it if it is not newer", path, d.join(tmp), err))
			return unitFailed, nil
		}
		if statID(&atTmp) == expect {
			unix.Unlinkat(d.fd, tmp, 0)
			return changed, nil
		}
		// A newer version came out: it goes back at name next.
		expect = placed
	}
	r.fail(place, fmt.Errorf("another writer kept replacing the file while its version was being put back: %s and %s hold two of its versions; keep the newer one", path, d.join(tmp)))
	return unitFailed, nil
}

// fileID identifies a file.
type fileID struct {
	dev uint64
	ino uint64
}

func statID(st *unix.Stat_t) fileID { return fileID{uint64(st.Dev), uint64(st.Ino)} }

// writeTemp writes content to a new temporary file in d with the mode (and, for
// root, the owner) of st, and syncs it. On failure the temporary file is removed.
func writeTemp(d *fileDir, name string, content []byte, st *unix.Stat_t) (string, *unix.Stat_t, error) {
	var tmp string
	var fd int
	var err error
	for range 10 {
		tmp = tempName(name)
		fd, err = unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != unix.EEXIST {
			break
		}
	}
	if err != nil {
		return "", nil, &os.PathError{Op: "create", Path: d.join(tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.join(tmp))
	fail := func(err error) (string, *unix.Stat_t, error) {
		f.Close()
		unix.Unlinkat(d.fd, tmp, 0)
		return "", nil, err
	}
	var ts unix.Stat_t
	if err := unix.Fstat(fd, &ts); err != nil {
		return fail(&os.PathError{Op: "stat", Path: d.join(tmp), Err: err})
	}
	if ts.Uid != st.Uid || ts.Gid != st.Gid {
		// Root can give the file its owner back; another user only its group,
		// if a member. A session whose owner would change is not rewritten: its
		// runtime might no longer read it.
		if err := unix.Fchown(fd, int(st.Uid), int(st.Gid)); err != nil {
			return fail(fmt.Errorf("cannot keep its owner (uid %d, gid %d) running as uid %d: %w; run as that user or as root",
				st.Uid, st.Gid, os.Geteuid(), &os.PathError{Op: "chown", Path: d.join(tmp), Err: err}))
		}
	}
	// After chown, which clears set-id bits.
	if err := unix.Fchmod(fd, uint32(st.Mode)&0o7777); err != nil {
		return fail(&os.PathError{Op: "chmod", Path: d.join(tmp), Err: err})
	}
	if _, err := f.Write(content); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	return tmp, &ts, nil
}

// errNoExchange is returned by exchange where the system or the file system does
// not swap files atomically.
var errNoExchange = errors.New("atomic exchange not supported")
