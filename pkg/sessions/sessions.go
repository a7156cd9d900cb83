// Package sessions reads the places where agent runtimes keep chat sessions —
// JSON files, SQLite, Postgres, buckets of JSON objects — and hands every document
// or text value to a consumer, with its exact place. It does not interpret content:
// finding references is the job of package ref.
//
// # SQL values
//
// A database is read whole: every value in which a runtime may have written a
// blob name becomes an Item, in the form that lets package ref decode it
// exactly. In SQLite that is every value that is not NULL: TEXT and BLOB as
// their bytes, INTEGER and REAL as their decimal text. In Postgres, every
// column of every table and populated materialized view, except those of
// built-in types whose text cannot hold a name (boolean, date/time, geometric,
// network, bit string, uuid…): string types, json, jsonb and xml as their
// text; arrays and composite types as their JSON (to_json), not their literal
// syntax; bytea raw; numbers as their decimal text; any other type, including
// one the catalog does not explain, as its text form. A value that cannot be
// read fails its table's read, which is reported: nothing is skipped unread.
// The details are on the readers (sqliteSource, pgSource).
//
// # Rewriting
//
// [OpenRewriter] opens a folder, a file, sqlite:PATH or a postgres:// URL for
// writing, for `mediactl migrate` (which replaces references to copied blobs by
// their bucket URLs) and `migrate rollback` (which puts the old text back).
// [Rewriter.Rewrite] offers every unit — a whole session file, or one text value
// of one row — to an [Edit] with the very [ref.Place] that [Source.Walk] reports
// for it, so that a journal written by one run is matched by a later one. What to
// change is the Edit's business; the rewriter makes sure a change reaches the
// store without losing anyone else's:
//
//   - A unit is written only if it still holds what Edit saw: a file is swapped in
//     atomically and the swap undone if the file changed meanwhile; a database
//     value is updated with a compare-and-swap on its row's primary key and its
//     old value. A unit that changed is re-read and edited again, up to
//     RewriteOptions.Retries times, then left as the other writer made it and
//     reported as a conflict ([ErrConflict]).
//   - A unit whose Edit returns nil (or its old bytes) is never written.
//   - RewriteOptions.Prepare sees each change before it is written (journal it
//     there), RewriteOptions.Committed after it is durable. A prepared change
//     may never be committed (it conflicted, vanished, was refused, or the
//     process died): a journal treats it as "Old or New".
//   - Problems confined to one unit — an unreadable file, a full disk, a value
//     the database refuses, a row without a primary key, a conflict — leave that
//     unit untouched, are counted, and come back at the end as a [*RewriteError]
//     naming every place. An error from Edit or Prepare, a canceled context or a
//     store that fails as a whole stop the rewrite.
//   - Writes are short: a file at a time; 500 values per database transaction,
//     never held while Edit, Prepare or Committed run. A live runtime keeps
//     working beside the rewrite.
//
// Limits: a writer that edits a session file in place (rather than replacing it
// by rename, as forge does) and writes in the instant after our swap writes into
// the replaced file, and that edit is lost; where renameat2(RENAME_EXCHANGE) is
// unavailable, a writer that renames its version in between our last comparison
// and our rename loses it. Database triggers run on the rewriter's updates.
// Values of primary key columns are not rewritten (the row's identity would
// change), nor rows of Postgres tables without a primary key; a SQLite table
// without one is addressed by rowid, which VACUUM may renumber between a run and
// its rollback. Only values of text-like columns (Postgres string types, json,
// jsonb, xml and arrays of them; SQLite TEXT and BLOB) of tables are offered to
// Edit: the numbers, bytea, composite and other values Walk also reads, and
// Postgres materialized views (derived data, refreshed from their query), are
// read-only and not offered at all. Sessions kept in a bucket, and
// a session query, cannot be rewritten.
package sessions

import (
	"context"
	"io"

	"github.com/mediactl/mediactl/pkg/ref"
)

// Item is one unit a source yields: a whole JSON document, the values of one
// database row, or a problem that stopped part of the source from being read.
// Exactly one of Open, Values and Err is set.
type Item struct {
	Place ref.Place
	// Open opens a JSON document (or a JSON Lines file) for streaming. It may be
	// called from another goroutine than Walk's, after fn returned.
	Open func() (io.ReadCloser, error)
	// Size is the document's size in bytes when known, else -1.
	Size int64
	// Values are the values of one database row that are read (every value
	// but NULLs and, where a source says so, times), in column order; Place
	// names the row (Table, Key), each Value its column. The slice is only
	// valid during the call (the source reuses it for the next row); each
	// Value's Text the consumer owns. A row is one Item, not one per value: a
	// database holds millions of short values, and handing each over on its
	// own cost more than reading it.
	Values []Value
	// Err is a problem with the item at Place that made the read incomplete
	// (a file that could not be opened, a directory that could not be listed,
	// a file in a sessions folder that is not read: [*UnreadError]).
	Err error
	// Leftover marks a document that is a leftover of an atomic write (forge's
	// "t-1.json.tmp"): read for the references it holds, since it may be the
	// only copy of a session, but not a session of its own (Counts.Leftovers).
	// It may be cut short by a crash.
	Leftover bool
	// Tag is a number a source wrapping another may give the item, 0 for
	// none: a scan hands it back with every reference found in the item
	// (scan.Found.Tag), so that what the wrapper noted of the item is found
	// again without keying it by its place.
	Tag int64
}

// Value is one column value of a database row.
type Value struct {
	Column string
	Text   []byte
}

// ValuePlace is the place of v, a value of the row it: the row's place with
// v's column.
func (it *Item) ValuePlace(v Value) ref.Place {
	p := it.Place
	p.Column = v.Column
	return p
}

// Counts are what a source read.
type Counts struct {
	Documents int64 // JSON documents yielded (files, objects), leftovers not included
	Rows      int64 // database rows read
	// Skipped counts objects of a bucket that are not documents by their key.
	// A folder of files skips nothing: each file is read, excluded or unread.
	Skipped   int64
	Excluded  int64 // entries not read because they match Options.Exclude
	Leftovers int64 // "*.tmp" leftovers of atomic writes read (Item.Leftover), empty ones included
	Unread    int64 // files neither read nor excluded, each yielded as an [*UnreadError]
}

// Source is one place sessions are kept.
type Source interface {
	// String names the source as the operator gave it, with any password removed.
	String() string
	// Walk calls fn for every item, in a stable order. A non-nil error means the
	// source could not be read completely (the database went away, the top folder
	// is unreadable); problems confined to one item are yielded as Items with Err
	// instead, and Walk goes on. An error from fn stops Walk and is returned.
	Walk(ctx context.Context, fn func(Item) error) (Counts, error)
	// Close releases connections.
	Close() error
}
