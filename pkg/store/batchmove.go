package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"
)

// ErrChanged is wrapped by MoveManyToInternal for a blob that is no longer the
// one described (another size or modification time): a writer touched it.
var ErrChanged = errors.New("changed since it was described")

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
// gc's sweep does: each move is one rename that never replaces anything, checked
// right before against the description the caller planned with, and the
// directories involved are fsync'ed once at the end rather than after every
// file. A move interrupted by a crash leaves its blob in one place or the
// other, never in neither. It returns one error per move (nil when moved).
func (s *LocalStore) MoveManyToInternal(ctx context.Context, moves []InternalMove) []error {
	errs := make([]error, len(moves))
	madeDirs := map[string]bool{}
	touched := map[string]bool{}
	for i, m := range moves {
		if err := ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		errs[i] = s.moveOne(m, madeDirs, touched)
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

func (s *LocalStore) moveOne(m InternalMove, madeDirs, touched map[string]bool) error {
	if err := ValidKey(m.Key); err != nil {
		return fmt.Errorf("store %s: move: %w", s.dir, err)
	}
	if err := validInternal(m.Name); err != nil {
		return fmt.Errorf("store %s: move: %w", s.dir, err)
	}
	if err := s.checkParents(m.Key); err != nil {
		return s.errorf("move", m.Key, err)
	}
	fi, err := s.root.Lstat(m.Key)
	if err != nil {
		return s.errorf("move", m.Key, err)
	}
	if !fi.Mode().IsRegular() {
		return s.errorf("move", m.Key, notRegular(fi.Mode()))
	}
	if !m.ModTime.IsZero() && (fi.Size() != m.Size || !fi.ModTime().Equal(m.ModTime)) {
		return s.errorf("move", m.Key, ErrChanged)
	}
	to := internalName(m.Name)
	dir := path.Dir(to)
	if !madeDirs[dir] {
		// The destination folders are mediactl's own, below InternalDir: checked
		// once per directory and created if missing.
		if err := s.checkParents(to); err != nil {
			return s.errorf("move into", to, err)
		}
		if err := s.mkdirAll(dir); err != nil {
			return s.errorf("move into", to, err)
		}
		madeDirs[dir] = true
	}
	if err := s.renameNoReplace(m.Key, to); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return s.errorf("move into", to, fs.ErrExist)
		}
		return s.errorf("move", m.Key, err)
	}
	touched[dir] = true
	touched[path.Dir(m.Key)] = true
	return nil
}
