// Package persist is the write side of a media store for an agent runtime: it
// saves an upload under its content-addressed name the way forge does
// ("<dir>/<sha256-hex><ext>", folders 0700, files 0600), and keeps `mediactl
// gc` from taking a blob that the runtime has just named again. It is the
// write-side companion of pkg/replay, which reads such blobs back.
//
// # Why
//
// A content-addressed writer is idempotent: when a blob of the same bytes is
// already there, forge skips the write. The old file keeps its old
// modification time while a new session names it. gc removes unreferenced
// blobs older than a minimum age, and judges the age by the modification
// time; until the new session is saved, nothing names the blob, so a blob
// written long ago and re-used a moment ago can be in gc's plan. gc checks
// each blob's size and modification time again right before it moves it, and
// keeps one that changed since the plan, but a skipped write changes nothing
// it could see.
//
// [Put] does not skip: when the blob exists it freshens it, setting its
// access and modification times to now, as git freshens objects it would
// otherwise write again. The fresh time keeps the blob out of any later plan
// (it is younger than the minimum age) and makes gc's check before the move
// keep it when a plan made earlier lists it. When the freshen finds the file
// gone (gc moved it in the meantime), Put writes it anew.
//
// # What is guaranteed
//
//   - A blob that Put returns without error has the name of its bytes'
//     sha256, and a modification time no older than the call. A blob written
//     is complete: the bytes are written to a temporary file in dir and
//     synced, renamed into place and the folder synced, so the name never
//     holds a partial file, even after a crash.
//   - The temporary file's name starts with ".tmp" (see
//     blobname.IsTemporary): gc never takes it, verify reports it as a
//     leftover. Put removes it on every error.
//   - The freshen sets the times to the current time (UTIME_NOW where the
//     system has it), which needs only write permission on the file, not
//     ownership, and never follows a symbolic link.
//   - An existing name that is not a regular file (a symbolic link, a
//     folder) is refused and left as it is. An existing regular file whose
//     size is not the size of the bytes cannot hold them, and is replaced.
//
// # What is not
//
//   - The bytes of an existing blob of the right size are not compared with
//     the upload: its name says what it holds, and `mediactl verify` is the
//     tool that checks it.
//   - Put does not save the session: the caller must still save the session
//     that names the blob, and until it does, nothing but the fresh time
//     keeps the blob. A session saved more than gc's minimum age after Put
//     is not protected.
//   - A folder Put creates is not synced into its parent.
//   - It is no defence against another process that can write to dir and
//     swaps names in it on purpose.
//   - On systems other than Linux, macOS, the BSDs, Solaris, illumos and
//     AIX (Windows, Plan 9, z/OS, js, wasip1) the freshen is os.Chtimes,
//     which follows symbolic links and may need ownership of the file, and
//     the folder is not synced after a rename.
//   - An extension that is not "." and 1–8 characters of [a-z0-9] (what
//     blobname.Parse accepts) is written as given, but mediactl then treats the
//     name as opaque: it cannot verify the bytes by their name.
package persist

import (
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
)

// Options say how Put creates folders and files.
type Options struct {
	// DirMode is the mode of the folder Put creates when dir is missing,
	// before the umask; zero means forge's 0700.
	DirMode os.FileMode
	// FileMode is the mode of a blob Put writes, before the umask; zero
	// means forge's 0600.
	FileMode os.FileMode
}

// Blob is what Put saved.
type Blob struct {
	// Path is dir joined with Name.
	Path string
	// Name is the blob's file name: Digest followed by the extension.
	Name string
	// Digest is the lower-case hex sha256 of the bytes.
	Digest string
	// Size is the number of bytes.
	Size int64
	// Written is true when Put wrote the blob, false when a blob of these
	// bytes was already there and Put freshened it.
	Written bool
}

// ErrNotRegular is wrapped by the error of Put and Freshen when the blob's
// name holds something other than a regular file (a symbolic link, a folder).
var ErrNotRegular = errors.New("not a regular file")

// tempPrefix starts the name of Put's temporary files: mediactl takes a
// name that starts with ".tmp" for a write in progress and never collects it.
const tempPrefix = ".tmp-"

// testHookBeforeFreshen, when set by a test, runs between Put's Lstat of an
// existing blob and its freshen: the moment gc may move the blob away.
var testHookBeforeFreshen func(path string)

const (
	defaultDirMode  os.FileMode = 0o700
	defaultFileMode os.FileMode = 0o600
)

