package persist

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mediactl/mediactl/pkg/blobname"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func hexOf(content string) string {
	d := sha256.Sum256([]byte(content))
	return hex.EncodeToString(d[:])
}

// noTemp fails the test when dir holds a temporary file of Put's.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	must(t, err)
	for _, e := range es {
		if strings.HasPrefix(e.Name(), tempPrefix) || blobname.IsTemporary(e.Name()) {
			t.Errorf("temporary file left in %s: %s", dir, e.Name())
		}
	}
}

// names lists the entries of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	must(t, err)
	var ns []string
	for _, e := range es {
		ns = append(ns, e.Name())
	}
	return ns
}

// checkPerm compares the permission bits of the file at path with want less
// the umask, where the system has modes.
func checkPerm(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	m := umask()
	if m < 0 {
		return
	}
	fi, err := os.Lstat(path)
	must(t, err)
	if got, want := fi.Mode().Perm(), want&^os.FileMode(m); got != want {
		t.Errorf("%s: mode %v, want %v (umask %#o)", path, got, want, m)
	}
}

// TestPutNew: a new blob is written under its digest and extension, with
// forge's modes, and nothing else is left in the folder.
func TestPutNew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".forge", "files", "inbound")
	const content = "the bytes of a picture"
	b, err := Put(dir, strings.NewReader(content), ".png", Options{})
	must(t, err)
	want := Blob{
		Path:    filepath.Join(dir, hexOf(content)+".png"),
		Name:    hexOf(content) + ".png",
		Digest:  hexOf(content),
		Size:    int64(len(content)),
		Written: true,
	}
	if b != want {
		t.Fatalf("Put = %+v, want %+v", b, want)
	}
	got, err := os.ReadFile(b.Path)
	must(t, err)
	if string(got) != content {
		t.Fatalf("blob holds %q", got)
	}
	fi, err := os.Lstat(b.Path)
	must(t, err)
	if !fi.Mode().IsRegular() {
		t.Fatalf("blob is %v", fi.Mode())
	}
	if d := time.Since(fi.ModTime()); d < -5*time.Second || d > 5*time.Second {
		t.Errorf("new blob dated %v", fi.ModTime())
	}
	checkPerm(t, b.Path, 0o600)
	checkPerm(t, dir, 0o700)
	checkPerm(t, filepath.Dir(dir), 0o700)
	if ns := names(t, dir); len(ns) != 1 || ns[0] != b.Name {
		t.Fatalf("folder holds %q", ns)
	}
	if n, ok := blobname.Parse(b.Name); !ok || n.Digest.String() != b.Digest || n.Ext != ".png" {
		t.Fatalf("%s is not a content-addressed name for mediactl", b.Name)
	}
}

// TestPutModes: Options' modes are used, less the umask, and an empty
// extension and empty content are fine.
func TestPutModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "blobs")
	b, err := Put(dir, strings.NewReader(""), "", Options{DirMode: 0o750, FileMode: 0o640})
	must(t, err)
	if b.Name != hexOf("") || b.Size != 0 || !b.Written {
		t.Fatalf("Put = %+v", b)
	}
	checkPerm(t, b.Path, 0o640)
	checkPerm(t, dir, 0o750)
	noTemp(t, dir)
}

// TestPutFreshensExisting: a Put of bytes already there does not write
// them: it sets the old blob's modification time to now, and leaves its
// bytes (and its file) as they were.
func TestPutFreshensExisting(t *testing.T) {
	dir := t.TempDir()
	const content = "an upload sent twice"
	first, err := Put(dir, strings.NewReader(content), ".jpg", Options{})
	must(t, err)
	old := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Second)
	must(t, os.Chtimes(first.Path, old, old))
	before, err := os.Lstat(first.Path)
	must(t, err)

	second, err := Put(dir, strings.NewReader(content), ".jpg", Options{})
	must(t, err)
	if second.Written || second.Path != first.Path || second.Digest != first.Digest || second.Size != first.Size {
		t.Fatalf("second Put = %+v, first %+v", second, first)
	}
	after, err := os.Lstat(second.Path)
	must(t, err)
	if d := time.Since(after.ModTime()); d < -5*time.Second || d > 5*time.Second {
		t.Fatalf("blob dated %v after the freshen, want about now", after.ModTime())
	}
	if !os.SameFile(before, after) {
		t.Error("the blob was replaced, not freshened")
	}
	got, err := os.ReadFile(second.Path)
	must(t, err)
	if string(got) != content {
		t.Fatalf("blob holds %q", got)
	}
	if ns := names(t, dir); len(ns) != 1 {
		t.Fatalf("folder holds %q", ns)
	}
}

