package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
)

// A file:// bucket's reads. gocloud's fileblob opens an object's file, and its
// attributes file, with os.Open on a path: through a symbolic link anywhere on
// the way, out of the bucket's folder, and waiting for ever on a FIFO. So a
// BucketStore on a file:// bucket never reads through fileblob: every file it
// reads — an object's for Open, OpenInternal, OpenObject, the restore of
// MoveFromInternal and the copies of MoveToInternal and CopyToInternal, and the
// ".attrs" file for Stat and those copies — is opened by openFile, which opens
// the very file fileblob would (fileblobPath, whatever the key's spelling)
// with the local store's confined open (LocalStore.readEntry). Session
// sources and pkg/replay read file:// buckets through OpenObject and Stat.

// openFile opens, for reading, the file in which a file:// bucket keeps the
// object name (the store's prefix included), or with attrs its attributes
// file. It is the one place where a file:// bucket's files are opened. The
// file is opened relative to the folder of the store's prefix, held open
// since OpenBucket as a local store's folder is (a prefix fileblob escapes in
// part: relative to the bucket's folder), never through a symbolic link on
// the way, never out of that folder, and only if it is a regular file: a
// FIFO, socket or device is refused at once (wrapping ErrNotRegular), never
// waited on, and so is a link (the error says where it was met). A folder is
// no object (ErrNotExist). The reader stops once ctx is done.
func (s *BucketStore) openFile(ctx context.Context, name string, attrs bool) (io.ReadCloser, entryStat, error) {
	rel, err := fileblobPath(name)
	if err != nil {
		return nil, entryStat{}, err
	}
	if attrs {
		rel += fileblobAttrsExt
	}
	dir, p, release, err := s.fileFolder(rel)
	if err != nil {
		return nil, entryStat{}, err
	}
	defer release()
	rc, st, err := dir.readEntry(ctx, p)
	if err != nil {
		err = plainErr(err)
		var nr *notRegularError
		if !attrs && errors.As(err, &nr) && nr.mode.IsDir() {
			err = fmt.Errorf("%w (a folder is no object)", ErrNotExist)
		}
		if rel != name {
			// An escaped name, or the attributes file: say which file.
			err = fmt.Errorf("file %s: %w", rel, err)
		}
		return nil, entryStat{}, err
	}
	return &fileReader{ctx: ctx, rc: rc}, st, nil
}

// fileFolder returns the folder, opened as a local store, from which the file
// rel (a path from the bucket's folder) is opened, and rel from there; the
// caller calls release once the file is open.
func (s *BucketStore) fileFolder(rel string) (dir *LocalStore, p string, release func(), err error) {
	if below, ok := strings.CutPrefix(rel, s.prefix); ok && below != "" {
		dir, err := s.prefixFolder()
		if err != nil {
			return nil, "", nil, err
		}
		return dir, below, func() {}, nil
	}
	// fileblob escapes a part of the prefix itself (a folder "a..", a
	// "__0x…" in it): the file is opened from the bucket's folder, with no
	// link followed in the prefix's folders either.
	dir, err = OpenLocal(s.name)
	if err != nil {
		return nil, "", nil, err
	}
	return dir, rel, func() { dir.Close() }, nil
}

// prefixFolder returns the folder of the store's prefix (the bucket's folder
// without a prefix), opened once, as a local store's folder is: by its path,
// through any link in it (as the listing does), then held open, so that no
// folder swapped for a link later redirects a read. OpenBucket opens it; a
// folder missing then (nothing written under the prefix yet) is opened on the
// first read that finds it.
func (s *BucketStore) prefixFolder() (*LocalStore, error) {
	if d := s.fileDir.Load(); d != nil {
		return d, nil
	}
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	if d := s.fileDir.Load(); d != nil {
		return d, nil
	}
	if s.fileClosed {
		return nil, fmt.Errorf("the store is closed")
	}
	d, err := OpenLocal(filepath.Join(s.name, filepath.FromSlash(s.prefix)))
	if err != nil {
		return nil, err
	}
	s.fileDir.Store(d)
	return d, nil
}

// closeFileFolder releases the folder prefixFolder holds.
func (s *BucketStore) closeFileFolder() {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	s.fileClosed = true
	if d := s.fileDir.Swap(nil); d != nil {
		d.Close()
	}
}

