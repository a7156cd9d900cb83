package sessions

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/ref"
)

// sqliteConn reads through the driver's connection itself, below
// database/sql: a table of a million rows hands over ten million values, and
// database/sql's per-row locking and conversion of every value (a copy of
// each BLOB) cost as much as reading them. The driver's own values are ones
// the caller owns: a fresh string or []byte each, an int64, a float64.
type sqliteConn struct {
	q driver.QueryerContext
	b driver.ConnBeginTx
}

func newSQLiteConn(dc any) (sqliteConn, error) {
	q, ok1 := dc.(driver.QueryerContext)
	b, ok2 := dc.(driver.ConnBeginTx)
	if !ok1 || !ok2 {
		return sqliteConn{}, fmt.Errorf("the SQLite driver's connection (%T) cannot be queried directly", dc)
	}
	return sqliteConn{q: q, b: b}, nil
}

// each runs query and calls fn with every row's values, which fn may keep.
func (c sqliteConn) each(ctx context.Context, query string, args []driver.NamedValue, fn func(cols []string, vals []driver.Value) error) error {
	rows, err := c.q.QueryContext(ctx, query, args)
	if err != nil {
		return err
	}
	cols := rows.Columns()
	vals := make([]driver.Value, len(cols))
	for {
		err := rows.Next(vals)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			rows.Close()
			return err
		}
		if err := fn(cols, vals); err != nil {
			rows.Close()
			return err
		}
	}
	return rows.Close()
}

// Walk reads the database in one read transaction on one connection: one
// snapshot, fixed by the first read (the list of tables).
func (s *sqliteSource) Walk(ctx context.Context, fn func(Item) error) (c Counts, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return c, fmt.Errorf("begin read transaction on %s: %w", s.path, err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		dconn, err := newSQLiteConn(dc)
		if err != nil {
			return err
		}
		tx, err := dconn.b.BeginTx(ctx, driver.TxOptions{})
		if err != nil {
			return fmt.Errorf("begin read transaction on %s: %w", s.path, err)
		}
		// Read-only: nothing to commit; rollback ends the snapshot.
		defer tx.Rollback()
		if s.query != "" {
			return s.walkQuery(ctx, dconn, fn, &c)
		}
		return s.walkTables(ctx, dconn, fn, &c)
	})
	if err == nil && s.immutable {
		if cerr := s.checkUnchanged(); cerr != nil {
			err = fn(Item{Place: ref.Place{Source: s.spec, Offset: -1}, Size: -1, Err: cerr})
		}
	}
	return c, err
}

func (s *sqliteSource) walkTables(ctx context.Context, conn sqliteConn, fn func(Item) error, c *Counts) error {
	var tables []string
	err := conn.each(ctx, sqliteTablesQuery, nil, func(_ []string, v []driver.Value) error {
		n, ok := v[0].(string)
		if !ok {
			return fmt.Errorf("a table name of type %T", v[0])
		}
		tables = append(tables, n)
		return nil
	})
	if err != nil {
		return fmt.Errorf("list tables of %s: %w", s.path, err)
	}
	for _, t := range tables {
		if err := s.walkTable(ctx, conn, t, fn, c); err != nil {
			return err
		}
	}
	return nil
}

// sqliteColumnsRaw is sqliteColumns on the driver's connection.
func sqliteColumnsRaw(ctx context.Context, conn sqliteConn, table string) (cols []string, pk []string, err error) {
	type pkCol struct {
		name string
		pos  int64
	}
	var pks []pkCol
	err = conn.each(ctx, sqliteColumnsQuery, []driver.NamedValue{{Ordinal: 1, Value: table}}, func(_ []string, v []driver.Value) error {
		name, ok1 := v[0].(string)
		pos, ok2 := v[1].(int64)
		if !ok1 || !ok2 {
			return fmt.Errorf("pragma_table_xinfo gave a column as %T, %T", v[0], v[1])
		}
		cols = append(cols, name)
		if pos > 0 {
			pks = append(pks, pkCol{name, pos})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	pk = make([]string, len(pks))
	for _, p := range pks {
		if p.pos <= int64(len(pk)) {
			pk[p.pos-1] = p.name
		}
	}
	return cols, pk, nil
}

func (s *sqliteSource) walkTable(ctx context.Context, conn sqliteConn, table string, fn func(Item) error, c *Counts) error {
	tableErr := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A problem confined to this table (a corrupt page, an unknown collation):
		// report it and go on with the others.
		return fn(Item{Place: ref.Place{Source: s.spec, Table: table, Offset: -1}, Size: -1,
			Err: fmt.Errorf("read table %s: %w", table, err)})
	}
	cols, pk, err := sqliteColumnsRaw(ctx, conn, table)
	if err != nil {
		return tableErr(err)
	}
	if len(cols) == 0 {
		return nil
	}
	keyNames := sqliteKeyNames(cols, pk)
	nk := len(keyNames)
	var arena valueArena
	var fnErr error
	err = conn.each(ctx, sqliteSelect(table, keyNames, cols), nil, func(_ []string, vals []driver.Value) error {
		c.Rows++
		key := ""
		for i := nk; i < len(vals); i++ {
			text, ok, err := arena.itemValue(vals[i])
			if err != nil {
				return fmt.Errorf("column %s: %w", cols[i-nk], err)
			}
			if !ok {
				continue
			}
			if key == "" && nk > 0 {
				key = renderDriverKey(keyNames, vals[:nk])
			}
			if err := fn(Item{
				Place: ref.Place{Source: s.spec, Table: table, Key: key, Column: cols[i-nk], Offset: -1},
				Size:  -1,
				Text:  text,
			}); err != nil {
				fnErr = err
				return err
			}
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return tableErr(err)
	}
	return nil
}

func (s *sqliteSource) walkQuery(ctx context.Context, conn sqliteConn, fn func(Item) error, c *Counts) error {
	var arena valueArena
	var fnErr error
	err := conn.each(ctx, s.query, nil, func(cols []string, vals []driver.Value) error {
		c.Rows++
		key := "NULL"
		if len(vals) > 0 {
			key = renderValue(vals[0])
		}
		for i, v := range vals {
			if _, isTime := v.(time.Time); isTime {
				continue // a DATE/DATETIME/TIMESTAMP column (see sqliteSource)
			}
			text, ok, err := arena.itemValue(v)
			if err != nil {
				return fmt.Errorf("column %s (row %s): %w", cols[i], key, err)
			}
			if !ok {
				continue
			}
			if err := fn(Item{
				Place: ref.Place{Source: s.spec, Table: "query", Key: key, Column: cols[i], Offset: -1},
				Size:  -1,
				Text:  text,
			}); err != nil {
				fnErr = err
				return err
			}
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("session query on %s: %w", s.path, err)
	}
	return nil
}

// renderDriverKey is renderKey of the driver's values.
func renderDriverKey(names []string, vals []driver.Value) string {
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
