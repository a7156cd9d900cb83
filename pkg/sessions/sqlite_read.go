package sessions

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mediactl/mediactl/pkg/ref"
)

// sqliteConn reads a session query through the driver's connection itself,
// below database/sql: no per-row locking and conversion of every value (a
// copy of each BLOB). The driver's own values are ones the caller owns: a
// fresh string or []byte each, an int64, a float64, a time.Time.
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
// snapshot, fixed by the first read (the list of tables). Tables are read
// through SQLite's own API (rawSQLite), a session query through the driver
// (whose DATE, DATETIME and TIMESTAMP columns it turns into times).
func (s *sqliteSource) Walk(ctx context.Context, fn func(Item) error) (c Counts, err error) {
	if s.query == "" {
		r, oerr := openRawSQLite(s.path, s.immutable)
		if oerr != nil {
			return c, fmt.Errorf("begin read transaction on %s: %w", s.path, oerr)
		}
		defer r.close()
		err = s.walkTablesRaw(ctx, r, fn, &c)
	} else {
		err = s.walkQueryConn(ctx, fn, &c)
	}
	if err == nil && s.immutable {
		if cerr := s.checkUnchanged(); cerr != nil {
			err = fn(Item{Place: ref.Place{Source: s.spec, Offset: -1}, Size: -1, Err: cerr})
		}
	}
	return c, err
}

// walkQueryConn runs the session query in a read transaction on the
// driver's connection.
func (s *sqliteSource) walkQueryConn(ctx context.Context, fn func(Item) error, c *Counts) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin read transaction on %s: %w", s.path, err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
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
		return s.walkQuery(ctx, dconn, fn, c)
	})
}

func (s *sqliteSource) walkQuery(ctx context.Context, conn sqliteConn, fn func(Item) error, c *Counts) error {
	var arena valueArena
	var row rowValues
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
			if ok {
				row.add(cols[i], text)
			}
		}
		if row.empty() {
			return nil
		}
		if err := fn(Item{Place: ref.Place{Source: s.spec, Table: "query", Key: key, Offset: -1}, Size: -1, Values: row.take()}); err != nil {
			fnErr = err
			return err
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
