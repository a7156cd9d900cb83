package sessions

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"
)

// ChangedSince returns the part of src that may hold what was written at or
// after t, for a caller that read all of src completely in a read that began
// after t and now reads again for what changed meanwhile (gc's check after
// its moves):
//
//   - a folder of files: the documents whose change or modification time is
//     at or after t — a session saved, replaced by rename (a rename sets the
//     moved file's change time) or appended in place. Where the system gives
//     no change time (Windows), the whole folder.
//   - SQLite: the whole database when the database file, its write-ahead log
//     or its rollback journal changed at or after t (every commit writes one
//     of them), else nothing.
//   - anything else (PostgreSQL, a bucket, a session query): the whole
//     source.
//
// Times are compared with the file system's clock: t should be the start of
// the complete read less a margin for a file system whose clock is not this
// host's (a network file system).
func ChangedSince(src Source, t time.Time) Source {
	switch s := src.(type) {
	case *filesSource:
		c := *s
		c.since = t.UnixNano()
		return &c
	case *sqliteSource:
		if s.query == "" && !s.immutable {
			return &sqliteChanged{sqliteSource: s, since: t}
		}
	}
	return src
}

// sqliteChanged is a SQLite source read only when its files changed.
type sqliteChanged struct {
	*sqliteSource
	since time.Time
}

func (s *sqliteChanged) Walk(ctx context.Context, fn func(Item) error) (Counts, error) {
	if !s.changed() {
		return Counts{}, nil
	}
	return s.sqliteSource.Walk(ctx, fn)
}

// Close leaves the source open: it belongs to the caller of ChangedSince.
func (s *sqliteChanged) Close() error { return nil }

// changed reports whether the database may hold a commit made at or after
// since: one of its files changed then, or one cannot be looked at.
func (s *sqliteChanged) changed() bool {
	file := s.file
	if file == "" {
		file = s.path
	}
	fi, err := os.Stat(file)
	if err != nil || !before(fi, s.since) {
		return true // the database written, or replaced by rename
	}
	// A commit writes the log: its modification time moves. Its change time
	// alone does not say so (a reader's open changes it).
	for _, p := range []string{file + "-wal", file + "-journal"} {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil || !fi.ModTime().Before(s.since):
			return true
		}
	}
	return false
}

// before reports whether the file's modification and change times are both
// before t. Where the change time is unknown, it is not.
func before(fi fs.FileInfo, t time.Time) bool {
	ctime, ok := changeTimeOf(fi)
	return ok && ctime < t.UnixNano() && fi.ModTime().Before(t)
}
