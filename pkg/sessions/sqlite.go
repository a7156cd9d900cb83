package sessions

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/ref"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// sqliteBusyTimeoutMS bounds how long a read waits for a lock (only WAL recovery
// or a non-WAL writer takes one a reader has to wait for).
const sqliteBusyTimeoutMS = 10000

// sqliteSource reads a SQLite database file through a read-only connection: the
// file is opened with mode=ro (SQLite never creates or writes it; every write
// fails with SQLITE_READONLY) and query_only, so it is safe beside a live writer
// in WAL mode. Everything is read in one read transaction, a consistent snapshot.
//
// Without a query, every user table (sqlite_master type 'table', not sqlite_*, not
// virtual tables, whose content lives in their shadow tables) is read in name
// order, rows in the table's own order. SQLite is dynamically typed: whatever a
// column is declared as, every value that is not NULL becomes an Item: TEXT and
// BLOB as their bytes, INTEGER and REAL as their decimal text (a media_id
// 1234567890 names 1234567890.jpg; a REAL with an integer value, below 1e21, is
// written without a fraction or exponent, as JavaScript writes numbers).
// Place.Key is the primary key, "col=value" (comma-joined when composite), or
// "rowid=N" for a table without one.
//
// With a query, its result columns become Items alike, except that the driver
// turns values of columns declared DATE, DATETIME or TIMESTAMP into times, which
// are not read (select +col to read the stored value). A value of any type
// the driver hands over that is none of these fails the read.
type sqliteSource struct {
	spec  string
	path  string
	query string
	db    *sql.DB
}

func openSQLite(ctx context.Context, spec, path, query string) (Source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no SQLite database at %s (coffer keeps it at ~/.coffer/coffer.db or ~/.coffer/runs.db): %w", path, err)
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, usagef("%s is not a regular file: sqlite:PATH must name the database file", path)
	}
	db, err := openSQLiteDB(ctx, path, sqliteDSN, "read-only")
	if err != nil {
		return nil, err
	}
	return &sqliteSource{spec: spec, path: path, query: query, db: db}, nil
}

// openSQLiteDB opens the database at path through the DSN that dsn makes of
// its absolute path, and connects once, so that a file SQLite cannot open is
// reported here, named with mode ("read-only", "read-write"), rather than at
// the first query.
func openSQLiteDB(ctx context.Context, path string, dsn func(abs string) string, mode string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, err
	}
	// One connection: Walk holds it for its transaction, the rewriter for its
	// write transactions; nothing needs more.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s %s: %w", path, mode, err)
	}
	return db, nil
}

// sqliteDSN is the modernc.org/sqlite DSN opening an absolute path read-only:
// a "file:" URI so that SQLite itself applies mode=ro (with a plain file name the
// driver drops it), plus the driver's own _query_only and _busy_timeout keys.
func sqliteDSN(abs string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	q := "mode=ro&_query_only=1&_busy_timeout=" + strconv.Itoa(sqliteBusyTimeoutMS)
	return u.String() + "?" + q
}

func (s *sqliteSource) String() string { return s.spec }
func (s *sqliteSource) Close() error   { return s.db.Close() }

