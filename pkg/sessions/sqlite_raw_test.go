package sessions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
)

// driverWalk reads every table as Walk did through database/sql, the
// driver's values made Items by itemValue and keys by renderKey: the
// reference that Walk's reading through SQLite's own API is held to.
func driverWalk(t *testing.T, spec, path string) []Item {
	t.Helper()
	ctx := context.Background()
	db, err := openSQLiteDB(ctx, path, sqliteDSN, "read-only")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	tables, err := sqliteTables(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	var items []Item
	for _, table := range tables {
		cols, _, pk, err := sqliteColumns(ctx, tx, table)
		if err != nil {
			t.Fatal(err)
		}
		keyNames := sqliteKeyNames(cols, pk)
		rows, err := tx.QueryContext(ctx, sqliteSelect(table, keyNames, cols))
		if err != nil {
			t.Fatal(err)
		}
		nk := len(keyNames)
		vals := make([]any, nk+len(cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		var arena valueArena
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var row []Value
			for i := nk; i < len(vals); i++ {
				text, ok, err := arena.itemValue(vals[i])
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					row = append(row, Value{Column: cols[i-nk], Text: text})
				}
			}
			if len(row) == 0 {
				continue
			}
			key := ""
			if nk > 0 {
				key = renderKey(keyNames, vals[:nk])
			}
			items = append(items, Item{Place: ref.Place{Source: spec, Table: table, Key: key, Offset: -1}, Size: -1, Values: row})
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return items
}

// Walk yields, row for row and value for value, what the driver's values
// make: the same
// places, keys (TEXT, INTEGER, REAL, BLOB, NULL and composite keys, rowid
// tables, WITHOUT ROWID, generated columns) and texts (empty and long
// strings, empty BLOBs, numbers of every form), in UTF-8 and UTF-16
// databases.
func TestSQLiteWalkMatchesTheDriver(t *testing.T) {
	for _, enc := range []string{"UTF-8", "UTF-16le", "UTF-16be"} {
		t.Run(enc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db.sqlite")
			w, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			w.SetMaxOpenConns(1)
			stmts := []string{
				"PRAGMA encoding = '" + enc + "'",
				cofferSchema,
				`CREATE TABLE nums(id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB, anything)`,
				`CREATE TABLE "odd ""name"""(k1 REAL, k2 BLOB, k3, v, g TEXT GENERATED ALWAYS AS ('/media/' || v || '.jpg') VIRTUAL, PRIMARY KEY(k1, k2, k3))`,
				`CREATE TABLE shadow(rowid TEXT, oid TEXT, x)`,
				`CREATE TABLE nocols_but_rowid(a)`,
			}
			for _, q := range stmts {
				if _, err := w.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			long := ""
			for i := range 200 {
				long += fmt.Sprintf("März %d /srv/.forge/files/inbound/%064x.png ", i, i)
			}
			ins := func(q string, args ...any) {
				t.Helper()
				if _, err := w.Exec(q, args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			for i, r := range []float64{0, -0.5, 1234567890, 1.23456789e9, 1e21, 1.7333e15, math.MaxFloat64, math.SmallestNonzeroFloat64, -1e300, 3.5} {
				ins(`INSERT INTO nums VALUES(?, ?, ?, ?, ?, ?)`, i+1, int64(i)*math.MaxInt64/9-7, r, []string{"", "x", long, "日本語", "a\x00b"}[i%5], [][]byte{{}, {0, 1, 2}, []byte(long), nil}[i%4], []any{nil, 1.5, "t", []byte("b"), int64(-3)}[i%5])
			}
			ins(`INSERT INTO nums(id) VALUES(100)`)
			ins(`INSERT INTO "odd ""name"""(k1, k2, k3, v) VALUES(1.5, x'00ff', NULL, 'a'), (2e30, x'', 'k', 7), (-0.0, x'61', 3, NULL)`)
			ins(`INSERT INTO shadow VALUES('r', 'o', 'x'), (NULL, NULL, NULL)`)
			ins(`INSERT INTO nocols_but_rowid VALUES(1), (NULL)`)
			w.Close()

			spec := "sqlite:" + path
			want := driverWalk(t, spec, path)
			src := openSQLiteSpec(t, spec, "")
			var got []Item
			c, err := src.Walk(context.Background(), func(it Item) error {
				it.Values = slices.Clone(it.Values) // only valid during the call
				got = append(got, it)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d items, the driver's values make %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("item %d:\n got %+v %q\nwant %+v %q", i, got[i].Place, got[i].Values, want[i].Place, want[i].Values)
				}
			}
			if c.Rows == 0 {
				t.Error("no rows counted")
			}
		})
	}
}

// A Walk whose context ends stops within a few hundred rows, with the
// context's error.
func TestSQLiteWalkCanceled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	w, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 5000) INSERT INTO t SELECT i, 'v' || i FROM n`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	src := openSQLiteSpec(t, "sqlite:"+path, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := src.Walk(ctx, func(Item) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || c.Rows >= 5000 {
		t.Fatalf("Walk read %d rows and returned %v; want it stopped early with context.Canceled", c.Rows, err)
	}
	// The source reads again afterwards, from a new snapshot.
	c, err = src.Walk(context.Background(), func(Item) error { return nil })
	if err != nil || c.Rows != 5000 {
		t.Fatalf("second Walk: %d rows, %v", c.Rows, err)
	}
}
