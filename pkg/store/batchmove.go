package store

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// ErrChanged is wrapped by MoveManyToInternal for a blob that is no longer the
// one described (another size or modification time), and by DeleteMany for
// an object that no longer has the ETag it was described with: a writer
// touched it.
var ErrChanged = errors.New("changed since it was described")

// ErrNotAttempted is wrapped by MoveManyToInternal for the moves after one whose
// destination was unsafe (ErrUnsafePath): their blobs were left in place.
var ErrNotAttempted = errors.New("not attempted: an earlier move of the batch found its destination unsafe")

// InternalMove is one blob to move into the internal folder.
type InternalMove struct {
	Key  string // the blob
	Name string // its name below InternalDir, e.g. "trash/RUN/KEY"
	// Size and ModTime, when ModTime is not zero, are what the blob must still
	// be: the move is skipped (ErrChanged) otherwise.
	Size    int64
	ModTime time.Time
}

// MoveManyToInternal moves many blobs into the internal folder at once, as
// gc's sweep does: each move is one rename that never replaces anything,
// checked right before against the description the caller planned with, and
// resolved for itself, both parent folders opened afresh without following a
// link (see LocalStore), so that a folder swapped for a link midway fails the
// moves through it and redirects none. The directories involved are fsync'ed
// once at the end rather than after every file. A move interrupted by a crash
// leaves its blob in one place or the other, never in neither. It returns one
// error per move (nil when moved). A destination that is not safe fails its
// move with an error wrapping ErrUnsafePath and ends the batch: the moves after
// it are not attempted (ErrNotAttempted), since the internal folder is then no
// place to move blobs into.
func (s *LocalStore) MoveManyToInternal(ctx context.Context, moves []InternalMove) []error {
	errs := make([]error, len(moves))
	touched := map[string]bool{}
	var unsafe error
	for i, m := range moves {
		if unsafe != nil {
			errs[i] = fmt.Errorf("store %s: move %s: %w", s.dir, m.Key, ErrNotAttempted)
			continue
		}
		if err := ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		errs[i] = s.moveOne(m, touched)
		if errors.Is(errs[i], ErrUnsafePath) {
			unsafe = errs[i]
		}
	}
	for dir := range touched {
		if err := s.syncDir(dir); err != nil {
			// The renames happened; only their durability is in doubt. Report it
			// on every move into or out of that directory.
			for i, m := range moves {
				if errs[i] == nil && (path.Dir(internalName(m.Name)) == dir || path.Dir(m.Key) == dir) {
					errs[i] = s.errorf("sync", dir, err)
				}
			}
		}
	}
	return errs
}

func (s *LocalStore) moveOne(m InternalMove, touched map[string]bool) error {
	if err := ValidKey(m.Key); err != nil {
		return fmt.Errorf("store %s: move: %w", s.dir, err)
	}
	if err := validInternal(m.Name); err != nil {
		return fmt.Errorf("store %s: move: %w", s.dir, err)
	}
	to := internalName(m.Name)
	err := s.moveEntry(m.Key, s, to, func(st entryStat) error {
		if !st.mode.IsRegular() {
			return notRegular(st.mode)
		}
		if !m.ModTime.IsZero() && (st.size != m.Size || !st.mtime.Equal(m.ModTime)) {
			return ErrChanged
		}
		return nil
	}, false)
	if err != nil {
		return s.errorf("move "+m.Key+" to", to, err)
	}
	touched[path.Dir(to)] = true
	touched[path.Dir(m.Key)] = true
	return nil
}

// DeleteManyInternal removes the files InternalDir/names[i], then the folders
// from InternalDir/under down that they leave empty (see BatchMover). A
// folder that still holds something stays, silently: a file that could not
// be removed has its own error.
func (s *LocalStore) DeleteManyInternal(ctx context.Context, under string, names []string) []error {
	errs := make([]error, len(names))
	if err := validInternal(under); err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("store %s: delete: %w", s.dir, err)
		}
		return errs
	}
	top := internalName(under)
	folders := map[string]bool{top: true}
	for i, name := range names {
		if err := validInternal(name); err != nil {
			errs[i] = fmt.Errorf("store %s: delete: %w", s.dir, err)
			continue
		}
		full := internalName(name)
		if !strings.HasPrefix(full, top+"/") {
			errs[i] = fmt.Errorf("store %s: delete %s: not below %s", s.dir, full, top)
			continue
		}
		err := s.remove(ctx, "delete", full)
		if errors.Is(err, ErrNotExist) {
			// Gone already, when its folder is there; a folder missing or
			// replaced was moved away by another process, with the file.
			if dir := path.Dir(full); s.folderPresent(dir) {
				err = nil
			} else {
				err = fmt.Errorf("store %s: delete %s: the folder %s is gone or no longer a folder (another process moved it, and the file with it): not deleted", s.dir, full, dir)
			}
		}
		errs[i] = err
		for dir := path.Dir(full); dir != top && !folders[dir]; dir = path.Dir(dir) {
			folders[dir] = true
		}
	}
	// The deepest folders first: a folder is empty only once those below it
	// are gone.
	byDepth := make([]string, 0, len(folders))
	for dir := range folders {
		byDepth = append(byDepth, dir)
	}
	sort.Slice(byDepth, func(i, j int) bool {
		di, dj := strings.Count(byDepth[i], "/"), strings.Count(byDepth[j], "/")
		if di != dj {
			return di > dj
		}
		return byDepth[i] < byDepth[j]
	})
	for _, dir := range byDepth {
		s.removeEmptyDir(dir)
	}
	return errs
}
