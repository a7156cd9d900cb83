package sessions

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mediactl/mediactl/pkg/ref"
)

// rawSQLite is a read-only connection of SQLite's own API (the library the
// driver is built on), for Walk's reading of tables: the driver takes the
// connection's mutex for every value, and makes a Go string or an
// interface of each, which cost more than SQLite's reading of them. Here a
// value is copied once, from SQLite's memory into the Item's text.
//
// It is opened as the driver opens the source: the same file: URI with
// mode=ro (and immutable=1 where the source is read without locks),
// query_only and the busy timeout; without the mutex, since one goroutine
// uses it at a time. Everything Walk reads goes through one read
// transaction on it: one snapshot.
type rawSQLite struct {
	tls *libc.TLS
	db  uintptr
	out uintptr // an out-parameter (sqlite3** or sqlite3_stmt**), allocated once
}

func openRawSQLite(path string, immutable bool) (*rawSQLite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	uri := u.String() + "?mode=ro"
	if immutable {
		uri += "&immutable=1"
	}
	r := &rawSQLite{tls: libc.NewTLS()}
	r.out = sqlite3.Xsqlite3_malloc(r.tls, 8)
	if r.out == 0 {
		r.tls.Close()
		return nil, errors.New("out of memory")
	}
	cname, err := libc.CString(uri)
	if err != nil {
		r.close()
		return nil, err
	}
	rc := sqlite3.Xsqlite3_open_v2(r.tls, cname, r.out, sqlite3.SQLITE_OPEN_READONLY|sqlite3.SQLITE_OPEN_URI|sqlite3.SQLITE_OPEN_NOMUTEX, 0)
	libc.Xfree(r.tls, cname)
	r.db = cPtr(r.out)
	if rc != sqlite3.SQLITE_OK {
		err := r.err(rc)
		r.close()
		return nil, fmt.Errorf("open %s read-only: %w", path, err)
	}
	sqlite3.Xsqlite3_busy_timeout(r.tls, r.db, sqliteBusyTimeoutMS)
	if err := r.exec("PRAGMA query_only = 1"); err != nil {
		r.close()
		return nil, fmt.Errorf("open %s read-only: %w", path, err)
	}
	return r, nil
}

func (r *rawSQLite) close() {
	if r.db != 0 {
		sqlite3.Xsqlite3_close_v2(r.tls, r.db)
		r.db = 0
	}
	if r.out != 0 {
		sqlite3.Xsqlite3_free(r.tls, r.out)
		r.out = 0
	}
	r.tls.Close()
}

// err is the connection's error for result code rc.
func (r *rawSQLite) err(rc int32) error {
	msg := ""
	if r.db != 0 {
		msg = libc.GoString(sqlite3.Xsqlite3_errmsg(r.tls, r.db))
	}
	if msg == "" {
		msg = libc.GoString(sqlite3.Xsqlite3_errstr(r.tls, rc))
	}
	return fmt.Errorf("%s (%d)", msg, rc)
}

func (r *rawSQLite) exec(sql string) error {
	st, err := r.prepare(sql)
	if err != nil {
		return err
	}
	defer st.finalize()
	for {
		row, err := st.step()
		if err != nil || !row {
			return err
		}
	}
}

// rawStmt is a prepared statement of a rawSQLite.
type rawStmt struct {
	r *rawSQLite
	p uintptr
}

func (r *rawSQLite) prepare(sql string) (rawStmt, error) {
	csql, err := libc.CString(sql)
	if err != nil {
		return rawStmt{}, err
	}
	defer libc.Xfree(r.tls, csql)
	if rc := sqlite3.Xsqlite3_prepare_v2(r.tls, r.db, csql, -1, r.out, 0); rc != sqlite3.SQLITE_OK {
		return rawStmt{}, r.err(rc)
	}
	return rawStmt{r, cPtr(r.out)}, nil
}

