package sessions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"modernc.org/sqlite"

	"github.com/mediactl/mediactl/pkg/ref"
)

// sqliteRewriter reads through the source's read-only connection and writes
// through a read-write one of its own; see OpenRewriter.
type sqliteRewriter struct {
	src *sqliteSource
	db  *sql.DB // read-write, one connection
}

func openSQLiteRewriter(ctx context.Context, src *sqliteSource) (*sqliteRewriter, error) {
	db, err := openSQLiteDB(ctx, src.path, sqliteWriteDSN, "read-write")
	if err != nil {
		return nil, err
	}
	return &sqliteRewriter{src: src, db: db}, nil
}

// sqliteWriteDSN opens an existing database read-write (mode=rw never creates
// it); transactions begin IMMEDIATE, taking the write lock up front, and wait up
// to the busy timeout for a live writer to finish its own.
func sqliteWriteDSN(abs string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return u.String() + "?mode=rw&_txlock=immediate&_busy_timeout=" + strconv.Itoa(sqliteBusyTimeoutMS)
}

func (w *sqliteRewriter) String() string { return w.src.spec }

func (w *sqliteRewriter) Close() error {
	return errors.Join(w.db.Close(), w.src.Close())
}

func (w *sqliteRewriter) Rewrite(ctx context.Context, edit Edit, opts RewriteOptions) (RewriteCounts, error) {
	r := newRewriteRun(w.src.spec, edit, opts)
	var mode string
	if err := w.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return r.result(fmt.Errorf("read the journal mode of %s: %w", w.src.path, err))
	}
	s := &sqlRewrite{r: r, b: &sqliteBackend{db: w.db}, deferWrites: !strings.EqualFold(mode, "wal")}
	err := w.read(ctx, s)
	if err == nil {
		// After the read transaction ended: without WAL, it blocked our writes.
		err = s.finish(ctx)
	}
	return r.result(err)
}

// read reads every table in one read transaction, as Walk does, and offers every
// TEXT or BLOB value, with Walk's place, those of generated columns too (see
// sqlRewrite.finish). Walk also reads INTEGER and REAL values, as their
// decimal text; they are not offered (a number is not rewritten).
func (w *sqliteRewriter) read(ctx context.Context, s *sqlRewrite) error {
	tx, err := w.src.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read transaction on %s: %w", w.src.path, err)
	}
	defer tx.Rollback()
	tables, err := sqliteTables(ctx, tx)
	if err != nil {
		return fmt.Errorf("list tables of %s: %w", w.src.path, err)
	}
	shadow := sqliteShadowTables(ctx, tx)
	for _, t := range tables {
		fatal, err := w.readTable(ctx, tx, t, shadow[t], s)
		if fatal != nil {
			return fatal
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.r.fail(ref.Place{Source: w.src.spec, Table: t, Offset: -1}, fmt.Errorf("read table %s: %w", t, err))
		}
	}
	return nil
}