func (s *sqliteSource) Walk(ctx context.Context, fn func(Item) error) (c Counts, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return c, fmt.Errorf("begin read transaction on %s: %w", s.path, err)
	}
	// Read-only: nothing to commit; rollback ends the snapshot.
	defer tx.Rollback()

	if s.query != "" {
		err = s.walkQuery(ctx, tx, fn, &c)
		return c, err
	}
	tables, err := sqliteTables(ctx, tx)
	if err != nil {
		return c, fmt.Errorf("list tables of %s: %w", s.path, err)
	}
	for _, t := range tables {
		if err := s.walkTable(ctx, tx, t, fn, &c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// sqliteTables lists the user tables. The first read also fixes the snapshot.
func sqliteTables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master
		WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
		AND COALESCE(sql, '') NOT LIKE 'CREATE VIRTUAL TABLE%'
		ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// sqliteColumns returns a table's columns in order and its primary key columns in
// key order.
func sqliteColumns(ctx context.Context, tx *sql.Tx, table string) (cols, pk []string, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	type pkCol struct {
		name string
		pos  int
	}
	var pks []pkCol
	for rows.Next() {
		var name string
		var pos int
		if err := rows.Scan(&name, &pos); err != nil {
			return nil, nil, err
		}
		cols = append(cols, name)
		if pos > 0 {
			pks = append(pks, pkCol{name, pos})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	pk = make([]string, len(pks))
	for _, p := range pks {
		if p.pos <= len(pk) {
			pk[p.pos-1] = p.name
		}
	}
	return cols, pk, nil
}

func (s *sqliteSource) walkTable(ctx context.Context, tx *sql.Tx, table string, fn func(Item) error, c *Counts) error {
	tableErr := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A problem confined to this table (a corrupt page, an unknown collation):
		// report it and go on with the others.
		return fn(Item{Place: ref.Place{Source: s.spec, Table: table, Offset: -1}, Size: -1,
			Err: fmt.Errorf("read table %s: %w", table, err)})
	}
	cols, pk, err := sqliteColumns(ctx, tx, table)
	if err != nil {
		return tableErr(err)
	}
	if len(cols) == 0 {
		return nil
	}
	keyNames := sqliteKeyNames(cols, pk)
	rows, err := tx.QueryContext(ctx, sqliteSelect(table, keyNames, cols))
	if err != nil {
		return tableErr(err)
	}
	defer rows.Close()
	vals := make([]any, len(keyNames)+len(cols))
	ptrs := make([]any, len(keyNames)+len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	nk := len(keyNames)
	var arena valueArena
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return tableErr(err)
		}
		c.Rows++
		key := ""
		for i, v := range vals {
			if i < nk {
				continue
			}
			text, ok, err := arena.itemValue(v)
			if err != nil {
				return tableErr(fmt.Errorf("column %s: %w", cols[i-nk], err))
			}
			if !ok {
				continue
			}
			if key == "" && nk > 0 {
				key = renderKey(keyNames, vals[:nk])
			}
			if err := fn(Item{
				Place: ref.Place{Source: s.spec, Table: table, Key: key, Column: cols[i-nk], Offset: -1},
				Size:  -1,
				Text:  text,
			}); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return tableErr(err)
	}
	return nil
}

func (s *sqliteSource) walkQuery(ctx context.Context, tx *sql.Tx, fn func(Item) error, c *Counts) error {
	rows, err := tx.QueryContext(ctx, s.query)
	if err != nil {
		return fmt.Errorf("--sessions-query on %s: %w", s.path, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("--sessions-query on %s: %w", s.path, err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var arena valueArena
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("--sessions-query on %s: %w", s.path, err)
		}
		c.Rows++
		key := renderValue(vals[0])
		for i, v := range vals {
			if _, isTime := v.(time.Time); isTime {
				continue // a DATE/DATETIME/TIMESTAMP column (see sqliteSource)
			}
			text, ok, err := arena.itemValue(v)
			if err != nil {
				return fmt.Errorf("--sessions-query on %s: column %s (row %s): %w", s.path, cols[i], key, err)
			}
			if !ok {
				continue
			}
			if err := fn(Item{
				Place: ref.Place{Source: s.spec, Table: "query", Key: key, Column: cols[i], Offset: -1},
				Size:  -1,
				Text:  text,
			}); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("--sessions-query on %s: %w", s.path, err)
	}
	return nil
}

// sqliteKeyNames is what identifies a row: the primary key, else the rowid under
// a name no column shadows; nil when every rowid alias is a column's name.
func sqliteKeyNames(cols, pk []string) []string {
	if len(pk) > 0 {
		return pk
	}
	taken := map[string]bool{}
	for _, col := range cols {
		taken[strings.ToLower(col)] = true
	}
	for _, alias := range []string{"rowid", "_rowid_", "oid"} {
		if !taken[alias] {
			return []string{alias}
		}
	}
	return nil
}

// sqliteSelect reads a table's key columns, then all its columns. Unary + keeps
// each value and its storage class but drops the declared type, so that the
// driver hands TEXT in DATE/DATETIME columns over as text instead of parsing it
// into a time.
func sqliteSelect(table string, keyNames, cols []string) string {
	var sel []string
	for _, k := range keyNames {
		sel = append(sel, "+"+sqliteIdent(k))
	}
	for _, col := range cols {
		sel = append(sel, "+"+sqliteIdent(col))
	}
	return "SELECT " + strings.Join(sel, ", ") + " FROM " + sqliteIdent(table)
}

// textValue returns a TEXT or BLOB value as bytes the caller owns. database/sql
// already copies a []byte scanned into an *any.
func textValue(v any) ([]byte, bool) {
	switch v := v.(type) {
	case string:
		return []byte(v), true
	case []byte:
		return v, true
	}
	return nil, false
}

// itemValue returns a value Walk yields as an Item's text, which the caller
// owns: TEXT and BLOB as their bytes, INTEGER and REAL as their decimal text;
// ok is false for NULL. Any other type is an error, never skipped.
func (a *valueArena) itemValue(v any) (text []byte, ok bool, err error) {
	switch v := v.(type) {
	case nil:
		return nil, false, nil
	case string:
		return a.copyString(v), true, nil
	case []byte:
		return v, true, nil // database/sql copies a []byte scanned into an *any
	case int64:
		return a.appendWith(func(b []byte) []byte { return strconv.AppendInt(b, v, 10) }), true, nil
	case float64:
		return a.appendWith(func(b []byte) []byte { return appendReal(b, v) }), true, nil
	}
	return nil, false, fmt.Errorf("a value of unexpected type %T", v)
}

// appendReal writes a REAL as JavaScript's Number.prototype.toString does,
// which is how most runtimes write a number into a name: an integer value below
// 1e21 in plain digits ("1234567890", not "1.23456789e+09"), others in the
// shortest form that reads back the same (at most 24 bytes).
func appendReal(b []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// renderKey renders key columns as "a=1,b=x".
func renderKey(names []string, vals []any) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(renderValue(vals[i]))
	}
	return b.String()
}

// renderValue renders one SQL value for a Place key.
func renderValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return v
	case []byte:
		return "x'" + hex.EncodeToString(v) + "'"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// sqliteIdent quotes an SQLite identifier.
func sqliteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
