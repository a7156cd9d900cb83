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
// order, rows in the table's own order, and every column of it, generated
// columns too. SQLite is dynamically typed: whatever a column is declared as,
// every value that is not NULL becomes an Item: TEXT and BLOB as their bytes,
// INTEGER and REAL as their decimal text (a media_id 1234567890 names
// 1234567890.jpg; a REAL with an integer value, below 1e21, is written without
// a fraction or exponent, as JavaScript writes numbers, and a larger one is
// followed by its digits). Place.Key is the primary key, "col=value"
// (comma-joined when composite), or "rowid=N" for a table without one.
//
// With a query, its result columns become Items alike, except that the driver
// turns values of columns declared DATE, DATETIME or TIMESTAMP into times, which
// are not read (select +col to read the stored value). A value of any type
// the driver hands over that is none of these fails the read.

// A database in WAL mode after a clean shutdown has no -wal and -shm files.
// SQLite opens its WAL even for a read-only connection, creating both files, and
// a read-only connection cannot remove them when it closes (that takes the
// exclusive lock, which needs write access). So:
//   - where the folder is not writable, SQLite cannot create them and refuses to
//     open the database; then, and only then, it is opened with immutable=1
//     (no WAL, no locks). That is sound only while nobody writes the database,
//     which is likely (no -wal: no connection is open) but not certain (a writer
//     with more rights may start during the read). So the database file's
//     identity, size and modification time are compared before and after the
//     walk, and a -wal that appeared means a writer started: either makes the
//     read incomplete (an Item with Err).
//   - where the folder is writable, a writer may be live at any moment, so the
//     normal locking read is kept, and the -wal and -shm it created are removed
//     after Close the way SQLite removes them: by the close of a connection that
//     gets the exclusive lock, i.e. only when no other connection has the
//     database open (a writer that started meanwhile keeps its files). That
//     connection opens the file read-write, runs a read and closes; with nothing
//     in the WAL its close writes nothing into the database. Where it cannot
//     (the database file itself is read-only), the empty -wal and the -shm stay.
type sqliteSource struct {
	spec  string
	path  string
	query string
	db    *sql.DB
	// file is path with every symbolic link resolved: SQLite keeps the
	// -wal and -shm beside the file a link leads to, not beside the link,
	// and that is where they are looked for.
	file string

	// immutable: opened with immutable=1; before is the file as it was then.
	immutable bool
	before    fs.FileInfo
	// cleanWAL: the database is in WAL mode and had no -wal nor -shm when
	// opened, in a writable folder: Close removes what the read created.
	cleanWAL bool
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
	file, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	s := &sqliteSource{spec: spec, path: path, query: query, file: file}
	dsn := sqliteDSN
	if sqliteWALMode(file) && !exists(file+"-wal") {
		if sqliteDirWritable(filepath.Dir(file)) {
			s.cleanWAL = !exists(file + "-shm")
		} else {
			s.immutable, s.before, dsn = true, fi, sqliteImmutableDSN
		}
	}
	s.db, err = openSQLiteDB(ctx, path, dsn, "read-only")
	if err != nil {
		return nil, err
	}
	// Each Walk opens the file anew: a database replaced by rename since
	// the last one (a restore, VACUUM INTO and a move) is read as it is now,
	// not through a connection that still holds the old file.
	s.db.SetMaxIdleConns(0)
	return s, nil
}

// sqliteWALMode reports whether the database file's header says WAL mode
// (file format version numbers 2 at offsets 18 and 19).
func sqliteWALMode(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 20)
	if _, err := f.ReadAt(head, 0); err != nil {
		return false
	}
	return string(head[:16]) == string(sqliteMagic) && head[18] == 2 && head[19] == 2
}

// sqliteDirWritable is dirWritable; tests replace it.
var sqliteDirWritable = dirWritable

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
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

// sqliteImmutableDSN opens an absolute path read-only as immutable: SQLite
// takes no locks and reads no WAL (see sqliteSource for when this is used).
func sqliteImmutableDSN(abs string) string {
	return sqliteDSN(abs) + "&immutable=1"
}