// Put saves the bytes read from r in dir under their content-addressed name,
// "<sha256-hex><ext>", and returns the blob. ext is "" or starts with "." and
// holds no path separator and no NUL byte. dir is created when missing.
//
// The bytes are streamed into a temporary file in dir (named ".tmp-…") and
// hashed as they are written. When dir already holds a regular file of that
// name and size, Put sets its access and modification times to now and
// removes the temporary file (Written is false); when it holds no such file,
// or the file disappears before it is freshened, the temporary file is
// renamed onto the name (Written is true). A name that holds anything other
// than a regular file is an error, and left alone.
//
// Put's errors start with "persist:" and leave no temporary file behind. An
// error from syncing dir after the rename comes with the Blob filled in: the
// blob is in place but may not survive a crash.
func Put(dir string, r io.Reader, ext string, opts Options) (Blob, error) {
	if err := checkExt(ext); err != nil {
		return Blob{}, err
	}
	if r == nil {
		return Blob{}, errors.New("persist: nil reader")
	}
	if dir == "" {
		return Blob{}, errors.New("persist: empty folder name")
	}
	dirMode, fileMode := opts.DirMode, opts.FileMode
	if dirMode == 0 {
		dirMode = defaultDirMode
	}
	if fileMode == 0 {
		fileMode = defaultFileMode
	}
	if err := os.MkdirAll(dir, dirMode.Perm()); err != nil {
		return Blob{}, fmt.Errorf("persist: create folder: %w", err)
	}

	tmp, f, err := createTemp(dir, fileMode.Perm())
	if err != nil {
		return Blob{}, err
	}
	// From here on the temporary file is removed on every return but the
	// one that renamed it.
	renamed := false
	defer func() {
		if f != nil {
			f.Close()
		}
		if !renamed {
			os.Remove(tmp)
		}
	}()

	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if err != nil {
		return Blob{}, fmt.Errorf("persist: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return Blob{}, fmt.Errorf("persist: sync %s: %w", tmp, err)
	}
	err = f.Close()
	f = nil
	if err != nil {
		return Blob{}, fmt.Errorf("persist: close %s: %w", tmp, err)
	}

	digest := hex.EncodeToString(h.Sum(nil))
	b := Blob{Name: digest + ext, Digest: digest, Size: n}
	b.Path = filepath.Join(dir, b.Name)

	fi, err := os.Lstat(b.Path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return Blob{}, fmt.Errorf("persist: %s: %w (%s)", b.Path, ErrNotRegular, fi.Mode().Type())
	case err == nil && fi.Size() == n:
		if testHookBeforeFreshen != nil {
			testHookBeforeFreshen(b.Path)
		}
		err := freshen(b.Path)
		if err == nil {
			return b, nil // the deferred function removes the temporary file
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return Blob{}, fmt.Errorf("persist: freshen: %w", err)
		}
		// Gone since the Lstat (gc moved it): write it anew.
	case err == nil:
		// A regular file of another size cannot hold these bytes: a torn
		// write of another writer. The rename replaces it.
	case !errors.Is(err, fs.ErrNotExist):
		return Blob{}, fmt.Errorf("persist: %w", err)
	}

	// Content-addressed: a file of this name created since the check holds
	// the same bytes, and replacing it loses nothing.
	if err := os.Rename(tmp, b.Path); err != nil {
		return Blob{}, fmt.Errorf("persist: %w", err)
	}
	renamed = true
	b.Written = true
	if err := syncDir(dir); err != nil {
		return b, fmt.Errorf("persist: sync folder %s: %w", dir, err)
	}
	return b, nil
}

// Freshen sets the access and modification times of the blob at path to
// now, for a runtime that knows the name of the bytes it is about to re-use
// without writing them. When the blob is gone (gc may have moved it), the
// error wraps fs.ErrNotExist, and the caller must write the blob anew (with
// Put). A path that is not a regular file is an error wrapping ErrNotRegular,
// and left alone.
func Freshen(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("persist: freshen: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("persist: freshen %s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
	}
	if err := freshen(path); err != nil {
		return fmt.Errorf("persist: freshen: %w", err)
	}
	return nil
}

// checkExt refuses an extension that is not "" or "." followed by a name's
// tail: one that would put the blob in another folder, or that no file name
// can hold.
func checkExt(ext string) error {
	switch {
	case ext == "":
		return nil
	case ext[0] != '.':
		return fmt.Errorf("persist: extension %q does not start with a dot", ext)
	case strings.ContainsAny(ext, "/\x00") || strings.ContainsRune(ext, filepath.Separator):
		return fmt.Errorf("persist: extension %q holds a path separator or a NUL byte", ext)
	}
	return nil
}

// createTemp creates a new, empty file in dir named tempPrefix and 26 random
// characters, with mode perm before the umask, and returns its path.
func createTemp(dir string, perm os.FileMode) (string, *os.File, error) {
	var err error
	for range 10 {
		p := filepath.Join(dir, tempPrefix+rand.Text())
		var f *os.File
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return p, f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return "", nil, fmt.Errorf("persist: create temporary file: %w", err)
}
