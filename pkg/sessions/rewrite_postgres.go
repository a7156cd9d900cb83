package sessions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mediactl/mediactl/pkg/ref"
)

// pgLockTimeout bounds how long a write waits for a row (or table) lock held by
// another transaction: past it, the row counts as changing under us. A variable
// for tests.
var pgLockTimeout = "10s"

// pgRewriter reads through the source's read-only connection, in one snapshot,
// and writes through a read-write connection of its own; see OpenRewriter.
type pgRewriter struct {
	src  *pgSource
	mu   sync.Mutex // one Rewrite at a time on conn
	conn *pgx.Conn  // read-write
}

func openPostgresRewriter(ctx context.Context, src *pgSource, spec string) (*pgRewriter, error) {
	cfg, _, host, err := pgConfig(spec)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["lock_timeout"] = pgLockTimeout
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to PostgreSQL at %s: %w", host, err)
	}
	return &pgRewriter{src: src, conn: conn}, nil
}

func (w *pgRewriter) String() string { return w.src.spec }

func (w *pgRewriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(w.conn.Close(ctx), w.src.Close())
}

func (w *pgRewriter) Rewrite(ctx context.Context, edit Edit, opts RewriteOptions) (RewriteCounts, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := newRewriteRun(w.src.spec, edit, opts)
	s := &sqlRewrite{r: r, b: &pgBackend{conn: w.conn}}
	err := w.read(ctx, s)
	if err == nil {
		err = s.finish(ctx)
	}
	return r.result(err)
}

