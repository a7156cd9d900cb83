package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// walker lists a directory tree in lexical key order without following symbolic
// links. LocalStore lists with it, and so does BucketStore for file:// buckets,
// whose gocloud listing is in directory-walk order rather than key order.
type walker struct {
	root   *os.Root
	errorf func(op, key string, err error) error
	// fileblob: names on disk are escaped by gocloud's fileblob (unescape them),
	// "*.attrs" files are its metadata sidecars, and only regular files are objects.
	fileblob bool
	// keep, when set, says which keys (of anything but a directory) to report;
	// the sorted walk does not hold the names of the others while it sorts.
	keep func(key string) bool
	// irregular: with fileblob, also report what is not a regular file (a
	// symbolic link, a FIFO), with its Mode, instead of passing over it.
	irregular bool
	// internal, when set, is called with the key of each folder named
	// InternalDir below the root (see WithInternalFolders).
	internal func(key string)
}

// dirent is a directory entry as the directory reports it.
type dirent struct {
	name    string
	typ     fs.FileMode // type bits
	unknown bool        // the file system did not report the type
}

// entryStat is what a listing needs of lstat or fstat.
type entryStat struct {
	size  int64
	mtime time.Time
	mode  fs.FileMode
	// dev and ino name the file where the system says (0 elsewhere): a move
	// checks that what it moved is what it checked.
	dev, ino uint64
}

// list calls fn for each entry whose key starts with prefix. An error from fn is
// returned as is.
func (w *walker) list(ctx context.Context, prefix string, fn func(Entry) error) error {
	w.internal = internalFolders(ctx)
	err := w.walk(ctx, "", "", prefix, fn)
	if stop, ok := err.(*stopError); ok {
		return stop.err
	}
	return err
}

// stopError carries an error returned by the List callback up through walk.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }

// dirItem is a subdirectory walkUnordered lists after its parent's files.
type dirItem struct {
	name string // on disk
	key  string
}

// dirEntries is one directory's entries as the sorted walk holds them while it
// sorts: every name in one byte arena, addressed by offsets, so that a
// directory of millions of blobs is a few large blocks without pointers,
// which the garbage collector never scans (a slice of structs holding
// strings cost a migrate plan of 2 million blobs most of its CPU time in the
// collector).
type dirEntries struct {
	arena [][]byte // blocks of arenaBlock bytes: growing them copies nothing
	items []dirEntry
}

// arenaBlock is the size of a block of dirEntries' arena; an entry's names
// never straddle two (they are shorter than a block: see dirEntry).
const arenaBlock = 1 << 20

// dirEntry is one entry of dirEntries, 32 bytes: its name on disk at off in
// the arena (block off/arenaBlock) and, when it differs from the name, its
// sort key right after it (kn bytes; 0: the name itself). The sort key is the
// key's last element (the name, unescaped for fileblob) with a "/" after a
// directory's, since keys below it sort that way.
type dirEntry struct {
	// pre is the first 8 bytes of the sort key, big-endian and zero-padded:
	// most comparisons of a sort end there, without reading the arena, whose
	// millions of names lie far apart in memory. (A name holds no NUL, so the
	// padding sorts a shorter key first, as the bytes do.)
	pre   uint64
	off   int
	n, kn uint16 // a name is at most 255 bytes (NAME_MAX) on the file systems the walk reads
	dir   bool
}

// add appends an entry named name on disk whose key's last element is k; dir
// says it is a directory.
func (d *dirEntries) add(name, k string, dir bool) error {
	if dir {
		k += "/"
	}
	if len(name) > math.MaxUint16 || len(k) > math.MaxUint16 {
		return fmt.Errorf("a name of %d bytes", max(len(name), len(k)))
	}
	e := dirEntry{n: uint16(len(name)), dir: dir}
	var pre [8]byte
	copy(pre[:], k)
	e.pre = binary.BigEndian.Uint64(pre[:])
	if k != name {
		e.kn = uint16(len(k))
	}
	size := len(name) + int(e.kn)
	if len(d.arena) == 0 || len(d.arena[len(d.arena)-1])+size > arenaBlock {
		d.arena = append(d.arena, make([]byte, 0, arenaBlock))
	}
	last := &d.arena[len(d.arena)-1]
	e.off = (len(d.arena)-1)*arenaBlock + len(*last)
	*last = append(*last, name...)
	if e.kn != 0 {
		*last = append(*last, k...)
	}
	d.items = append(d.items, e)
	return nil
}