// readTable offers a table's values. fatal stops the rewrite; err is a problem
// reading this table.
func (w *sqliteRewriter) readTable(ctx context.Context, tx *sql.Tx, table string, shadow bool, s *sqlRewrite) (fatal, err error) {
	cols, generated, pk, err := sqliteColumns(ctx, tx, table)
	if err != nil || len(cols) == 0 {
		return nil, err
	}
	keyNames := sqliteKeyNames(cols, pk)
	rows, err := tx.QueryContext(ctx, sqliteSelect(table, keyNames, cols))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vals := make([]any, len(keyNames)+len(cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	nk := len(keyNames)
	// Why a column's values are never written, whatever the row. Without key
	// names no column is a key column, so testing nk == 0 after the key
	// columns, as the refusals are ranked, gives the same reasons.
	colRefusal := make([]string, len(cols))
	for j, isKey := range keyColumns(cols, keyNames) {
		switch {
		case shadow:
			colRefusal[j] = shadowTableRefusal
		case isKey:
			colRefusal[j] = keyColumnRefusal
		case nk == 0:
			colRefusal[j] = "the table has no primary key and columns named rowid, _rowid_ and oid hide its rowid: its rows cannot be found again, so they are not rewritten"
		}
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		key := ""
		var keyVals []any
		for i, v := range vals {
			if i < nk {
				continue
			}
			text, ok := textValue(v)
			if !ok {
				continue // not text: not a unit
			}
			_, blob := v.([]byte)
			if keyVals == nil && nk > 0 {
				key = renderKey(keyNames, vals[:nk])
				keyVals = append([]any(nil), vals[:nk]...)
			}
			unaddressable := colRefusal[i-nk]
			if unaddressable == "" && hasNil(keyVals) {
				unaddressable = "the row's primary key holds NULL: it cannot be found again safely, so it is not rewritten"
			}
			u := &sqlUnit{
				place:         ref.Place{Source: w.src.spec, Table: table, Key: key, Column: cols[i-nk], Offset: -1},
				old:           text,
				cell:          &sqliteCell{table: table, keyNames: keyNames, keyVals: keyVals, col: cols[i-nk], blob: blob},
				unaddressable: unaddressable,
				generated:     generated[i-nk],
			}
			if err := s.offer(ctx, u); err != nil {
				return err, nil
			}
		}
	}
	return nil, rows.Err()
}

// shadowTableRefusal is why a value of a shadow table is not rewritten.
const shadowTableRefusal = "the table holds the data of a virtual table (such as a full-text index): writing it directly would corrupt that table, so it is not rewritten"

// sqliteShadowTables names the tables that hold the data of virtual tables
// (fts5's name_content, name_data…), which Walk reads as ordinary tables. Where
// SQLite cannot tell (before 3.37), none.
func sqliteShadowTables(ctx context.Context, tx *sql.Tx) map[string]bool {
	shadow := map[string]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'`)
	if err != nil {
		return shadow
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			shadow[n] = true
		}
	}
	return shadow
}

// keyColumnRefusal is why a value of a key column is not rewritten.
const keyColumnRefusal = "the value is part of the row's primary key: rewriting it would change which row it is (and break references to the row), so it is not rewritten"

// keyColumns tells which of cols are key columns.
func keyColumns(cols, keyNames []string) []bool {
	is := make([]bool, len(cols))
	for i, c := range cols {
		for _, k := range keyNames {
			if strings.EqualFold(c, k) {
				is[i] = true
			}
		}
	}
	return is
}

func hasNil(vals []any) bool {
	for _, v := range vals {
		if v == nil {
			return true
		}
	}
	return false
}

// sqliteCell finds a value again: its table, the row's key and the column, and
// the value's storage class.
type sqliteCell struct {
	table    string
	keyNames []string
	keyVals  []any
	col      string
	blob     bool // stored as BLOB, else TEXT
}

// where is the row condition, with the key values as arguments ?first…
func (c *sqliteCell) where(first int) string {
	var b strings.Builder
	for i, k := range c.keyNames {
		if i > 0 {
			b.WriteString(" AND ")
		}
		fmt.Fprintf(&b, "%s = ?%d", sqliteIdent(k), first+i)
	}
	return b.String()
}

// value binds text with the cell's storage class.
func (c *sqliteCell) value(text []byte) any {
	if c.blob {
		return text
	}
	return string(text)
}

func (c *sqliteCell) class() string {
	if c.blob {
		return "blob"
	}
	return "text"
}

// sqliteBackend writes through the rewriter's read-write connection.
type sqliteBackend struct {
	db *sql.DB
	tx *sql.Tx
}

// sqliteRefused is a value SQLite would not keep as it is.
type sqliteRefused struct{ msg string }

func (e *sqliteRefused) Error() string { return e.msg }

func (b *sqliteBackend) normalize(_ context.Context, u *sqlUnit) ([]byte, error) {
	return u.new, nil // TEXT and BLOB are kept byte for byte
}

func (b *sqliteBackend) begin(ctx context.Context) error {
	tx, err := b.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see sqliteWriteDSN)
	if err != nil {
		return err
	}
	b.tx = tx
	return nil
}

func (b *sqliteBackend) commit(context.Context) error {
	tx := b.tx
	b.tx = nil
	return tx.Commit()
}

func (b *sqliteBackend) rollback(context.Context) error {
	if b.tx == nil {
		return nil
	}
	tx := b.tx
	b.tx = nil
	return tx.Rollback()
}

// cas: the row by its key, and the value compared byte for byte, storage class
// included (unary + drops the column's affinity, COLLATE BINARY its collation).
// RETURNING typeof tells whether the column's affinity turned the new text into
// a number; the caller then rolls back.
func (b *sqliteBackend) cas(ctx context.Context, u *sqlUnit) ([]byte, bool, error) {
	c := u.cell.(*sqliteCell)
	col := sqliteIdent(c.col)
	n := len(c.keyNames)
	q := fmt.Sprintf("UPDATE %s SET %s = ?1 WHERE %s AND +%s = ?%d COLLATE BINARY RETURNING typeof(%s)",
		sqliteIdent(c.table), col, c.where(2), col, n+2, col)
	args := make([]any, 0, n+2)
	args = append(args, c.value(u.new))
	args = append(args, c.keyVals...)
	args = append(args, c.value(u.old))
	var typ string
	err := b.tx.QueryRowContext(ctx, q, args...).Scan(&typ)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	case typ != c.class():
		return nil, false, &sqliteRefused{fmt.Sprintf("SQLite would store the new value as %s, not %s (the column's declared type converts it): not written", typ, c.class())}
	}
	return u.new, true, nil
}

func (b *sqliteBackend) reread(ctx context.Context, u *sqlUnit) ([]byte, bool, error) {
	c := u.cell.(*sqliteCell)
	q := fmt.Sprintf("SELECT +%s FROM %s WHERE %s", sqliteIdent(c.col), sqliteIdent(c.table), c.where(1))
	var v any
	err := b.db.QueryRowContext(ctx, q, c.keyVals...).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	text, ok := textValue(v)
	if !ok {
		return nil, false, nil // NULL or a number now: no longer a unit
	}
	_, c.blob = v.([]byte)
	return text, true, nil
}

// unitError: SQLite refused the statement (a constraint, a trigger's RAISE, a
// value too big, a table that is gone), as opposed to the database being busy,
// read-only, full or broken.
func (b *sqliteBackend) unitError(err error) bool {
	var refused *sqliteRefused
	if errors.As(err, &refused) {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case 1, // SQLITE_ERROR: no such table or column, a trigger's error
		18, // SQLITE_TOOBIG
		19, // SQLITE_CONSTRAINT: also RAISE(ABORT) in a trigger
		20, // SQLITE_MISMATCH
		25: // SQLITE_RANGE
		return true
	}
	return false
}

func (b *sqliteBackend) conflictError(error) bool { return false }