// TestFreshen: Freshen dates a blob now; on a blob that is gone it returns
// an error wrapping fs.ErrNotExist, so the caller writes it again.
func TestFreshen(t *testing.T) {
	dir := t.TempDir()
	b, err := Put(dir, strings.NewReader("x"), ".txt", Options{})
	must(t, err)
	old := time.Now().Add(-30 * 24 * time.Hour)
	must(t, os.Chtimes(b.Path, old, old))
	must(t, Freshen(b.Path))
	fi, err := os.Lstat(b.Path)
	must(t, err)
	if time.Since(fi.ModTime()) > 5*time.Second {
		t.Fatalf("blob dated %v after Freshen", fi.ModTime())
	}

	must(t, os.Remove(b.Path))
	if err := Freshen(b.Path); !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "persist: ") {
		t.Fatalf("Freshen of a removed blob = %v, want an error wrapping fs.ErrNotExist", err)
	}
	// The call Put makes after its Lstat says the same.
	if err := freshen(b.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("freshen of a removed blob = %v, want an error wrapping fs.ErrNotExist", err)
	}
	if _, err := os.Lstat(b.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Freshen created the blob: %v", err)
	}
}

// TestPutAfterRemoval: a blob removed (gc moved it) is written anew by the
// next Put of its bytes.
func TestPutAfterRemoval(t *testing.T) {
	dir := t.TempDir()
	const content = "moved away by gc"
	b, err := Put(dir, strings.NewReader(content), ".png", Options{})
	must(t, err)
	must(t, os.Remove(b.Path))
	again, err := Put(dir, strings.NewReader(content), ".png", Options{})
	must(t, err)
	if !again.Written || again.Path != b.Path {
		t.Fatalf("Put after removal = %+v", again)
	}
	got, err := os.ReadFile(b.Path)
	must(t, err)
	if string(got) != content {
		t.Fatalf("blob holds %q", got)
	}
	noTemp(t, dir)
}

// TestPutGoneBeforeFreshen: the blob disappears between Put's check and its
// freshen (gc moved it in that moment): Put writes it anew.
func TestPutGoneBeforeFreshen(t *testing.T) {
	dir := t.TempDir()
	const content = "taken at the worst moment"
	b, err := Put(dir, strings.NewReader(content), ".png", Options{})
	must(t, err)
	old := time.Now().Add(-30 * 24 * time.Hour)
	must(t, os.Chtimes(b.Path, old, old))
	moved := filepath.Join(t.TempDir(), "trashed.png")
	testHookBeforeFreshen = func(path string) {
		must(t, os.Rename(path, moved))
	}
	defer func() { testHookBeforeFreshen = nil }()

	again, err := Put(dir, strings.NewReader(content), ".png", Options{})
	must(t, err)
	if !again.Written {
		t.Fatalf("Put = %+v, want the blob written anew", again)
	}
	fi, err := os.Lstat(b.Path)
	must(t, err)
	if time.Since(fi.ModTime()) > 5*time.Second {
		t.Fatalf("blob written anew dated %v", fi.ModTime())
	}
	got, err := os.ReadFile(b.Path)
	must(t, err)
	if string(got) != content {
		t.Fatalf("blob holds %q", got)
	}
	if _, err := os.Lstat(moved); err != nil {
		t.Fatalf("the moved blob: %v", err)
	}
	noTemp(t, dir)
}