// name is e's name on disk.
func (d *dirEntries) name(e dirEntry) []byte {
	b, at := d.arena[e.off/arenaBlock], e.off%arenaBlock
	return b[at : at+int(e.n)]
}

// sortKey is e's sort key.
func (d *dirEntries) sortKey(e dirEntry) []byte {
	if e.kn == 0 {
		return d.name(e)
	}
	b, at := d.arena[e.off/arenaBlock], e.off%arenaBlock+int(e.n)
	return b[at : at+int(e.kn)]
}

// key is the last element of e's key.
func (d *dirEntries) key(e dirEntry) []byte {
	k := d.sortKey(e)
	if e.dir {
		k = k[:len(k)-1]
	}
	return k
}

// compare orders entries as their keys sort. All keys of one directory share
// its key in front, so their sort keys decide.
func (d *dirEntries) compare(a, b dirEntry) int {
	if a.pre != b.pre {
		return cmp.Compare(a.pre, b.pre)
	}
	return bytes.Compare(d.sortKey(a), d.sortKey(b))
}

// walk lists directory dirPath (on disk, "" for the root), whose key is dirKey.
func (w *walker) walk(ctx context.Context, dirPath, dirKey, prefix string, fn func(Entry) error) error {
	if err := ctx.Err(); err != nil {
		return w.errorf("list", prefix, err)
	}
	name := dirPath
	if name == "" {
		name = "."
	}
	f, err := w.root.Open(name)
	if err != nil {
		if dirPath != "" && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
			return nil // removed or replaced while listing
		}
		return w.errorf("list", dirKey, err)
	}
	// The directory stays open: its entries are stat'ed relative to it.
	defer f.Close()
	var des dirEntries
	err = readDirEach(f, func(de dirent) error {
		n := de.name
		if de.unknown {
			st, err := statAt(f, w.root, join(dirPath, n), n)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return &stopError{w.errorf("list", join(dirKey, n), err)}
			}
			de.typ = st.mode.Type()
		}
		k := n
		if w.fileblob {
			if de.typ.IsRegular() && strings.HasSuffix(n, ".attrs") {
				return nil
			}
			k = hexUnescape(n)
		}
		if dirPath == "" && k == InternalDir {
			return nil
		}
		if prefix != "" {
			key := join(dirKey, k)
			if de.typ.IsDir() && !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") ||
				!de.typ.IsDir() && !strings.HasPrefix(key, prefix) {
				return nil
			}
		}
		if w.internal != nil && dirPath != "" && k == InternalDir && de.typ.IsDir() {
			w.internal(join(dirKey, k))
		}
		if w.keep != nil && !de.typ.IsDir() && !w.keep(join(dirKey, k)) {
			return nil
		}
		if err := des.add(n, k, de.typ.IsDir()); err != nil {
			return &stopError{w.errorf("list", dirKey, err)}
		}
		return nil
	})
	if stop, ok := err.(*stopError); ok {
		return stop.err
	}
	if err != nil {
		return w.errorf("list", dirKey, err)
	}
	slices.SortFunc(des.items, des.compare)

	stats := w.statAhead(f, dirPath, &des)
	defer stats.stop()
	for i, it := range des.items {
		if err := ctx.Err(); err != nil {
			return w.errorf("list", prefix, err)
		}
		name, fi, err := stats.next(i)
		key := name
		if it.kn != 0 {
			key = string(des.key(it)) // unescaped, or a directory's
		}
		key = join(dirKey, key)
		p := join(dirPath, name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return w.errorf("list", key, err)
		}
		if fi.mode.IsDir() {
			if !it.dir {
				continue // replaced by a directory while listing
			}
			if err := w.walk(ctx, p, key, prefix, fn); err != nil {
				return err
			}
			continue
		}
		if it.dir && (!strings.HasPrefix(key, prefix) || w.keep != nil && !w.keep(key)) {
			continue // a directory replaced by a file while listing
		}
		e := Entry{Key: key, Size: fi.size, ModTime: fi.mtime, Mode: fi.mode}
		if w.fileblob {
			if !fi.mode.IsRegular() {
				if !w.irregular {
					continue
				}
			} else {
				e.Mode = 0
			}
		} else if fi.mode&fs.ModeSymlink != 0 {
			// Best effort: a link removed meanwhile keeps an empty Link.
			e.Link, _ = w.root.Readlink(p)
		}
		if err := fn(e); err != nil {
			return &stopError{err}
		}
	}
	return nil
}

