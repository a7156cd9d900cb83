//go:build unix

package store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
)

// fileBucket opens a file:// bucket on a new folder root, beside a folder
// outside for links to point at; with walkOnly its reads take the portable
// path of the confined open, as where openat2 is refused.
func fileBucket(t *testing.T, walkOnly bool) (st *store.BucketStore, root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "bucket"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.OpenBucket(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Not waited on for ever: gocloud's Close waits for a reader stuck
		// opening a FIFO, and a regression must fail, not hang.
		closed := make(chan struct{})
		go func() { st.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Error("Close blocked: a read is still under way")
		}
	})
	if walkOnly {
		if err := store.FileWalkOnly(st); err != nil {
			t.Fatal(err)
		}
	}
	return st, root, outside
}

// fileHolding returns the path of the one regular file below root that holds
// content: where fileblob keeps an object, found without asking the code
// under test.
func fileHolding(t *testing.T, root, content string) string {
	t.Helper()
	var found []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); string(b) == content {
				found = append(found, p)
			}
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("files below %s holding %q: %q, want one", root, content, found)
	}
	return found[0]
}

// swapForLink renames the folder dir away and puts a link to target in its
// place, as another process may do between a listing and a read.
func swapForLink(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	symlink(t, target, dir)
}

// mkfifo replaces the file p with a FIFO.
func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
}

// wantRefused checks that a read of key failed, as a key that no longer
// names a regular file of the bucket (never as "not there", never with
// bytes), and that the error names the key.
func wantRefused(t *testing.T, op, key string, got []byte, err error, what string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s %q: read %q, want it refused", op, key, got)
	case !errors.Is(err, store.ErrNotRegular) || errors.Is(err, store.ErrNotExist):
		t.Errorf("%s %q: %v, want an error wrapping ErrNotRegular only", op, key, err)
	case !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), what):
		t.Errorf("%s %q: %q, want the key and %q named", op, key, err, what)
	}
}

func readClose(rc io.ReadCloser, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// TestFileBucketReadsNothingThroughALink: a file:// bucket whose folders are
// swapped for links to a folder outside after the listing (another process
// may own them) reads nothing through them, whatever the key's spelling: a
// plain key, one with a tab, one with what reads as fileblob's "__0x…__"
// escape, and an internal file. Open, Stat, OpenObject, OpenInternal, the
// copies of CopyToInternal and MoveToInternal and the restore of
// MoveFromInternal fail for them as keys that are no regular file; the files
// outside are read by none and copied nowhere. Before, the escaped keys went
// to fileblob's reader, which opened through the link and read the file
// outside; its Attributes and Copy did too.
func TestFileBucketReadsNothingThroughALink(t *testing.T) {
	for _, walkOnly := range []bool{false, true} {
		name := "openat2"
		if walkOnly {
			name = "walk"
		}
		t.Run(name, func(t *testing.T) {
			st, root, outside := fileBucket(t, walkOnly)
			keys := []string{"v/a.png", "tab\tdir/b.png", "x__0x41__/c.png"}
			for _, k := range keys {
				if err := st.Put(ctx, k, strings.NewReader("inside "+k), store.PutOptions{ContentType: "image/png", Metadata: map[string]string{"sha256": "inside"}}); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(outside, path.Base(k)), "SECRET")
				writeFile(t, filepath.Join(outside, path.Base(k)+".attrs"), `{"user.metadata":{"sha256":"SECRET"}}`)
			}
			if err := st.PutInternal(ctx, "trash/RUN/w/d.png", strings.NewReader("inside d"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(outside, "d.png"), "SECRET")
			if _, err := os.Lstat(filepath.Join(root, "tab__0x9__dir")); err != nil {
				t.Fatalf("the key with a tab is not kept in tab__0x9__dir: %v", err)
			}
			dirs, err := os.ReadDir(root)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range dirs {
				if d.IsDir() && d.Name() != store.InternalDir {
					swapForLink(t, filepath.Join(root, d.Name()), outside)
				}
			}
			swapForLink(t, filepath.Join(root, store.InternalDir, "trash", "RUN", "w"), outside)

			for _, k := range keys {
				got, err := readClose(st.Open(ctx, k))
				wantRefused(t, "Open", k, got, err, "symbolic link")
				_, err = st.Stat(ctx, k)
				wantRefused(t, "Stat", k, nil, err, "symbolic link")
				rc, _, err := st.OpenObject(ctx, k)
				got, err = readClose(rc, err)
				wantRefused(t, "OpenObject", k, got, err, "symbolic link")
				if err := st.CopyToInternal(ctx, k, "copies/"+k); err == nil {
					t.Errorf("CopyToInternal %q through a link: no error", k)
				}
				if err := st.MoveToInternal(ctx, k, "moved/"+k); err == nil {
					t.Errorf("MoveToInternal %q through a link: no error", k)
				}
			}
			got, err := readClose(st.OpenInternal(ctx, "trash/RUN/w/d.png"))
			wantRefused(t, "OpenInternal", ".mediactl/trash/RUN/w/d.png", got, err, "symbolic link")
			if err := st.MoveFromInternal(ctx, "trash/RUN/w/d.png", "restored/d.png"); err == nil {
				t.Error("MoveFromInternal through a link: no error")
			}

			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("SECRET")) {
						t.Errorf("%s holds the content of a file outside the bucket", p)
					}
				}
				return nil
			})
			for _, f := range []string{"a.png", "b.png", "c.png", "d.png"} {
				if got := readFile(t, filepath.Join(outside, f)); got != "SECRET" {
					t.Errorf("outside/%s: %q", f, got)
				}
			}
		})
	}
}

