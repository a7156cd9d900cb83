package store

import (
	"context"
	"errors"
	"io/fs"
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
}

// list calls fn for each entry whose key starts with prefix. An error from fn is
// returned as is.
func (w *walker) list(ctx context.Context, prefix string, fn func(Entry) error) error {
	err := w.walk(ctx, "", "", prefix, fn)
	if stop, ok := err.(*stopError); ok {
		return stop.err
	}
	return err
}

// stopError carries an error returned by the List callback up through walk.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }

type dirItem struct {
	name string // on disk
	key  string
	dir  bool
	typ  fs.FileMode // type bits from the directory entry
	sort string      // key, or key+"/" for a directory: keys below it sort that way
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
	des, err := readDir(f)
	if err != nil {
		return w.errorf("list", dirKey, err)
	}
	items := make([]dirItem, 0, len(des))
	for _, de := range des {
		n := de.name
		if de.unknown {
			st, err := statAt(f, w.root, join(dirPath, n), n)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return w.errorf("list", join(dirKey, n), err)
			}
			de.typ = st.mode.Type()
		}
		k := n
		if w.fileblob {
			if de.typ.IsRegular() && strings.HasSuffix(n, ".attrs") {
				continue
			}
			k = hexUnescape(n)
		}
		if dirPath == "" && k == InternalDir {
			continue
		}
		key := join(dirKey, k)
		if de.typ.IsDir() {
			if !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				continue
			}
			items = append(items, dirItem{name: n, key: key, dir: true, sort: key + "/"})
			continue
		}
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		items = append(items, dirItem{name: n, key: key, sort: key, typ: de.typ})
	}
	des = nil
	slices.SortFunc(items, func(a, b dirItem) int { return strings.Compare(a.sort, b.sort) })

	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return w.errorf("list", prefix, err)
		}
		p := join(dirPath, it.name)
		fi, err := statAt(f, w.root, p, it.name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return w.errorf("list", it.key, err)
		}
		if fi.mode.IsDir() {
			if !it.dir {
				continue // replaced by a directory while listing
			}
			if err := w.walk(ctx, p, it.key, prefix, fn); err != nil {
				return err
			}
			continue
		}
		if it.dir && !strings.HasPrefix(it.key, prefix) {
			continue // a directory replaced by a file while listing
		}
		e := Entry{Key: it.key, Size: fi.size, ModTime: fi.mtime, Mode: fi.mode}
		if w.fileblob {
			if !fi.mode.IsRegular() {
				continue
			}
			e.Mode = 0
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
// entries, emitting each as soon as it is read; with describe false it does not
// describe regular files (Size -1). Subdirectories are listed after their
// parent's files.
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
	err = readDirEach(f, func(de dirent) error {
		if err := ctx.Err(); err != nil {
			return w.errorf("list", prefix, err)
		}
		if dirPath == "" && de.name == InternalDir {
			return nil
		}
		key := join(dirKey, de.name)
		p := join(dirPath, de.name)
		var st entryStat
		if de.unknown || !de.typ.IsRegular() || describe {
			s, err := statAt(f, w.root, p, de.name)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return w.errorf("list", key, err)
			}
			st, de.typ = s, s.mode.Type()
		}
		switch {
		case de.typ.IsDir():
			if strings.HasPrefix(key+"/", prefix) || strings.HasPrefix(prefix, key+"/") {
				subdirs = append(subdirs, dirItem{name: de.name, key: key})
			}
			return nil
		case !strings.HasPrefix(key, prefix):
			return nil
		case de.typ.IsRegular() && !describe:
			return fn(Entry{Key: key, Size: -1})
		}
		e := Entry{Key: key, Size: st.size, ModTime: st.mtime, Mode: st.mode}
		if st.mode&fs.ModeSymlink != 0 {
			e.Link, _ = w.root.Readlink(p)
		}
		return fn(e)
	})
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