// fileReader stops reading once its context is done.
type fileReader struct {
	ctx context.Context
	rc  io.ReadCloser
}

func (r *fileReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.rc.Read(p)
}

func (r *fileReader) Close() error { return r.rc.Close() }

// fileblobAttrs is what fileblob keeps in an object's attributes file (its
// xattrs), as JSON.
type fileblobAttrs struct {
	CacheControl       string            `json:"user.cache_control"`
	ContentDisposition string            `json:"user.content_disposition"`
	ContentEncoding    string            `json:"user.content_encoding"`
	ContentLanguage    string            `json:"user.content_language"`
	ContentType        string            `json:"user.content_type"`
	Metadata           map[string]string `json:"user.metadata"`
	MD5                []byte            `json:"md5"`
}

// maxAttrsFile bounds what is read of an attributes file: fileblob writes a
// few hundred bytes.
const maxAttrsFile = 1 << 20

// readFileAttrs reads the attributes file of the object name (prefix
// included) through openFile. A missing one gives fileblob's defaults (the
// content type application/octet-stream, nothing else).
func (s *BucketStore) readFileAttrs(ctx context.Context, name string) (fileblobAttrs, error) {
	rc, st, err := s.openFile(ctx, name, true)
	if errors.Is(err, ErrNotExist) {
		return fileblobAttrs{ContentType: "application/octet-stream"}, nil
	}
	if err != nil {
		return fileblobAttrs{}, err
	}
	defer rc.Close()
	if st.size > maxAttrsFile {
		return fileblobAttrs{}, fmt.Errorf("attributes file of %s: %d bytes, more than an attributes file holds", name, st.size)
	}
	var xa fileblobAttrs
	if err := json.NewDecoder(io.LimitReader(rc, maxAttrsFile)).Decode(&xa); err != nil {
		return fileblobAttrs{}, fmt.Errorf("attributes file of %s: %w", name, err)
	}
	return xa, nil
}

// statFile is Stat of a file:// bucket: what fileblob's Attributes reports
// (the object file's size and modification time, an ETag made of both, the
// attributes file's content type, MD5 and metadata, its keys lower-cased as
// gocloud does), read through openFile.
func (s *BucketStore) statFile(ctx context.Context, key string) (Entry, error) {
	name := s.prefix + key
	rc, st, err := s.openFile(ctx, name, false)
	if err != nil {
		return Entry{}, err
	}
	rc.Close()
	xa, err := s.readFileAttrs(ctx, name)
	if err != nil {
		return Entry{}, err
	}
	var md map[string]string
	if len(xa.Metadata) > 0 {
		md = make(map[string]string, len(xa.Metadata))
		for k, v := range xa.Metadata {
			md[strings.ToLower(k)] = v
		}
	}
	return Entry{
		Key:         key,
		Size:        st.size,
		ModTime:     st.mtime,
		ETag:        fmt.Sprintf("\"%x-%x\"", st.mtime.UnixNano(), st.size),
		ContentType: xa.ContentType,
		MD5:         xa.MD5,
		Metadata:    md,
	}, nil
}

// copyFile is the copy of key to dst (both below the prefix) in a file://
// bucket: fileblob's Copy reads the source through links as its reader does.
// The source and its attributes are read through openFile; the copy is
// written by fileblob with the same attributes, as its Copy writes it.
func (s *BucketStore) copyFile(ctx context.Context, key, dst string) error {
	name := s.prefix + key
	rc, _, err := s.openFile(ctx, name, false)
	if err != nil {
		return err
	}
	defer rc.Close()
	xa, err := s.readFileAttrs(ctx, name)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.b.NewWriter(wctx, dst, &blob.WriterOptions{
		CacheControl:       xa.CacheControl,
		ContentDisposition: xa.ContentDisposition,
		ContentEncoding:    xa.ContentEncoding,
		ContentLanguage:    xa.ContentLanguage,
		ContentType:        xa.ContentType,
		Metadata:           xa.Metadata,
	})
	if err != nil {
		return err
	}
	if _, err := io.Copy(writerOnly{w}, rc); err != nil {
		cancel() // before Close: the write is aborted
		_ = w.Close()
		return err
	}
	return w.Close()
}
