package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mediactl/mediactl/pkg/ref"
)

// filesSource reads session files from a directory tree or a single file.
//
// A directory is walked recursively, in lexical order, without following symbolic
// links:
//   - regular files named *.json, *.jsonl or *.ndjson are documents;
//   - *.tmp files (forge's "t-1.json.tmp" atomic-write leftovers) and symbolic
//     links (session stores never write them; following one could leave the tree
//     or loop) are counted in Counts.Skipped and never opened;
//   - sockets, pipes and devices with a document's name are counted as skipped too
//     (opening a pipe could block forever);
//   - every other file is ignored.
//
// The spec itself may be a symbolic link (~/.forge → /data/forge): the operator
// named it explicitly, so it is followed. A spec naming a file is one document,
// whatever its name.
//
// Each document is probed (opened and closed) during the walk, so that an
// unreadable file is reported as an Item with Err; Item.Open opens it again and
// refuses a file that was replaced by something else since it was listed.
type filesSource struct {
	spec string
}

func (s *filesSource) String() string { return s.spec }
func (s *filesSource) Close() error   { return nil }

// documentExt reports whether a file name is a session document.
func documentExt(name string) bool {
	return strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".ndjson")
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
		c.Documents++
		return c, fn(s.document(root, fi, true))
	}
	// A root that is a link to a directory is walked as that directory.
	walkRoot := root
	if lfi, err := os.Lstat(root); err == nil && lfi.Mode()&fs.ModeSymlink != 0 {
		walkRoot = root + string(filepath.Separator)
	}
	err = filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if path == walkRoot {
			if err != nil {
				return err
			}
			return nil
		}
		if walkRoot != root {
			// Report paths as the operator wrote them, without the added separator.
			path = filepath.Join(root, path[len(walkRoot):])
		}
		if err != nil {
			// A subdirectory that could not be listed, or an entry that vanished.
			if ferr := fn(Item{Place: s.place(path), Err: err, Size: -1}); ferr != nil {
				return ferr
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			c.Skipped++
			return nil
		case strings.HasSuffix(name, ".tmp"):
			c.Skipped++
			return nil
		case !documentExt(name):
			return nil
		case !t.IsRegular():
			c.Skipped++
			return nil
		}
		info, err := d.Info() // lstat: does not follow links
		if err == nil && !info.Mode().IsRegular() {
			// Replaced by a link or something else since the directory was read.
			c.Skipped++
			return nil
		}
		if err == nil {
			err = probe(path)
		}
		if err != nil {
			return fn(Item{Place: s.place(path), Err: err, Size: -1})
		}
		c.Documents++
		return fn(s.document(path, info, false))
	})
	return c, err
}

func (s *filesSource) place(path string) ref.Place {
	return ref.Place{Source: s.spec, Document: path, Offset: -1}
}

// document makes the Item for a file; follow says whether path may be a link (only
// the spec itself may).
func (s *filesSource) document(path string, fi fs.FileInfo, follow bool) Item {
	return Item{
		Place: s.place(path),
		Size:  fi.Size(),
		Open:  func() (io.ReadCloser, error) { return openRegular(path, follow) },
	}
}

// probe checks that a file can be opened for reading.
func probe(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// openRegular opens path for reading and checks that it is a regular file and,
// unless follow is set, that the name is not a symbolic link (it may have been
// replaced by one since the directory was listed). The file's current content is
// read: a session rewritten (renamed over) since the listing is fine.
func openRegular(path string, follow bool) (io.ReadCloser, error) {
	f, err := os.Open(path)
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
	if follow {
		return f, nil
	}
	if lfi, err := os.Lstat(path); err != nil || !os.SameFile(fi, lfi) {
		// The name now is (or leads through) a link, or was swapped since Open.
		f.Close()
		if err == nil {
			err = errors.New("file was replaced while being opened")
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}
