package sessions

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/usage"
)

// ErrUsage is wrapped by every error [Open] returns for a spec or option the
// operator got wrong (as opposed to a source that exists but cannot be read).
var ErrUsage = usage.Err

// Options tune [Open].
type Options struct {
	// Query is the operator's SQL (a session query). It is only valid with SQL
	// sources (sqlite:, postgres://). When set, the source runs it, inside the same
	// read-only snapshot, instead of reading every table: every text value of every
	// result row becomes an [Item] with Place.Table "query", Place.Key the row's
	// first column rendered as text and Place.Column the result column's name.
	Query string
	// Exclude are path.Match patterns of entries of a sessions folder (or a
	// bucket) that are not read (--sessions-exclude). Each is matched against
	// an entry's slash path relative to the folder and against its base name;
	// an excluded folder is not entered. In PostgreSQL they name relations not
	// read, matched against Place.Table ("schema.table", "table" in public) and
	// the table's name alone (a foreign table, which is otherwise reported as
	// unread), and columns, matched against "Place.Table.column" and
	// "name.column" (one that holds a bytea inside an array or a composite
	// value, otherwise reported as unread). Excluded entries are counted in
	// Counts.Excluded. SQLite and a session query do not use them.
	Exclude []string
}

// Open opens the session source named by spec, as given on the command line.
//
// The spec forms are:
//
//   - sqlite:PATH — a SQLite database file (coffer's ~/.coffer/coffer.db), read
//     through a read-only connection. PATH is a plain file path, taken literally
//     after the "sqlite:" prefix: "sqlite:coffer.db" is relative,
//     "sqlite:/home/u/.coffer/coffer.db" absolute. The URL-like "sqlite://…" is
//     rejected, because tools disagree on how many slashes make a path absolute.
//   - postgres://… or postgresql://… — a PostgreSQL connection URL (libpq syntax).
//   - s3://, gs://, azblob://, file://, mem:// — a bucket URL, opened as
//     store.OpenBucket opens a store (the same parameters, the same prefix:
//     s3://bucket/sessions/ reads below sessions/ only); every object whose key
//     ends in .json, .jsonl or .ndjson is a document.
//   - anything else is a local path: a directory walked for session files
//     (*.json, *.jsonl, *.ndjson, any case, optionally .gz/.zst/.zstd), or a
//     single file read as one document.
//
// What each source yields:
//
//   - A folder is walked recursively in lexical order, symbolic links followed
//     (loop-safe), and every entry is read, excluded (Options.Exclude) or
//     reported: documents are regular files named *.json, *.jsonl or *.ndjson in
//     any letter case, optionally gzip (.gz) or zstandard (.zst, .zstd)
//     compressed (Item.Open decompresses; Place.Document is the path); a
//     "<document>.tmp" leftover of an atomic write is read with Item.Leftover
//     set; every other file, and every socket, pipe or device, is an Item with
//     an [*UnreadError]. A 0-byte .json file, a subfolder or file that cannot be
//     read, a dangling link or a loop is an Item with Err; the folder is listed
//     again after the walk to read what appeared meanwhile. A missing or
//     unreadable top folder makes Walk fail. The spec itself may be a link; a
//     spec naming a file is one document. See filesSource for the exact rules.
//   - SQLite is opened read-only (mode=ro, query_only) and never created; all of
//     it is read in one read transaction, safe beside a live writer in WAL mode.
//     A WAL database after a clean shutdown opens even in a folder the operator
//     cannot write, and no -wal or -shm is left where there was none.
//     Every TEXT or BLOB value of every user table is an Item (Place.Table, Key
//     "col=value[,col=value]" from the primary key or "rowid=N", Column).
//   - PostgreSQL is read in one REPEATABLE READ READ ONLY transaction, with
//     row_security off: a row-level security policy that would hide rows makes
//     the read of that table (or the query) fail instead. The
//     text-like columns (text, varchar, char, name, citext, json, jsonb, xml,
//     domains and arrays of them, cast to text) of all user tables are Items;
//     Place.Table is "schema.table" ("table" in public), Key the primary key or
//     "ctid=(p,i)". A table that cannot be read is an Item with Err; a
//     foreign table, whose rows are on another server, is not read and is an
//     Item with an [*UnreadError] unless excluded (Options.Exclude).
//   - A bucket is listed page by page in key order; objects whose key ends in
//     .json, .jsonl or .ndjson are documents (Place.Document is the key below
//     the URL's prefix, Place.Source the bucket's store.Location).
//
// Rows are streamed, never loaded whole; Counts.Rows counts the rows read.
//
// Open returns an error wrapping [ErrUsage] when the spec or the options are wrong;
// the message says how to fix it. A Postgres source connects in Open; a missing
// SQLite file is reported by Open; a missing folder is reported by Walk. String
// returns the spec with any password removed.
func Open(ctx context.Context, spec string, opts Options) (Source, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, usagef("empty session source: give a directory, a JSON file, sqlite:PATH, a postgres:// URL or a bucket URL")
	}
	query := strings.TrimSpace(opts.Query)
	lower := strings.ToLower(spec)
	switch {
	case strings.HasPrefix(lower, "sqlite:"):
		path := spec[len("sqlite:"):]
		if strings.HasPrefix(path, "//") {
			return nil, usagef("%q: the sqlite:// form is not accepted: write sqlite:PATH with a plain file path, e.g. sqlite:/home/u/.coffer/coffer.db or sqlite:coffer.db", spec)
		}
		if path == "" {
			return nil, usagef("missing database path after sqlite:, e.g. sqlite:/home/u/.coffer/coffer.db")
		}
		return openSQLite(ctx, spec, path, query)
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		return openPostgres(ctx, spec, query, opts.Exclude)
	}
	if scheme := store.URLScheme(spec); scheme != "" {
		if !store.IsBucketScheme(scheme) {
			return nil, usagef("unsupported scheme %q in %q: use sqlite:PATH, postgres://…, a bucket URL (%s) or a local path", scheme+"://", store.Redact(spec), store.SchemeList())
		}
		if query != "" {
			return nil, &QueryError{Source: store.Redact(spec)}
		}
		return openBucket(ctx, spec, opts.Exclude)
	}
	if query != "" {
		return nil, &QueryError{Source: strconv.Quote(spec)}
	}
	if looksLikeSQLite(spec) {
		return nil, usagef("%s is a SQLite database, not a JSON file: write sqlite:%s", spec, spec)
	}
	if err := checkExclude(opts.Exclude); err != nil {
		return nil, usagef("%v", err)
	}
	return &filesSource{spec: spec, exclude: opts.Exclude, lastRoot: &rootMemo{}}, nil
}

func usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// QueryError is the refusal of Options.Query by a source it cannot apply to:
// one that is not SQL, or a rewrite (a query's result has no place to write
// back to). It is a usage error (errors.Is(err, usage.Err)).
type QueryError struct {
	Source  string // the source, credentials redacted
	Rewrite bool   // refused for a rewrite
}

func (e *QueryError) Error() string {
	if e.Rewrite {
		return fmt.Sprintf("a session query cannot be used to rewrite sessions: a query's result has no place to write back to; rewrite the whole source %s instead", e.Source)
	}
	return fmt.Sprintf("a session query only applies to SQL sources (sqlite:PATH, postgres://…), not to %s", e.Source)
}

// Is makes a QueryError a usage error.
func (e *QueryError) Is(target error) bool { return target == usage.Err }

// sqliteMagic is the first 16 bytes of every SQLite 3 database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// looksLikeSQLite reports whether path is a regular file that starts like a SQLite
// database, so that Open can point the operator to the sqlite: form.
func looksLikeSQLite(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(f, head); err != nil {
		return false
	}
	return bytes.Equal(head, sqliteMagic)
}