// TestFileBucketRefusesFIFOs: a FIFO where a file:// bucket keeps an object —
// under a key with a tab, under one with an escape in it, under a plain one —
// or its attributes file is refused at once by Open, Stat, OpenObject and
// the copies, with an error that says it is a FIFO and names the key; nothing
// waits for a writer. Before, fileblob's reader opened a FIFO under an
// escaped key without O_NONBLOCK and waited for ever, and a SIGTERM did not
// end the command. A regression fails here after the deadline, not hangs.
func TestFileBucketRefusesFIFOs(t *testing.T) {
	for _, walkOnly := range []bool{false, true} {
		name := "openat2"
		if walkOnly {
			name = "walk"
		}
		t.Run(name, func(t *testing.T) {
			st, root, _ := fileBucket(t, walkOnly)
			keys := []string{"fifo\tdir/f.png", "p__0x41__/g.png", "plain/h.png"}
			for _, k := range keys {
				if err := st.Put(ctx, k, strings.NewReader("fifo "+k), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				mkfifo(t, fileHolding(t, root, "fifo "+k))
			}
			const attrsKey = "attrs\tfifo/i.png"
			if err := st.Put(ctx, attrsKey, strings.NewReader("object "+attrsKey), store.PutOptions{ContentType: "image/png"}); err != nil {
				t.Fatal(err)
			}
			mkfifo(t, fileHolding(t, root, "object "+attrsKey)+".attrs")

			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			done := make(chan struct{})
			start := time.Now()
			go func() {
				defer close(done)
				for _, k := range keys {
					got, err := readClose(st.Open(rctx, k))
					wantRefused(t, "Open", k, got, err, "FIFO")
					_, err = st.Stat(rctx, k)
					wantRefused(t, "Stat", k, nil, err, "FIFO")
					rc, _, err := st.OpenObject(rctx, k)
					got, err = readClose(rc, err)
					wantRefused(t, "OpenObject", k, got, err, "FIFO")
					if err := st.CopyToInternal(rctx, k, "copies/"+k); !errors.Is(err, store.ErrNotRegular) {
						t.Errorf("CopyToInternal of a FIFO %q: %v", k, err)
					}
				}
				_, err := st.Stat(rctx, attrsKey)
				wantRefused(t, "Stat (attributes file a FIFO)", attrsKey, nil, err, ".attrs")
				if err := st.CopyToInternal(rctx, attrsKey, "copies/i.png"); !errors.Is(err, store.ErrNotRegular) {
					t.Errorf("CopyToInternal with its attributes file a FIFO: %v", err)
				}
				// The object itself is a regular file: Open does not read
				// the attributes file.
				if got, err := readClose(st.Open(rctx, attrsKey)); err != nil || string(got) != "object "+attrsKey {
					t.Errorf("Open %q: %q, %v", attrsKey, got, err)
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("a read of a FIFO has not returned in 20s: it waits for a writer")
			}
			if rctx.Err() != nil {
				t.Errorf("the reads took %v, up to the deadline", time.Since(start))
			}
		})
	}
}

// TestFileBucketEscapedKeysRead: keys fileblob keeps under escaped file
// names (a tab, a control character, what reads as an escape, a segment
// ending in "..", a leading "__0x2f") read back through the confined open
// as fileblob wrote them, and Stat says what fileblob's Attributes says,
// field for field. Copies keep the attributes, and a plain key goes to the
// internal folder and back. A prefix folder that is a
// link is followed, as the listing follows it; a prefix fileblob escapes
// itself is read from the bucket's folder.
func TestFileBucketEscapedKeysRead(t *testing.T) {
	st, root, _ := fileBucket(t, false)
	keys := []string{"tab\tdir/a.png", "ctl\x01/b.png", "x__0x41__/c.png", "a../d.png", "__0x2f/e.png", "plain/f.png", "g\t.png"}
	for _, k := range keys {
		if err := st.Put(ctx, k, strings.NewReader("content of "+k), store.PutOptions{ContentType: "image/png", Metadata: map[string]string{"sha256": "d-" + k}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range keys {
		want := "content of " + k
		if got, err := readClose(st.Open(ctx, k)); err != nil || string(got) != want {
			t.Errorf("Open %q: %q, %v", k, got, err)
		}
		rc, e, err := st.OpenObject(ctx, k)
		if got, err := readClose(rc, err); err != nil || string(got) != want || e.Size != int64(len(want)) || e.Key != k {
			t.Errorf("OpenObject %q: %q, %+v, %v", k, got, e, err)
		}
		got, err := st.Stat(ctx, k)
		if err != nil {
			t.Errorf("Stat %q: %v", k, err)
			continue
		}
		a, err := st.Blob().Attributes(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if got.Size != a.Size || !got.ModTime.Equal(a.ModTime) || got.ETag != a.ETag || got.ContentType != a.ContentType || !bytes.Equal(got.MD5, a.MD5) || !maps.Equal(got.Metadata, a.Metadata) {
			t.Errorf("Stat %q = %+v; fileblob's Attributes say %+v", k, got, a)
		}
		if err := st.CopyToInternal(ctx, k, "copies/"+k); err != nil {
			t.Errorf("CopyToInternal %q: %v", k, err)
		} else if c, err := st.Blob().Attributes(ctx, store.InternalDir+"/copies/"+k); err != nil || c.ContentType != "image/png" || c.Metadata["sha256"] != "d-"+k {
			t.Errorf("the copy of %q: %+v, %v", k, c, err)
		}
		if got, err := readClose(st.OpenInternal(ctx, "copies/"+k)); err != nil || string(got) != want {
			t.Errorf("OpenInternal of the copy of %q: %q, %v", k, got, err)
		}
		if !store.FileblobKeepsName(k) {
			// Its restore would not remove the escaped internal file (see
			// TestFileBucketRemovesNothingThroughALink).
			continue
		}
		if err := st.MoveToInternal(ctx, k, "moved/"+k); err != nil {
			t.Errorf("MoveToInternal %q: %v", k, err)
		} else if err := st.MoveFromInternal(ctx, "moved/"+k, k); err != nil {
			t.Errorf("MoveFromInternal %q: %v", k, err)
		} else if got, err := readClose(st.Open(ctx, k)); err != nil || string(got) != want {
			t.Errorf("Open %q after the round trip through the internal folder: %q, %v", k, got, err)
		}
	}
	if _, err := st.Stat(ctx, "tab\tdir"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("Stat of a folder: %v, want ErrNotExist", err)
	}
	if _, err := st.Stat(ctx, "missing\t.png"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("Stat of a missing key: %v, want ErrNotExist", err)
	}

	writeFile(t, filepath.Join(root, "real", "k.png"), "through the linked prefix")
	symlink(t, filepath.Join(root, "real"), filepath.Join(root, "linked"))
	linked, err := store.OpenBucket(ctx, "file://"+root+"?prefix=linked/")
	if err != nil {
		t.Fatal(err)
	}
	defer linked.Close()
	if got, err := readClose(linked.Open(ctx, "k.png")); err != nil || string(got) != "through the linked prefix" {
		t.Errorf("Open below a linked prefix folder: %q, %v", got, err)
	}

	escaped, err := store.OpenBucket(ctx, "file://"+root+"?prefix=p../")
	if err != nil {
		t.Fatal(err)
	}
	defer escaped.Close()
	if err := escaped.Put(ctx, "k.png", strings.NewReader("below an escaped prefix"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(root, "p..__0x2f__k.png")); got != "below an escaped prefix" {
		t.Fatalf("fileblob keeps p../k.png elsewhere: %q", got)
	}
	if got, err := readClose(escaped.Open(ctx, "k.png")); err != nil || string(got) != "below an escaped prefix" {
		t.Errorf("Open below a prefix fileblob escapes: %q, %v", got, err)
	}
}