// statBatch is how many entries of a directory one describing goroutine
// lstat's; the sorted walk describes a directory of fewer itself.
const statBatch = 1024

// statAheadBatches is how many batches are described ahead of the walk's
// emitting, each by a goroutine of its own: on a directory of millions of
// blobs the lstat of each entry, one after the other, would set the pace.
const statAheadBatches = 4

// stated is one entry's lstat, as statAt returns it.
type stated struct {
	st  entryStat
	err error
}

// describer lstat's entries of one open directory in batches, each by a
// goroutine of its own, and hands the batches back in the order they were
// given. Both walks describe through it.
type describer struct {
	w       *walker
	f       *os.File
	dirPath string
	ahead   []describing // oldest first
}

type describing struct {
	des []dirent
	out chan []stated
}

// add starts describing des.
func (d *describer) add(des []dirent) {
	b := describing{des: des, out: make(chan []stated, 1)}
	go func() {
		out := make([]stated, len(b.des))
		for i, de := range b.des {
			out[i].st, out[i].err = statAt(d.f, d.w.root, join(d.dirPath, de.name), de.name)
		}
		b.out <- out
	}()
	d.ahead = append(d.ahead, b)
}

// full reports whether statAheadBatches batches are being described.
func (d *describer) full() bool { return len(d.ahead) >= statAheadBatches }

// next waits for the oldest batch and returns it with its lstats.
func (d *describer) next() ([]dirent, []stated) {
	b := d.ahead[0]
	d.ahead = d.ahead[1:]
	return b.des, <-b.out
}

// wait waits for every batch not taken yet: its goroutine lstat's relative to
// the directory, which must stay open until then.
func (d *describer) wait() {
	for _, b := range d.ahead {
		<-b.out
	}
	d.ahead = nil
}

// statsAhead hands out the lstats of a sorted directory's entries in order,
// described up to statAheadBatches batches ahead.
type statsAhead struct {
	d    describer
	des  *dirEntries
	sent int      // entries handed to d
	cur  []dirent // the batch being handed out, from entry base
	res  []stated // and its lstats
	base int
}

func (w *walker) statAhead(f *os.File, dirPath string, des *dirEntries) *statsAhead {
	return &statsAhead{d: describer{w: w, f: f, dirPath: dirPath}, des: des}
}

// next is the name on disk and the lstat of entry i; entries are asked for
// in order.
func (s *statsAhead) next(i int) (string, entryStat, error) {
	if len(s.des.items) <= statBatch {
		name := string(s.des.name(s.des.items[i]))
		st, err := statAt(s.d.f, s.d.w.root, join(s.d.dirPath, name), name)
		return name, st, err
	}
	if i-s.base >= len(s.cur) {
		for s.sent < len(s.des.items) && !s.d.full() {
			batch := s.des.items[s.sent:min(s.sent+statBatch, len(s.des.items))]
			des := make([]dirent, len(batch))
			for j, it := range batch {
				des[j].name = string(s.des.name(it))
			}
			s.d.add(des)
			s.sent += len(batch)
		}
		s.base += len(s.cur)
		s.cur, s.res = s.d.next()
	}
	r := s.res[i-s.base]
	return s.cur[i-s.base].name, r.st, r.err
}

