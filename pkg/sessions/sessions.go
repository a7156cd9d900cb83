// Package sessions reads the places where agent runtimes keep chat sessions —
// JSON files, SQLite, Postgres, buckets of JSON objects — and hands every document
// or text value to a consumer, with its exact place. It does not interpret content:
// finding references is the job of package ref.
package sessions

import (
	"context"
	"io"

	"github.com/mediactl/mediactl/pkg/ref"
)

// Item is one unit a source yields: a whole JSON document, a text value from a
// database column, or a problem that stopped part of the source from being read.
// Exactly one of Open, Text and Err is set.
type Item struct {
	Place ref.Place
	// Open opens a JSON document (or a JSON Lines file) for streaming. It may be
	// called from another goroutine than Walk's, after fn returned.
	Open func() (io.ReadCloser, error)
	// Size is the document's size in bytes when known, else -1.
	Size int64
	// Text is a column value; the consumer owns it (the source does not reuse it).
	Text []byte
	// Err is a problem with the item at Place that made the read incomplete
	// (a file that could not be opened, a directory that could not be listed).
	Err error
}

// Counts are what a source read.
type Counts struct {
	Documents int64 // JSON documents yielded (files, objects)
	Rows      int64 // database rows read
	Skipped   int64 // files deliberately not read (e.g. "*.tmp" leftovers of atomic writes)
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