// TestPutReplacesTornBlob: a regular file under the name whose size is not
// the bytes' (a torn write) is replaced with the bytes.
func TestPutReplacesTornBlob(t *testing.T) {
	dir := t.TempDir()
	const content = "the whole upload"
	p := filepath.Join(dir, hexOf(content)+".bin")
	must(t, os.WriteFile(p, []byte(content[:5]), 0o600))
	b, err := Put(dir, strings.NewReader(content), ".bin", Options{})
	must(t, err)
	if !b.Written || b.Path != p {
		t.Fatalf("Put = %+v", b)
	}
	got, err := os.ReadFile(p)
	must(t, err)
	if string(got) != content {
		t.Fatalf("blob holds %q", got)
	}
	noTemp(t, dir)
}

// TestPutRefusesSymlink: a symbolic link under the blob's name, to a file
// outside the folder, is refused; the link and its target stay as they were.
func TestPutRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	must(t, os.WriteFile(outside, []byte("not a blob"), 0o600))
	old := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Second)
	must(t, os.Chtimes(outside, old, old))
	const content = "not a blob"
	link := filepath.Join(dir, hexOf(content)+".txt")
	if err := os.Symlink(outside, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	linkBefore, err := os.Lstat(link)
	must(t, err)

	_, err = Put(dir, strings.NewReader(content), ".txt", Options{})
	if !errors.Is(err, ErrNotRegular) || !strings.HasPrefix(err.Error(), "persist: ") {
		t.Fatalf("Put over a symbolic link = %v, want an error wrapping ErrNotRegular", err)
	}
	if err := Freshen(link); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Freshen of a symbolic link = %v, want an error wrapping ErrNotRegular", err)
	}

	to, err := os.Readlink(link)
	must(t, err)
	linkAfter, err := os.Lstat(link)
	must(t, err)
	if to != outside || !os.SameFile(linkBefore, linkAfter) || !linkAfter.ModTime().Equal(linkBefore.ModTime()) {
		t.Fatalf("the link changed: to %s, dated %v (was %v)", to, linkAfter.ModTime(), linkBefore.ModTime())
	}
	fi, err := os.Lstat(outside)
	must(t, err)
	got, err := os.ReadFile(outside)
	must(t, err)
	if string(got) != "not a blob" || !fi.ModTime().Equal(old) {
		t.Fatalf("the link's target changed: %q dated %v", got, fi.ModTime())
	}
	noTemp(t, dir)
	if ns := names(t, dir); len(ns) != 1 {
		t.Fatalf("folder holds %q", ns)
	}
}

// TestPutRefusesFolder: a folder under the blob's name is refused and left
// alone.
func TestPutRefusesFolder(t *testing.T) {
	dir := t.TempDir()
	const content = "a folder took my name"
	p := filepath.Join(dir, hexOf(content))
	must(t, os.Mkdir(p, 0o700))
	if _, err := Put(dir, strings.NewReader(content), "", Options{}); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Put over a folder = %v, want an error wrapping ErrNotRegular", err)
	}
	fi, err := os.Lstat(p)
	must(t, err)
	if !fi.IsDir() {
		t.Fatalf("%s is now %v", p, fi.Mode())
	}
	noTemp(t, dir)
}

// TestPutBadExt: an extension that does not start with a dot, or that holds
// a path separator or a NUL byte, is refused before anything is created.
func TestPutBadExt(t *testing.T) {
	for _, ext := range []string{"../x", "a/b", "x", "png", ".a/b", "./", "/", ".png\x00", "\x00", ".x/../../y"} {
		t.Run(fmt.Sprintf("%q", ext), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "inbound")
			_, err := Put(dir, strings.NewReader("bytes"), ext, Options{})
			if err == nil || !strings.HasPrefix(err.Error(), "persist: ") {
				t.Fatalf("Put with extension %q = %v, want an error", ext, err)
			}
			if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Put with a bad extension created the folder: %v", err)
			}
		})
	}
	for _, ext := range []string{"", ".png", ".tar.gz", ".PNG", "."} {
		if _, err := Put(t.TempDir(), strings.NewReader("bytes"), ext, Options{}); err != nil {
			t.Errorf("Put with extension %q: %v", ext, err)
		}
	}
}