func (s rawStmt) finalize() {
	if s.p != 0 {
		sqlite3.Xsqlite3_finalize(s.r.tls, s.p)
	}
}

// step reports whether there is a row; an error is any other result than
// a row or the end.
func (s rawStmt) step() (bool, error) {
	switch rc := sqlite3.Xsqlite3_step(s.r.tls, s.p); rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	default:
		return false, s.r.err(rc)
	}
}

func (s rawStmt) columns() int { return int(sqlite3.Xsqlite3_column_count(s.r.tls, s.p)) }

func (s rawStmt) kind(i int) int32 { return sqlite3.Xsqlite3_column_type(s.r.tls, s.p, int32(i)) }

// text is a TEXT value's UTF-8 bytes (or a value's text form), valid until
// the next step.
func (s rawStmt) text(i int) []byte {
	p := sqlite3.Xsqlite3_column_text(s.r.tls, s.p, int32(i))
	n := int(sqlite3.Xsqlite3_column_bytes(s.r.tls, s.p, int32(i)))
	return cBytes(p, n)
}

// blob is a BLOB value's bytes, valid until the next step.
func (s rawStmt) blob(i int) []byte {
	p := sqlite3.Xsqlite3_column_blob(s.r.tls, s.p, int32(i))
	n := int(sqlite3.Xsqlite3_column_bytes(s.r.tls, s.p, int32(i)))
	return cBytes(p, n)
}

func (s rawStmt) int64(i int) int64 { return sqlite3.Xsqlite3_column_int64(s.r.tls, s.p, int32(i)) }

func (s rawStmt) float64(i int) float64 {
	return sqlite3.Xsqlite3_column_double(s.r.tls, s.p, int32(i))
}

// cPtr reads the pointer SQLite wrote at p.
func cPtr(p uintptr) uintptr {
	return **(**uintptr)(unsafe.Pointer(&p))
}

// cBytes is a view of n bytes of SQLite's memory at p (not Go's: the
// collector neither moves nor frees it).
func cBytes(p uintptr, n int) []byte {
	if p == 0 || n <= 0 {
		return nil
	}
	return unsafe.Slice(*(**byte)(unsafe.Pointer(&p)), n)
}

// walkTablesRaw is walkTables on a rawSQLite: the same tables, columns,
// select, values and places as the driver's read (see itemValue and
// renderValue, which this mirrors value by value).
func (s *sqliteSource) walkTablesRaw(ctx context.Context, r *rawSQLite, fn func(Item) error, c *Counts) error {
	if err := r.exec("BEGIN"); err != nil {
		return fmt.Errorf("begin read transaction on %s: %w", s.path, err)
	}
	// Read-only: nothing to commit; rollback ends the snapshot.
	defer r.exec("ROLLBACK")
	var tables []string
	err := r.each(sqliteTablesQuery, func(st rawStmt) error {
		tables = append(tables, string(st.text(0)))
		return nil
	})
	if err != nil {
		return fmt.Errorf("list tables of %s: %w", s.path, err)
	}
	for _, t := range tables {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.walkTableRaw(ctx, r, t, fn, c); err != nil {
			return err
		}
	}
	return nil
}

// each runs a query and calls fn on every row.
func (r *rawSQLite) each(sql string, fn func(rawStmt) error) error {
	st, err := r.prepare(sql)
	if err != nil {
		return err
	}
	defer st.finalize()
	for {
		row, err := st.step()
		if err != nil || !row {
			return err
		}
		if err := fn(st); err != nil {
			return err
		}
	}
}

// sqliteString quotes an SQLite string literal.
func sqliteString(s string) string {
	return `'` + strings.ReplaceAll(s, `'`, `''`) + `'`
}