// sqliteCleanupDSN opens an absolute path read-write without creating it, only
// so that its close removes an empty WAL and the -shm (see sqliteSource).
func sqliteCleanupDSN(abs string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return u.String() + "?mode=rw&_query_only=1&_busy_timeout=" + strconv.Itoa(sqliteBusyTimeoutMS)
}

func (s *sqliteSource) String() string { return s.spec }

func (s *sqliteSource) Close() error {
	err := s.db.Close()
	if s.cleanWAL && err == nil && (exists(s.file+"-wal") || exists(s.file+"-shm")) {
		s.removeWAL()
	}
	return err
}

// removeWAL lets SQLite remove the -wal and -shm our read created: the last
// connection to close removes them, if it can take the exclusive lock.
func (s *sqliteSource) removeWAL() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	db, err := openSQLiteDB(ctx, s.path, sqliteCleanupDSN, "read-write")
	if err != nil {
		return
	}
	var n int
	db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n) // opens the WAL
	db.Close()
}

// checkUnchanged reports an immutable read that a writer may have torn.
func (s *sqliteSource) checkUnchanged() error {
	now, err := os.Stat(s.file)
	switch {
	case err != nil:
		return fmt.Errorf("%s was read without locks (its folder is not writable) and cannot be checked afterwards: %w", s.path, err)
	case !os.SameFile(now, s.before) || now.Size() != s.before.Size() || !now.ModTime().Equal(s.before.ModTime()):
		return fmt.Errorf("%s was written while it was read without locks (its folder is not writable, so SQLite cannot share its WAL): the read may be inconsistent; read it again", s.path)
	case exists(s.file + "-wal"):
		return fmt.Errorf("%s: a writer opened the database while it was read without locks (its folder is not writable): the read may miss what it wrote; read it again", s.path)
	}
	return nil
}

// sqliteTablesQuery lists the user tables.
const sqliteTablesQuery = `SELECT name FROM sqlite_master
	WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
	AND COALESCE(sql, '') NOT LIKE 'CREATE VIRTUAL TABLE%'
	ORDER BY name`

// sqliteColumnsQuery lists a table's columns (see sqliteColumns).
const sqliteColumnsQuery = `SELECT name, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid`

// sqliteTables lists the user tables. The first read also fixes the snapshot.
func sqliteTables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, sqliteTablesQuery)
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

// sqliteColumns returns a table's columns in order, whether each is generated,
// and its primary key columns in key order.
//
// Generated columns (GENERATED ALWAYS AS, VIRTUAL or STORED) are columns like
// the others to a read, and may be the only place a row spells a name
// (json_extract(content, '$.path'), '/media/' || id || '.jpg'):
// pragma_table_xinfo lists them, where pragma_table_info leaves them out. Its
// hidden column is 2 for a VIRTUAL and 3 for a STORED generated column, and 1
// for a hidden column of a virtual table, which is not read as a table.
func sqliteColumns(ctx context.Context, tx *sql.Tx, table string) (cols []string, generated []bool, pk []string, err error) {
	rows, err := tx.QueryContext(ctx, sqliteColumnsQuery, table)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	type pkCol struct {
		name string
		pos  int
	}
	var pks []pkCol
	for rows.Next() {
		var name string
		var pos, hidden int
		if err := rows.Scan(&name, &pos, &hidden); err != nil {
			return nil, nil, nil, err
		}
		cols = append(cols, name)
		generated = append(generated, hidden >= 2)
		if pos > 0 {
			pks = append(pks, pkCol{name, pos})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	pk = make([]string, len(pks))
	for _, p := range pks {
		if p.pos <= len(pk) {
			pk[p.pos-1] = p.name
		}
	}
	return cols, generated, pk, nil
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

// itemValue returns a value Walk yields as a Value's text, which the caller
// owns: TEXT and BLOB as their bytes, INTEGER and REAL as their decimal text,
// a REAL followed by its integer forms when it has others ("1e+22
// 10000000000000000000000"); ok is false for NULL. Any other type is an
// error, never skipped.
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
		var buf [24]byte
		return a.number(appendReal(buf[:0], v)), true, nil
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
