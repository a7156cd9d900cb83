package replay

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// cache is a content-addressed directory of verified copies: the entry of a
// blob is named by the hex sha256 of its bytes. Entries are written under a
// temporary name and renamed into place only after the bytes matched their
// digest; an entry is hashed again before it is served and again while it is
// read, so a file altered on disk (or a crash that left a torn entry: entries
// are not fsync'ed, a re-fetch is cheaper than a sync) is never served.
type cache struct {
	dir  string
	root *os.Root
}

// tmpPrefix starts the names of entries being written; such a name is never a
// digest, so a torn write is never looked up.
const tmpPrefix = ".tmp-"

// inMemory is the size up to which a cache entry is read into memory, hashed
// and served from there; larger ones are hashed, then read again verified.
const inMemory = 4 << 20

func openCache(dir string) (*cache, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("replay: cache %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("replay: cache %s: %w", abs, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("replay: cache %s: %w", abs, err)
	}
	c := &cache{dir: abs, root: root}
	c.sweep(time.Now().Add(-staleAfter))
	return c, nil
}

// staleAfter is the age after which a temporary file of the cache, written to
// at every read of its blob, is taken for the leftover of a process that died
// while filling it. A fill stalled that long only loses its entry.
const staleAfter = time.Hour

// sweep removes the temporary files last written before cutoff. It reads the
// directory once, in batches; errors only leave files behind.
func (c *cache) sweep(cutoff time.Time) {
	d, err := c.root.Open(".")
	if err != nil {
		return
	}
	defer d.Close()
	for {
		des, err := d.ReadDir(1024)
		for _, de := range des {
			if !strings.HasPrefix(de.Name(), tmpPrefix) {
				continue
			}
			if fi, err := de.Info(); err == nil && fi.ModTime().Before(cutoff) {
				_ = c.root.Remove(de.Name())
			}
		}
		if err != nil || len(des) == 0 {
			return
		}
	}
}

func (c *cache) close() error { return c.root.Close() }

// open returns the entry of want, verified in full before it is served (held in
// memory up to inMemory, verified again while it is read beyond), or ok false when there is none or the
// one there is not want's bytes, a link or not a regular file: such an entry is
// removed, so the caller fetches the blob again and refills it.
func (c *cache) open(want [sha256.Size]byte) (rc io.ReadCloser, size int64, location string, ok bool) {
	name := hex.EncodeToString(want[:])
	location = filepath.Join(c.dir, name)
	f, err := c.root.OpenFile(name, os.O_RDONLY|entryOpenFlags, 0)
	if err != nil {
		if !os.IsNotExist(err) {
			_ = c.root.Remove(name) // a link (ELOOP) or unreadable: drop it
		}
		return nil, 0, "", false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		_ = c.root.Remove(name)
		return nil, 0, "", false
	}
	if fi.Size() <= inMemory {
		// Read once, hash once, serve what was hashed.
		buf := getBuf(int(fi.Size()) + 1)
		n, err := io.ReadFull(f, buf)
		f.Close()
		if (err != io.ErrUnexpectedEOF && err != io.EOF) || sha256.Sum256(buf[:n]) != want {
			putBuf(buf)
			_ = c.root.Remove(name) // altered, grown or unreadable
			return nil, 0, "", false
		}
		m := &memReader{buf: buf}
		m.Reset(buf[:n])
		return m, int64(n), location, true
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	var got [sha256.Size]byte
	h.Sum(got[:0])
	if err != nil || got != want || n != fi.Size() {
		f.Close()
		_ = c.root.Remove(name)
		return nil, 0, "", false
	}
	// Too large to hold: served from the same descriptor and verified again
	// as it is read, in case it changes in between.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, 0, "", false
	}
	return newVerifier(f, location, want, fi.Size()), fi.Size(), location, true
}

// cacheFill is an entry being written while its blob is read from the origin.
type cacheFill struct {
	c    *cache
	f    *os.File
	tmp  string
	name string
}

// startFill begins the entry of want, or returns nil when the cache cannot
// take it (the read then goes on without filling it).
func (c *cache) startFill(want [sha256.Size]byte) *cacheFill {
	var r [8]byte
	rand.Read(r[:])
	tmp := tmpPrefix + hex.EncodeToString(r[:])
	f, err := c.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil
	}
	return &cacheFill{c: c, f: f, tmp: tmp, name: hex.EncodeToString(want[:])}
}

func (w *cacheFill) write(p []byte) bool {
	if _, err := w.f.Write(p); err != nil {
		w.abort()
		return false
	}
	return true
}

// commit publishes the entry; the caller has verified every byte written.
func (w *cacheFill) commit() {
	if err := w.f.Close(); err != nil {
		_ = w.c.root.Remove(w.tmp)
		return
	}
	if err := w.c.root.Rename(w.tmp, w.name); err != nil {
		_ = w.c.root.Remove(w.tmp)
	}
}

func (w *cacheFill) abort() {
	w.f.Close()
	_ = w.c.root.Remove(w.tmp)
}

// memReader serves a verified cache entry from a pooled buffer, which Close
// gives back.
type memReader struct {
	bytes.Reader
	buf []byte
}

func (m *memReader) Close() error {
	if m.buf != nil {
		m.Reset(nil)
		putBuf(m.buf)
		m.buf = nil
	}
	return nil
}

// bufPools hold buffers for cache entries read into memory, by power-of-two
// capacity: a warm cache then costs a read and a hash per hit, not an
// allocation.
var bufPools [bits.UintSize]sync.Pool

func bufClass(n int) int { return bits.Len(uint(n - 1)) }

func getBuf(n int) []byte {
	c := bufClass(n)
	if p, ok := bufPools[c].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, 1<<c)
}

func putBuf(b []byte) {
	c := bufClass(cap(b))
	if cap(b) != 1<<c {
		return
	}
	b = b[:cap(b)]
	bufPools[c].Put(&b)
}
