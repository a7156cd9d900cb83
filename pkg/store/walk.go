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
	sort string // key, or key+"/" for a directory: keys below it sort that way
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
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return w.errorf("list", dirKey, err)
	}
	items := make([]dirItem, 0, len(des))
	for _, de := range des {
		n := de.Name()
		k := n
		if w.fileblob {
			if de.Type().IsRegular() && strings.HasSuffix(n, ".attrs") {
				continue
			}
			k = hexUnescape(n)
		}
		if dirPath == "" && k == InternalDir {
			continue
		}
		key := join(dirKey, k)
		if de.IsDir() {
			if !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				continue
			}
			items = append(items, dirItem{name: n, key: key, dir: true, sort: key + "/"})
			continue
		}
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		items = append(items, dirItem{name: n, key: key, sort: key})
	}
	des = nil
	slices.SortFunc(items, func(a, b dirItem) int { return strings.Compare(a.sort, b.sort) })

	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return w.errorf("list", prefix, err)
		}
		p := join(dirPath, it.name)
		fi, err := w.root.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return w.errorf("list", it.key, err)
		}
		if fi.IsDir() {
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
		e := Entry{Key: it.key, Size: fi.Size(), ModTime: fi.ModTime(), Mode: fi.Mode()}
		if w.fileblob {
			if !fi.Mode().IsRegular() {
				continue
			}
			e.Mode = 0
		} else if fi.Mode()&fs.ModeSymlink != 0 {
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