func (s *sqliteSource) walkTableRaw(ctx context.Context, r *rawSQLite, table string, fn func(Item) error, c *Counts) error {
	tableErr := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A problem confined to this table (a corrupt page, an unknown collation):
		// report it and go on with the others.
		return fn(Item{Place: ref.Place{Source: s.spec, Table: table, Offset: -1}, Size: -1,
			Err: fmt.Errorf("read table %s: %w", table, err)})
	}
	if strings.IndexByte(table, 0) >= 0 {
		return tableErr(errors.New("a table name holding a NUL"))
	}
	type pkCol struct {
		name string
		pos  int64
	}
	var cols []string
	var pks []pkCol
	err := r.each(strings.Replace(sqliteColumnsQuery, "?", sqliteString(table), 1), func(st rawStmt) error {
		name := string(st.text(0))
		cols = append(cols, name)
		if pos := st.int64(1); pos > 0 {
			pks = append(pks, pkCol{name, pos})
		}
		return nil
	})
	if err != nil {
		return tableErr(err)
	}
	if len(cols) == 0 {
		return nil
	}
	pk := make([]string, len(pks))
	for _, p := range pks {
		if p.pos <= int64(len(pk)) {
			pk[p.pos-1] = p.name
		}
	}
	keyNames := sqliteKeyNames(cols, pk)
	nk := len(keyNames)
	st, err := r.prepare(sqliteSelect(table, keyNames, cols))
	if err != nil {
		return tableErr(err)
	}
	defer st.finalize()
	if st.columns() != nk+len(cols) {
		return tableErr(fmt.Errorf("the select gave %d columns, not %d", st.columns(), nk+len(cols)))
	}
	var arena valueArena
	var row rowValues
	var keyBuf []byte
	for n := 0; ; n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		more, err := st.step()
		if err != nil {
			return tableErr(err)
		}
		if !more {
			return nil
		}
		c.Rows++
		for i := nk; i < nk+len(cols); i++ {
			var text []byte
			switch st.kind(i) {
			case sqlite3.SQLITE_NULL:
				continue
			case sqlite3.SQLITE_TEXT:
				text = arena.copy(st.text(i))
				if text == nil {
					text = []byte{} // an empty string, as the driver's is
				}
			case sqlite3.SQLITE_BLOB:
				if b := st.blob(i); len(b) > 0 {
					text = append([]byte(nil), b...)
				}
			case sqlite3.SQLITE_INTEGER:
				v := st.int64(i)
				text = arena.appendWith(func(b []byte) []byte { return strconv.AppendInt(b, v, 10) })
			case sqlite3.SQLITE_FLOAT:
				var buf [24]byte
				text = arena.number(appendReal(buf[:0], st.float64(i)))
			default:
				return tableErr(fmt.Errorf("column %s: a value of storage class %d", cols[i-nk], st.kind(i)))
			}
			row.add(cols[i-nk], text)
		}
		if row.empty() {
			continue
		}
		key := ""
		if nk > 0 {
			keyBuf = appendRawKey(keyBuf[:0], keyNames, st)
			key = string(keyBuf)
		}
		if err := fn(Item{Place: ref.Place{Source: s.spec, Table: table, Key: key, Offset: -1}, Size: -1, Values: row.take()}); err != nil {
			return err
		}
	}
}

// appendRawKey renders the row's key columns as renderKey does the
// driver's values: "a=1,b=x", a BLOB as x'…', NULL as NULL.
func appendRawKey(b []byte, names []string, st rawStmt) []byte {
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, n...)
		b = append(b, '=')
		switch st.kind(i) {
		case sqlite3.SQLITE_NULL:
			b = append(b, "NULL"...)
		case sqlite3.SQLITE_TEXT:
			b = append(b, st.text(i)...)
		case sqlite3.SQLITE_BLOB:
			b = append(b, "x'"...)
			b = hex.AppendEncode(b, st.blob(i))
			b = append(b, '\'')
		case sqlite3.SQLITE_INTEGER:
			b = strconv.AppendInt(b, st.int64(i), 10)
		case sqlite3.SQLITE_FLOAT:
			b = strconv.AppendFloat(b, st.float64(i), 'g', -1, 64)
		}
	}
	return b
}