// stop waits for the batches still being described, before the directory
// closes (its close is deferred before stop).
func (s *statsAhead) stop() { s.d.wait() }

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// hexUnescape reverses the "__0x<hex>__" escaping of gocloud.dev/internal/escape
// (HexUnescape), which fileblob applies to file names.
func hexUnescape(s string) string {
	if !strings.Contains(s, "__0x") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "__0x") {
			j := i + 4
			for j < len(s) && s[j] != '_' {
				j++
			}
			if strings.HasPrefix(s[j:], "__") {
				if r, err := strconv.ParseInt(s[i+4:j], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i = j + 2
					continue
				}
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// walkUnordered lists like walk but in the order the directory returns its
// entries, emitting each as soon as it is read and described; with describe
// false it does not describe regular files (Size -1). Entries to describe are
// lstat'ed in batches by goroutines, up to statAheadBatches batches ahead of
// the emitting, so that a folder of millions of blobs is not described one
// lstat after the other. Subdirectories are listed after their parent's files.
func (w *walker) walkUnordered(ctx context.Context, dirPath, dirKey, prefix string, describe bool, fn func(Entry) error) error {
	name := dirPath
	if name == "" {
		name = "."
	}
	f, err := w.root.Open(name)
	if err != nil {
		if dirPath != "" && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
			return nil
		}
		return w.errorf("list", dirKey, err)
	}
	defer f.Close()
	var subdirs []dirItem
	// emit reports one entry, described by st (or not, for a regular file
	// that need not be).
	emit := func(de dirent, st entryStat, described bool) error {
		key := join(dirKey, de.name)
		if described {
			de.typ = st.mode.Type()
		}
		switch {
		case de.typ.IsDir():
			if strings.HasPrefix(key+"/", prefix) || strings.HasPrefix(prefix, key+"/") {
				if w.internal != nil && dirPath != "" && de.name == InternalDir {
					w.internal(key)
				}
				subdirs = append(subdirs, dirItem{name: de.name, key: key})
			}
			return nil
		case !strings.HasPrefix(key, prefix):
			return nil
		case !described:
			return fn(Entry{Key: key, Size: -1})
		}
		e := Entry{Key: key, Size: st.size, ModTime: st.mtime, Mode: st.mode}
		if st.mode&fs.ModeSymlink != 0 {
			e.Link, _ = w.root.Readlink(join(dirPath, de.name))
		}
		return fn(e)
	}
	d := describer{w: w, f: f, dirPath: dirPath}
	defer d.wait()
	var cur []dirent
	emitOldest := func() error {
		des, res := d.next()
		for i, r := range res {
			de := des[i]
			if r.err != nil {
				if errors.Is(r.err, fs.ErrNotExist) {
					continue
				}
				return w.errorf("list", join(dirKey, de.name), r.err)
			}
			if err := emit(de, r.st, true); err != nil {
				return err
			}
		}
		return nil
	}
	err = readDirEach(f, func(de dirent) error {
		if err := ctx.Err(); err != nil {
			return w.errorf("list", prefix, err)
		}
		if dirPath == "" && de.name == InternalDir {
			return nil
		}
		if !de.unknown && de.typ.IsRegular() && !describe {
			return emit(de, entryStat{}, false)
		}
		if cur = append(cur, de); len(cur) == statBatch {
			if d.full() {
				if err := emitOldest(); err != nil {
					return err
				}
			}
			d.add(cur)
			cur = nil
		}
		return nil
	})
	if err == nil && len(cur) > 0 {
		d.add(cur)
	}
	for err == nil && len(d.ahead) > 0 {
		err = emitOldest()
	}
	if err != nil {
		return err
	}
	for _, d := range subdirs {
		if err := w.walkUnordered(ctx, join(dirPath, d.name), d.key, prefix, describe, fn); err != nil {
			return err
		}
	}
	return nil
}