// read reads every table in Walk's snapshot and offers every value of a
// text-like column (see pgTable.rewritable), with Walk's place. Walk reads more:
// materialized views, and columns of numbers, bytea, composite and other types
// that the rewriter does not write; they are not offered at all. Tables and
// columns the operator excluded are not read, as Walk does not read them.
func (w *pgRewriter) read(ctx context.Context, s *sqlRewrite) error {
	src := w.src
	return src.inSnapshot(ctx, func(tx pgx.Tx, types pgTypes) error {
		tables, err := pgTables(ctx, tx, types)
		if err != nil {
			return src.fail("list tables", err)
		}
		for _, t := range tables {
			if src.excluded(t) {
				continue
			}
			t = t.keepCols(func(i int) bool { return !src.excludedCol(t, t.cols[i]) })
			t = t.rewritable()
			if t == nil {
				continue
			}
			if err := w.readTable(ctx, tx, t, types, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// readTable offers one table's values, in Walk's savepoint.
func (w *pgRewriter) readTable(ctx context.Context, tx pgx.Tx, t *pgTable, types pgTypes, s *sqlRewrite) error {
	tableErr, fatal := w.src.inTableSavepoint(ctx, tx, t, func(sp pgx.Tx) (fnErr, err error) {
		return w.offerRows(ctx, sp, t, types, s)
	})
	if fatal != nil {
		return fatal
	}
	if tableErr != nil {
		s.r.fail(ref.Place{Source: w.src.spec, Table: t.label(), Offset: -1}, tableErr)
	}
	return nil
}

func (w *pgRewriter) offerRows(ctx context.Context, tx pgx.Tx, t *pgTable, types pgTypes, s *sqlRewrite) (fatal, err error) {
	q, keyNames := pgTableSelect(t)
	rows, err := tx.Query(ctx, q, pgx.QueryExecModeDescribeExec, pgTextFormats)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	nk := len(keyNames)
	label := t.label()
	table := newPGWriteTable(t, types)
	isKey := make([]bool, len(t.cols))
	for i, c := range t.cols {
		isKey[i] = slices.Contains(t.pk, c) // Postgres names are case-sensitive once read
	}
	for rows.Next() {
		raw := rows.RawValues()
		key := ""
		var keyVals [][]byte
		for i := nk; i < len(raw); i++ {
			if raw[i] == nil {
				continue
			}
			if key == "" {
				key = renderRawKey(keyNames, raw[:nk])
				keyVals = make([][]byte, nk)
				for j := range nk {
					keyVals[j] = append([]byte(nil), raw[j]...)
				}
			}
			u := &sqlUnit{
				place: ref.Place{Source: w.src.spec, Table: label, Key: key, Column: t.cols[i-nk], Offset: -1},
				old:   append([]byte(nil), raw[i]...),
				cell:  &pgCell{t: table, keyVals: keyVals, col: i - nk},
				// Never written: see sqlRewrite.finish.
				generated: t.colGenerated[i-nk],
			}
			switch {
			case len(t.pk) == 0:
				u.unaddressable = "the table has no primary key: its rows have no stable identity (a ctid changes with every update), so they are not rewritten; add a primary key to rewrite them"
			case isKey[i-nk]:
				u.unaddressable = keyColumnRefusal
			}
			if err := s.offer(ctx, u); err != nil {
				return err, nil
			}
		}
	}
	return nil, rows.Err()
}

// pgWriteTable is what writing to one table needs: its name, its key, and per
// text-like column the statements and how its type keeps text.
type pgWriteTable struct {
	from string // "ONLY schema.table", or "schema.table" when partitioned
	pk   []string
	cols []pgWriteCol
}

type pgWriteCol struct {
	ident   string // quoted
	typeSQL string // format_type
	// plain: type text, which keeps every valid text as is, needs no normalizing.
	plain bool
	// exact: a string type (varchar(n), char(n), name, citext, domains of them):
	// the stored text must equal the new text, or the type changed it
	// (truncated, padded) and the value is refused.
	exact        bool
	cas, reread  string
	normalizeSQL string
}

func newPGWriteTable(t *pgTable, types pgTypes) *pgWriteTable {
	wt := &pgWriteTable{from: pgIdent(t.schema) + "." + pgIdent(t.name), pk: t.pk}
	if !t.partitioned {
		wt.from = "ONLY " + wt.from
	}
	// The key's text form, parsed by the key column's type: the index is used.
	// No statement is ever run on a table without a primary key.
	casKey, rereadKey := pgKeyCond(t.pk, 2), pgKeyCond(t.pk, 1)
	for i, col := range t.cols {
		id := pgIdent(col)
		c := pgWriteCol{
			ident:   id,
			typeSQL: t.colTypeSQL[i],
			plain:   t.colTypeSQL[i] == "text",
			exact:   types.stringType(t.colTypes[i]),
		}
		// The new text ($1) is converted by the column's type; the old one
		// compared with the value's text form, byte for byte.
		c.cas = fmt.Sprintf(`UPDATE %s SET %s = $1 WHERE %s AND (%s::text) COLLATE "C" = $%d RETURNING %s::text`,
			wt.from, id, casKey, id, len(t.pk)+2, id)
		c.reread = fmt.Sprintf("SELECT %s::text FROM %s WHERE %s", id, wt.from, rereadKey)
		// The text form, and whether the type modifier (a length) changed the
		// value: an explicit cast truncates where an assignment would fail.
		c.normalizeSQL = fmt.Sprintf("SELECT ($1::%s)::text, true", c.typeSQL)
		if base := t.colTypeSQL0[i]; base != c.typeSQL {
			c.normalizeSQL = fmt.Sprintf("SELECT ($1::%s)::text, ($1::%s)::text = ($1::%s)::text", c.typeSQL, c.typeSQL, base)
		}
		wt.cols = append(wt.cols, c)
	}
	return wt
}

// pgKeyCond is the condition on the primary key, its values as $first….
func pgKeyCond(pk []string, first int) string {
	var where []string
	for i, k := range pk {
		where = append(where, pgIdent(k)+" = $"+strconv.Itoa(first+i))
	}
	return strings.Join(where, " AND ")
}

// stringType reports whether values of a type are plain strings (category S,
// directly or through domains), whose text form is the value itself.
func (m pgTypes) stringType(oid uint32) bool {
	_, t, ok := m.resolveDomain(oid, false)
	return ok && t.category == "S"
}

// pgCell finds a value again: its table, the row's key as text, the column.
type pgCell struct {
	t       *pgWriteTable
	keyVals [][]byte
	col     int
}

func (c *pgCell) column() *pgWriteCol { return &c.t.cols[c.col] }

// pgBackend writes through the rewriter's read-write connection, in READ
// COMMITTED transactions. Parameters are sent as text of no declared type, so
// that the server parses each with the type of what it is compared with or
// assigned to.
type pgBackend struct {
	conn *pgx.Conn
	tx   pgx.Tx
}

// pgRefused is a value the column's type would not keep as it is.
type pgRefused struct{ msg string }

func (e *pgRefused) Error() string { return e.msg }

// query runs one statement and returns its rows, in text form (nil for NULL).
func (b *pgBackend) query(ctx context.Context, sql string, params ...[]byte) ([][][]byte, error) {
	res := b.conn.PgConn().ExecParams(ctx, sql, params, nil, nil, nil).Read()
	return res.Rows, res.Err
}

// exec runs one statement and returns its rows' first values (nil for NULL).
func (b *pgBackend) exec(ctx context.Context, sql string, params ...[]byte) ([][]byte, error) {
	rows, err := b.query(ctx, sql, params...)
	if err != nil {
		return nil, err
	}
	vals := make([][]byte, 0, len(rows))
	for _, row := range rows {
		if len(row) == 0 {
			vals = append(vals, nil)
			continue
		}
		vals = append(vals, row[0])
	}
	return vals, nil
}

// normalize asks the server for the text form the column's type makes of the new
// text: jsonb normalizes spaces and key order, arrays their quoting. For string
// types the text must come back unchanged.
func (b *pgBackend) normalize(ctx context.Context, u *sqlUnit) ([]byte, error) {
	col := u.cell.(*pgCell).column()
	if col.plain {
		return u.new, nil
	}
	rows, err := b.query(ctx, col.normalizeSQL, u.new)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 || len(rows[0]) != 2 || rows[0][0] == nil {
		return nil, &pgRefused{fmt.Sprintf("the column's type %s does not keep the new value", col.typeSQL)}
	}
	stored, kept := rows[0][0], string(rows[0][1]) == "t"
	if !kept || col.exact && string(stored) != string(u.new) {
		return nil, &pgRefused{fmt.Sprintf("the column's type %s would not keep the new value as it is (it would store %q): not written", col.typeSQL, truncateForMessage(stored))}
	}
	return stored, nil
}

func truncateForMessage(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

func (b *pgBackend) begin(ctx context.Context) error {
	tx, err := b.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite})
	if err != nil {
		return err
	}
	b.tx = tx
	return nil
}

func (b *pgBackend) commit(ctx context.Context) error {
	tx := b.tx
	b.tx = nil
	return tx.Commit(ctx)
}

func (b *pgBackend) rollback(ctx context.Context) error {
	if b.tx == nil {
		return nil
	}
	tx := b.tx
	b.tx = nil
	return pgRollback(ctx, tx)
}

func (b *pgBackend) cas(ctx context.Context, u *sqlUnit) ([]byte, bool, error) {
	c := u.cell.(*pgCell)
	params := make([][]byte, 0, len(c.keyVals)+2)
	params = append(params, u.new)
	params = append(params, c.keyVals...)
	params = append(params, u.old)
	vals, err := b.exec(ctx, c.column().cas, params...)
	if err != nil {
		return nil, false, err
	}
	if len(vals) == 0 {
		return nil, false, nil
	}
	if len(vals) > 1 {
		// A primary key matches one row; anything else is a bug worth stopping for.
		return nil, false, fmt.Errorf("the update matched %d rows", len(vals))
	}
	return vals[0], true, nil
}

func (b *pgBackend) reread(ctx context.Context, u *sqlUnit) ([]byte, bool, error) {
	c := u.cell.(*pgCell)
	vals, err := b.exec(ctx, c.column().reread, c.keyVals...)
	if err != nil {
		return nil, false, err
	}
	if len(vals) == 0 || vals[0] == nil {
		return nil, false, nil
	}
	return vals[0], true, nil
}

// unitError: the server refused the statement for its data (a value its type
// rejects, a constraint, a trigger's exception, a missing privilege), as opposed
// to the connection or the server failing.
func (b *pgBackend) unitError(err error) bool {
	var refused *pgRefused
	if errors.As(err, &refused) {
		return true
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || len(pe.Code) < 2 {
		return false
	}
	switch pe.Code[:2] {
	case "08", // connection exception
		"25", // invalid transaction state (read-only transaction, …)
		"53", // insufficient resources (disk full, out of memory)
		"57", // operator intervention (shutdown, canceled)
		"58", // system error
		"XX": // internal error
		return false
	}
	return true
}

// conflictError: the row is locked or in a deadlock with another transaction.
func (b *pgBackend) conflictError(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "55P03", // lock_not_available (lock_timeout)
		"40P01", // deadlock_detected
		"40001": // serialization_failure
		return true
	}
	return false
}