// TestPutReadError: a reader that fails mid-stream fails Put with its error,
// and no file is left in the folder.
func TestPutReadError(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("connection reset by the client")
	r := io.MultiReader(strings.NewReader(strings.Repeat("part of an upload ", 10000)), iotest.ErrReader(boom))
	_, err := Put(dir, r, ".png", Options{})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "persist: ") {
		t.Fatalf("Put = %v, want an error wrapping %v", err, boom)
	}
	if ns := names(t, dir); len(ns) != 0 {
		t.Fatalf("folder holds %q", ns)
	}
}

// TestPutBadArguments: a nil reader, an empty folder name and a folder that
// is a file are errors, not panics, and leave nothing behind.
func TestPutBadArguments(t *testing.T) {
	if _, err := Put(t.TempDir(), nil, ".png", Options{}); err == nil {
		t.Error("Put of a nil reader: no error")
	}
	if _, err := Put("", strings.NewReader("x"), ".png", Options{}); err == nil {
		t.Error("Put into an empty folder name: no error")
	}
	parent := t.TempDir()
	file := filepath.Join(parent, "file")
	must(t, os.WriteFile(file, nil, 0o600))
	if _, err := Put(file, strings.NewReader("x"), ".png", Options{}); err == nil || !strings.HasPrefix(err.Error(), "persist: ") {
		t.Errorf("Put into a file = %v, want an error", err)
	}
	noTemp(t, parent)
}

// TestTempNameIsTemporary: the names of Put's temporary files are, for
// mediactl, writes in progress, never blobs: gc does not take them.
func TestTempNameIsTemporary(t *testing.T) {
	if !blobname.IsTemporary(tempPrefix + rand.Text()) {
		t.Fatalf("blobname.IsTemporary(%q…) is false", tempPrefix)
	}
	// And the file a Put in progress holds is one.
	dir := t.TempDir()
	var seen []string
	r := &pausingReader{r: strings.NewReader("streamed in two reads"), pause: func() { seen = names(t, dir) }}
	b, err := Put(dir, r, ".png", Options{})
	must(t, err)
	if len(seen) != 1 || !strings.HasPrefix(seen[0], tempPrefix) || !blobname.IsTemporary(seen[0]) {
		t.Fatalf("during the write the folder held %q, want one temporary file", seen)
	}
	if _, ok := blobname.Parse(seen[0]); ok {
		t.Fatalf("the temporary name %s is a content-addressed name", seen[0])
	}
	if ns := names(t, dir); len(ns) != 1 || ns[0] != b.Name {
		t.Fatalf("after the write the folder holds %q", ns)
	}
}

// pausingReader reads r one byte at a time and calls pause once, after the
// first byte.
type pausingReader struct {
	r      io.Reader
	pause  func()
	paused bool
}

func (p *pausingReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := p.r.Read(b[:1])
	if n > 0 && !p.paused {
		p.paused = true
		p.pause()
	}
	return n, err
}

// TestPutConcurrent: Puts of the same bytes at once all succeed and leave
// one blob holding them.
func TestPutConcurrent(t *testing.T) {
	dir := t.TempDir()
	content := bytes.Repeat([]byte("same upload from many sessions "), 4096)
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	blobs := make([]Blob, n)
	for i := range n {
		wg.Go(func() {
			blobs[i], errs[i] = Put(dir, bytes.NewReader(content), ".bin", Options{})
		})
	}
	wg.Wait()
	for i, err := range errs {
		must(t, err)
		if blobs[i].Path != blobs[0].Path {
			t.Fatalf("Put %d = %+v, Put 0 = %+v", i, blobs[i], blobs[0])
		}
	}
	got, err := os.ReadFile(blobs[0].Path)
	must(t, err)
	if !bytes.Equal(got, content) {
		t.Fatal("the blob does not hold the bytes")
	}
	if ns := names(t, dir); len(ns) != 1 {
		t.Fatalf("folder holds %q", ns)
	}
}
