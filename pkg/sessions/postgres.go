package sessions

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/store"
)

// pgSource reads a PostgreSQL database (the agent-runs backend's messages table)
// over one connection, inside one REPEATABLE READ READ ONLY transaction: a
// consistent snapshot, and the server refuses any write. The session default is
// read-only too (default_transaction_read_only), as a second guard.
//
// Without a query, every user relation that holds rows is read: ordinary and
// partitioned tables (a partitioned table as a whole, not partition by
// partition) and populated materialized views (an unpopulated one holds no rows),
// outside pg_catalog, information_schema and pg_toast. Tables that belong to an
// extension are read too: pgmq (Supabase Queues) keeps each queue's messages,
// which may name an upload, in its own member table pgmq.q_<queue>. Every
// column in which a runtime may have written a blob name becomes an Item, in
// the form that lets package ref decode it exactly:
//
//   - string types (text, varchar, char, name, citext…), json, jsonb and xml:
//     their text, as the server stores it;
//   - arrays and composite types (a column of a row type, arrays of them, domains
//     over either): their JSON (to_json), so that each element is decoded with
//     JSON's escapes rather than the array or row literal's own quoting;
//   - bytea: the raw bytes (a session may keep a JSON document there);
//   - numbers (int2, int4, int8, numeric, float4, float8, money, oid…): their
//     decimal text (a media_id 1234567890 names 1234567890.jpg); a numeric,
//     float4 or float8 whose value is an integer spelled otherwise
//     (1234567890.000, 1.7333e+15) is followed by its integer forms
//     (ref.AppendIntegerForms);
//   - any other type, including a type the catalog does not explain (an
//     extension's hstore or ltree, an enum, a range): its text form, which every
//     type has. A value whose text form the server cannot produce fails the
//     table's read, which is reported.
//
// Only built-in types whose text form cannot hold a name are not read: boolean,
// date/time and interval, geometric, network address, bit string, uuid, pg_lsn,
// tid, xid, xid8, cid, and arrays of those. Out of reach: a bytea nested in an
// array or a composite value comes out of to_json in hex. Such a column is read
// for the rest of what it holds and is an Item with an [*UnreadError]
// (Counts.Unread), so that the read is incomplete, unless the operator excludes
// it: a column whose "label.column" or "name.column" matches one of
// Options.Exclude is not read, and is counted in Counts.Excluded.
//
// A relation without such a column is not read. Rows are ordered by primary key;
// Place.Key is the primary key, "col=value", or "ctid=(page,item)" for a
// relation without one (materialized views have none). A relation that cannot be
// read (no SELECT privilege) is reported as an Item with Err, rolled back to a
// savepoint, and the walk goes on. So is a table rewritten after the snapshot
// was taken (ALTER TABLE … TYPE, TRUNCATE, VACUUM FULL, CLUSTER, REFRESH
// MATERIALIZED VIEW, a copy renamed into place), which the snapshot would read
// as empty: see checkUnchanged.
//
// A foreign table is not read: its rows are on another server, which a scan
// does not reach out to. It is an Item with an [*UnreadError] (Counts.Unread),
// so that the read is incomplete, unless the operator excludes it: a relation
// whose label ("schema.table", "table" in public) or name matches one of
// Options.Exclude is not read, and is counted in Counts.Excluded. A foreign
// partition is read through its partitioned table, like any partition.
//
// With a query, every result column becomes an Item but for those of the types
// that are not read: bytea decoded, every other type in the text form the server
// sends (arrays and row values in their literal syntax: select to_json(col) in
// the query to have them decoded exactly).

// Row-level security never hides rows: the connection sets row_security = off,
// so a table (or a query) that a policy would filter for this role (not the
// owner, or the owner under FORCE ROW LEVEL SECURITY) fails with an error, and
// the read is incomplete. A role with BYPASSRLS, or a superuser, reads all rows.
//
// With a query, its result columns of those types, and bytea, become Items; cast
// other columns to text in the query to include them.
type pgSource struct {
	spec    string // redacted
	query   string
	host    string   // host:port, for messages
	exclude []string // path.Match patterns of relations not read, checked valid by Open

	mu   sync.Mutex // one Walk at a time on the connection
	conn *pgx.Conn
}

func openPostgres(ctx context.Context, spec, query string, exclude []string) (Source, error) {
	cfg, shown, host, err := pgConfig(spec)
	if err != nil {
		return nil, err
	}
	if err := checkExclude(exclude); err != nil {
		return nil, usagef("%v", err)
	}
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to PostgreSQL at %s: %w", host, err)
	}
	return &pgSource{spec: shown, query: query, host: host, exclude: exclude, conn: conn}, nil
}

// pgConfig parses a connection URL. shown is the URL without password, host the
// server's host:port (or socket folder) for messages.
func pgConfig(spec string) (cfg *pgx.ConnConfig, shown, host string, err error) {
	shown = store.Redact(spec)
	cfg, err = pgx.ParseConfig(spec)
	if err != nil {
		// Parse errors can quote the URL; report only what is safe to show.
		detail := "cannot parse it"
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) {
			// "cannot parse `URL`: reason": keep the reason only.
			if msg := pe.Error(); strings.HasPrefix(msg, "cannot parse `") {
				if i := strings.LastIndex(msg, "`: "); i >= 0 {
					detail = msg[i+3:]
				}
			}
		}
		return nil, "", "", usagef("%s is not a valid PostgreSQL URL (%s); the form is postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…]", shown, detail)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "mediactl"
	}
	// Row-level security must make a read fail, not filter it: with
	// row_security off, a query that a policy would affect raises an error
	// (unless the role bypasses row security, and then nothing is hidden).
	// Set whatever the URL says, for the reader and the rewriter alike.
	cfg.RuntimeParams["row_security"] = "off"
	if cfg.ConnectTimeout == 0 {
		// Without connect_timeout in the URL, an unreachable host would hang
		// until the OS gives up.
		cfg.ConnectTimeout = pgConnectTimeout
	}
	host = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		host = cfg.Host // a unix socket folder
	}
	return cfg, shown, host, nil
}

func (s *pgSource) String() string { return s.spec }

func (s *pgSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.conn.Close(ctx)
}

// pgTextFormats asks for every result column in text format.
var pgTextFormats = pgx.QueryResultFormatsByOID{}

// pgReadFormats asks for bytea in binary format, its raw bytes, and for every
// other column in text format.
var pgReadFormats = pgx.QueryResultFormatsByOID{pgByteaOID: pgx.BinaryFormatCode}

func (s *pgSource) Walk(ctx context.Context, fn func(Item) error) (c Counts, err error) {
	err = s.inSnapshot(ctx, func(tx pgx.Tx, types pgTypes) error {
		if s.query != "" {
			return s.walkQuery(ctx, tx, types, fn, &c)
		}
		tables, err := pgTables(ctx, tx, types)
		if err != nil {
			return s.fail("list tables", err)
		}
		for _, t := range tables {
			if s.excluded(t) {
				c.Excluded++
				continue
			}
			if t.foreign {
				// Its rows are on another server: reading them during a scan
				// would reach out to it, and fail the walk when it is down.
				c.Unread++
				label := t.label()
				err := &UnreadError{Path: label, Reason: fmt.Sprintf("a foreign table of server %s: its rows are kept on that server, which is not read; "+
					"give that server's database as a session source too, or exclude %s (--sessions-exclude) if it holds no sessions", t.server, label)}
				if err := fn(Item{Place: ref.Place{Source: s.spec, Table: label, Offset: -1}, Size: -1, Err: err}); err != nil {
					return err
				}
				continue
			}
			t = t.keepCols(func(i int) bool {
				if s.excludedCol(t, t.cols[i]) {
					c.Excluded++
					return false
				}
				return true
			})
			if len(t.cols) == 0 {
				continue
			}
			label := t.label()
			for i, col := range t.cols {
				if !t.colNestedBytea[i] {
					continue
				}
				// The column is still read below, for what it holds besides.
				c.Unread++
				err := &UnreadError{Path: label + "." + col, Reason: fmt.Sprintf("a bytea inside an array or a composite value (%s) comes out in hex, where no name can be found; "+
					"select it in a session query with its bytea decoded, or exclude %s.%s (--sessions-exclude) if it holds no sessions", t.colTypeSQL[i], label, col)}
				if err := fn(Item{Place: ref.Place{Source: s.spec, Table: label, Column: col, Offset: -1}, Size: -1, Err: err}); err != nil {
					return err
				}
			}
			if err := s.walkTable(ctx, tx, t, fn, &c); err != nil {
				return err
			}
		}
		return nil
	})
	return c, err
}

// excludedCol reports whether the operator excluded column col of t: a
// pattern matches "label.col" or "name.col".
func (s *pgSource) excludedCol(t *pgTable, col string) bool {
	return excludedBy(s.exclude, t.label()+"."+col, t.name+"."+col)
}

// excluded reports whether the operator excluded t (Options.Exclude): a
// pattern matches its label ("schema.table", "table" in public) or its name.
func (s *pgSource) excluded(t *pgTable) bool {
	return excludedBy(s.exclude, t.label(), t.name)
}

// inSnapshot runs body in one REPEATABLE READ READ ONLY transaction on the
// connection, with the type catalog as of its snapshot. Walk and the rewriter
// both read through it, so that the rewriter sees what Walk sees.
func (s *pgSource) inSnapshot(ctx context.Context, body func(tx pgx.Tx, types pgTypes) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.fail("begin read-only transaction", err)
	}
	defer pgRollback(ctx, tx)
	// For walkQuery, which decodes bytea in hex. The rewriter reads no bytea
	// and sets it too, so that its transaction is Walk's.
	if _, err := tx.Exec(ctx, "SET LOCAL bytea_output = 'hex'"); err != nil {
		return s.fail("set up transaction", err)
	}
	types, err := pgLoadTypes(ctx, tx)
	if err != nil {
		return s.fail("read the type catalog", err)
	}
	return body(tx, types)
}

// pgRollback ends tx even once ctx is done: a cancelled read or write must
// not leave its transaction open on a connection that is used again.
func pgRollback(ctx context.Context, tx pgx.Tx) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return tx.Rollback(rctx)
}

func (s *pgSource) fail(what string, err error) error {
	return fmt.Errorf("PostgreSQL at %s: %s: %w", s.host, what, err)
}

// pgTable is one table (or materialized view) to read.
type pgTable struct {
	oid         uint32
	schema      string
	name        string
	partitioned bool
	matview     bool
	foreign     bool     // a foreign table: not read, reported (see Walk)
	server      string   // a foreign table's server
	cols        []string // the columns read
	colRead     []pgRead // how Walk reads each
	colTypes    []uint32 // their types
	colTypeSQL  []string // their types as SQL (format_type), e.g. "character varying(200)"
	colTypeSQL0 []string // the same without type modifier, e.g. "character varying"
	// colRewritable tells the text-like columns the rewriter offers (see
	// rewritable).
	colRewritable []bool
	// colNestedBytea tells the columns that hold a bytea inside an array or a
	// composite value, which to_json gives in hex (see pgTypes.nestsBytea).
	colNestedBytea []bool
	// colGenerated tells the generated columns (GENERATED ALWAYS AS), which
	// are read but cannot be written (see sqlRewrite.finish).
	colGenerated []bool
	pk           []string
	// attnums are the read columns' numbers as of the snapshot: a column
	// renamed and another added under its name since (ALTER TABLE … RENAME,
	// ADD: a change of type done by hand) is read by its new number, the
	// new column, without the table being rewritten (see checkUnchanged).
	attnums map[string]int16
	// storage is what the snapshot's catalog says holds the rows read: the
	// table itself, or each leaf partition of a partitioned table, with its
	// relfilenode (0 for a relation without storage, a foreign partition).
	// checkUnchanged compares it with the relations the read went to.
	storage []pgStorage
}

// pgStorage is a relation whose rows a table's read returns, and its storage
// as of the snapshot.
type pgStorage struct {
	oid, filenode uint32
}

// pgRead is how Walk reads a column's values.
type pgRead uint8

const (
	pgReadNone  pgRead = iota // a type whose values cannot hold a name: not read
	pgReadText                // the value's text form (col::text)
	pgReadJSON                // its JSON (to_json(col)::text): arrays, composite types
	pgReadBytes               // bytea, raw
	// pgReadNumber: numeric, float4, float8 and domains over them: the
	// value's text form, followed by its integer forms (valueArena.number).
	pgReadNumber
)

// rewritable is the part of t the rewriter offers: its text-like columns, all
// read as their text form, which is what the rewriter writes back (an array in
// its literal syntax). Materialized views are derived data, refreshed from their
// query: they are not rewritten. nil when nothing is rewritable.
func (t *pgTable) rewritable() *pgTable {
	if t.matview || t.foreign {
		return nil
	}
	rt := t.keepCols(func(i int) bool { return t.colRewritable[i] })
	if len(rt.cols) == 0 {
		return nil
	}
	for i := range rt.colRead {
		rt.colRead[i] = pgReadText
	}
	return rt
}

// keepCols is a copy of t with only the columns keep(i) tells.
func (t *pgTable) keepCols(keep func(i int) bool) *pgTable {
	kt := *t
	kt.cols, kt.colRead, kt.colTypes, kt.colTypeSQL, kt.colTypeSQL0, kt.colRewritable, kt.colNestedBytea, kt.colGenerated = nil, nil, nil, nil, nil, nil, nil, nil
	for i := range t.cols {
		if !keep(i) {
			continue
		}
		kt.cols = append(kt.cols, t.cols[i])
		kt.colRead = append(kt.colRead, t.colRead[i])
		kt.colTypes = append(kt.colTypes, t.colTypes[i])
		kt.colTypeSQL = append(kt.colTypeSQL, t.colTypeSQL[i])
		kt.colTypeSQL0 = append(kt.colTypeSQL0, t.colTypeSQL0[i])
		kt.colRewritable = append(kt.colRewritable, t.colRewritable[i])
		kt.colNestedBytea = append(kt.colNestedBytea, t.colNestedBytea[i])
		kt.colGenerated = append(kt.colGenerated, t.colGenerated[i])
	}
	return &kt
}

// label is the table as Place.Table shows it: "schema.table", without "public.".
func (t *pgTable) label() string {
	if t.schema == "public" {
		return t.name
	}
	return t.schema + "." + t.name
}

func pgTables(ctx context.Context, tx pgx.Tx, types pgTypes) ([]*pgTable, error) {
	// Generated columns came with PostgreSQL 12, and attgenerated with them.
	generated := "false"
	if pgServerMajor(tx.Conn()) >= 12 {
		generated = "a.attgenerated <> ''"
	}
	rows, err := tx.Query(ctx, `
SELECT c.oid, c.relfilenode, n.nspname::text, c.relname::text, c.relkind = 'p', c.relkind = 'm', c.relkind = 'f',
  coalesce(s.srvname::text, ''), a.attname::text, a.atttypid,
  pg_catalog.format_type(a.atttypid, a.atttypmod), pg_catalog.format_type(a.atttypid, NULL), a.attnum, `+generated+`
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_catalog.pg_foreign_table ft ON ft.ftrelid = c.oid
LEFT JOIN pg_catalog.pg_foreign_server s ON s.oid = ft.ftserver
WHERE (c.relkind IN ('r', 'p', 'f') OR c.relkind = 'm' AND c.relispopulated) AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp\_%'
ORDER BY n.nspname, c.relname, a.attnum`)
	if err != nil {
		return nil, err
	}
	var tables []*pgTable
	byOID := map[uint32]*pgTable{}
	for rows.Next() {
		var (
			oid, filenode, typ            uint32
			schema, name, server, col     string
			typeSQL, typeSQL0             string
			partitioned, matview, foreign bool
			attnum                        int16
			isGenerated                   bool
		)
		if err := rows.Scan(&oid, &filenode, &schema, &name, &partitioned, &matview, &foreign, &server, &col, &typ, &typeSQL, &typeSQL0, &attnum, &isGenerated); err != nil {
			rows.Close()
			return nil, err
		}
		t := byOID[oid]
		if t == nil {
			t = &pgTable{oid: oid, schema: schema, name: name, partitioned: partitioned, matview: matview, foreign: foreign, server: server, attnums: map[string]int16{}}
			if !partitioned {
				t.storage = []pgStorage{{oid, filenode}}
			}
			byOID[oid] = t
			tables = append(tables, t)
		}
		if read := types.readAs(typ); read != pgReadNone {
			t.cols = append(t.cols, col)
			t.attnums[col] = attnum
			t.colRead = append(t.colRead, read)
			t.colRewritable = append(t.colRewritable, types.textLike(typ))
			t.colNestedBytea = append(t.colNestedBytea, types.nestsBytea(typ))
			t.colGenerated = append(t.colGenerated, isGenerated)
			t.colTypes = append(t.colTypes, typ)
			t.colTypeSQL = append(t.colTypeSQL, typeSQL)
			t.colTypeSQL0 = append(t.colTypeSQL0, typeSQL0)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Keep only tables with something to read, and foreign tables, which are
	// reported whatever their columns.
	kept := tables[:0]
	for _, t := range tables {
		if len(t.cols) > 0 || t.foreign {
			kept = append(kept, t)
		}
	}
	tables = kept

	rows, err = tx.Query(ctx, `
SELECT i.indrelid, a.attname::text
FROM pg_catalog.pg_index i
CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE i.indisprimary AND n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY i.indrelid, k.ord`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var oid uint32
		var col string
		if err := rows.Scan(&oid, &col); err != nil {
			rows.Close()
			return nil, err
		}
		if t := byOID[oid]; t != nil {
			t.pk = append(t.pk, col)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}

	// The leaf partitions of each partitioned table, as the snapshot lists them
	// (pg_inherits read in the snapshot; pg_partition_tree would list today's).
	rows, err = tx.Query(ctx, `
WITH RECURSIVE tree(root, relid) AS (
  SELECT c.oid, c.oid FROM pg_catalog.pg_class c WHERE c.relkind = 'p' AND NOT c.relispartition
  UNION ALL
  SELECT tree.root, i.inhrelid FROM tree JOIN pg_catalog.pg_inherits i ON i.inhparent = tree.relid
)
SELECT tree.root, tree.relid, c.relfilenode
FROM tree JOIN pg_catalog.pg_class c ON c.oid = tree.relid
WHERE c.relkind <> 'p'
ORDER BY tree.root, tree.relid`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var root, oid, filenode uint32
		if err := rows.Scan(&root, &oid, &filenode); err != nil {
			rows.Close()
			return nil, err
		}
		if t := byOID[root]; t != nil {
			t.storage = append(t.storage, pgStorage{oid, filenode})
		}
	}
	return tables, rows.Err()
}

// checkUnchanged tells whether the rows of t just read came from the storage
// the snapshot's catalog lists. A REPEATABLE READ snapshot does not protect a
// read from a table rewrite (ALTER TABLE … TYPE, TRUNCATE, VACUUM FULL,
// CLUSTER, REFRESH MATERIALIZED VIEW) or from another table renamed into its
// place, committed after the snapshot was taken: the server opens the relation
// as it is now, whose rows the snapshot may not see, and the table reads as
// empty without an error. Once read, the table (and each partition read
// through it) is held with ACCESS SHARE until the transaction ends, so that it
// cannot change again before the walk is over; a check made now holds for the
// whole walk. Tables are not locked before they are read: a lock held for the
// hours a walk can take would queue the runtime's own DDL, and every query
// behind it.
//
// to_regclass and pg_relation_filenode read the catalog as it is now, not as
// of the snapshot: that is the point.
func checkUnchanged(ctx context.Context, tx pgx.Tx, t *pgTable) error {
	oids := make([]uint32, len(t.storage))
	nodes := make([]uint32, len(t.storage))
	for i, st := range t.storage {
		oids[i], nodes[i] = st.oid, st.filenode
	}
	var same bool
	var changed []string
	err := tx.QueryRow(ctx, `
SELECT coalesce(pg_catalog.to_regclass($1)::oid = $2::oid, false),
  ARRAY(SELECT CASE WHEN l.relid = $2::oid THEN '' ELSE l.relid::regclass::text END
        FROM unnest($3::oid[], $4::oid[]) AS l(relid, node)
        WHERE pg_catalog.pg_relation_filenode(l.relid::regclass) IS DISTINCT FROM nullif(l.node, 0)
           OR l.relid <> $2::oid AND NOT EXISTS (
             SELECT 1 FROM pg_catalog.pg_partition_tree($2::oid::regclass) p WHERE p.relid = l.relid::regclass AND p.isleaf)
        ORDER BY l.relid)`,
		pgIdent(t.schema)+"."+pgIdent(t.name), t.oid, oids, nodes).Scan(&same, &changed)
	if err != nil {
		return fmt.Errorf("check that it was not rewritten while being read: %w", err)
	}
	var columns []string
	if same && len(t.cols) > 0 {
		// The read's columns as the server resolves their names now (a
		// statement is parsed against the current catalog): each must be
		// the column of the snapshot's number.
		cols := make([]string, len(t.cols))
		for i, c := range t.cols {
			cols[i] = pgIdent(c)
		}
		sd, err := tx.Conn().PgConn().Prepare(ctx, "", "SELECT "+strings.Join(cols, ", ")+" FROM ONLY "+pgIdent(t.schema)+"."+pgIdent(t.name), nil)
		if err != nil {
			return fmt.Errorf("check that its columns did not change while being read: %w", err)
		}
		for i, f := range sd.Fields {
			if i < len(t.cols) && (f.TableOID != t.oid || int16(f.TableAttributeNumber) != t.attnums[t.cols[i]]) {
				columns = append(columns, t.cols[i])
			}
		}
	}
	if same && len(changed) == 0 && len(columns) == 0 {
		return nil
	}
	e := &pgRewrittenError{Table: t.schema + "." + t.name, Replaced: !same, Columns: columns}
	for _, c := range changed {
		if c == "" {
			e.Rewritten = true
		} else {
			e.Partitions = append(e.Partitions, c)
		}
	}
	return e
}

// pgRewrittenError is the problem of a table whose rows were not where the
// read's snapshot has them (see checkUnchanged): what was read may be none of
// them, so the read is incomplete. A later run takes a new snapshot and reads
// the table again.
type pgRewrittenError struct {
	Table      string   // schema.table
	Replaced   bool     // the name now names another table (a copy renamed into place)
	Rewritten  bool     // the table's own storage changed
	Partitions []string // partitions whose storage changed, or that are no longer partitions of it
	Columns    []string // columns whose name now names another column
}

func (e *pgRewrittenError) Error() string {
	var what []string
	if e.Replaced {
		what = append(what, "its name now names another table (a copy renamed into its place, or dropped and created again)")
	}
	if e.Rewritten {
		what = append(what, "its storage changed")
	}
	if len(e.Partitions) > 0 {
		what = append(what, "partition "+strings.Join(e.Partitions, ", ")+" was rewritten or detached")
	}
	if len(e.Columns) > 0 {
		what = append(what, "column "+strings.Join(e.Columns, ", ")+" now names another column (renamed, and one added under its name), whose values were read instead")
	}
	return fmt.Sprintf("%s was rewritten while being read: %s after the read's snapshot was taken "+
		"(ALTER TABLE … TYPE, TRUNCATE, VACUUM FULL, CLUSTER or REFRESH MATERIALIZED VIEW do that), "+
		"so its rows as of the snapshot may not have been read; run again to read it", e.Table, strings.Join(what, "; "))
}

func (s *pgSource) walkTable(ctx context.Context, tx pgx.Tx, t *pgTable, fn func(Item) error, c *Counts) error {
	tableErr, fatal := s.inTableSavepoint(ctx, tx, t, func(sp pgx.Tx) (fnErr, err error) {
		return s.readTable(ctx, sp, t, fn, c)
	})
	if fatal != nil {
		return fatal
	}
	if tableErr != nil {
		return fn(Item{Place: ref.Place{Source: s.spec, Table: t.label(), Offset: -1}, Size: -1, Err: tableErr})
	}
	return nil
}

// inTableSavepoint runs read on table t inside a savepoint, which confines a
// failure (no privilege on the table) to this table. read returns fnErr to
// stop as is, err for a problem reading the table. tableErr is that problem,
// for the caller to report before going on; fatal stops the walk. Walk and
// the rewriter share it so that they tell the two apart alike.
func (s *pgSource) inTableSavepoint(ctx context.Context, tx pgx.Tx, t *pgTable, read func(sp pgx.Tx) (fnErr, err error)) (tableErr, fatal error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return nil, s.fail("savepoint", err)
	}
	fnErr, err := read(sp)
	if fnErr != nil {
		return nil, fnErr
	}
	if err == nil {
		err = checkUnchanged(ctx, sp, t)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if rerr := sp.Rollback(ctx); rerr != nil {
			// The connection is gone, not just this table.
			return nil, s.fail("read table "+t.label(), err)
		}
		return fmt.Errorf("read table %s: %w", t.label(), err), nil
	}
	if err := sp.Commit(ctx); err != nil {
		return nil, s.fail("release savepoint", err)
	}
	return nil, nil
}

// readTable streams one table. fnErr is an error from fn (it stops the walk as
// is); err is a problem reading the table.
func (s *pgSource) readTable(ctx context.Context, tx pgx.Tx, t *pgTable, fn func(Item) error, c *Counts) (fnErr, err error) {
	q, keyNames := pgTableSelect(t)
	rows, err := tx.Query(ctx, q, pgx.QueryExecModeDescribeExec, pgReadFormats)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	nk := len(keyNames)
	label := t.label()
	var arena valueArena
	var row rowValues
	for rows.Next() {
		c.Rows++
		raw := rows.RawValues()
		for i := nk; i < len(raw); i++ {
			if raw[i] == nil {
				continue
			}
			text := arena.copy
			if t.colRead[i-nk] == pgReadNumber {
				text = arena.number
			}
			row.add(t.cols[i-nk], text(raw[i]))
		}
		if row.empty() {
			continue
		}
		key := renderRawKey(keyNames, raw[:nk])
		if err := fn(Item{Place: ref.Place{Source: s.spec, Table: label, Key: key, Offset: -1}, Size: -1, Values: row.take()}); err != nil {
			return err, nil
		}
	}
	return nil, rows.Err()
}

// pgTableSelect is the query reading a table: its key (the primary key, else
// the ctid, with the tableoid for a partitioned table), as text, then its
// columns, each as its colRead says. keyNames name the key's values for
// Place.Key.
func pgTableSelect(t *pgTable) (q string, keyNames []string) {
	var sel []string
	switch {
	case len(t.pk) > 0:
		keyNames = t.pk
		for _, k := range t.pk {
			sel = append(sel, pgIdent(k)+"::text")
		}
	case t.partitioned:
		// A ctid is only unique within one partition.
		keyNames = []string{"tableoid", "ctid"}
		sel = []string{"tableoid::regclass::text", "ctid::text"}
	default:
		keyNames = []string{"ctid"}
		sel = []string{"ctid::text"}
	}
	for i, col := range t.cols {
		switch t.colRead[i] {
		case pgReadJSON:
			sel = append(sel, "to_json("+pgIdent(col)+")::text")
		case pgReadBytes:
			// A domain over bytea as bytea itself, so that pgReadFormats
			// brings its bytes raw.
			sel = append(sel, pgIdent(col)+"::bytea")
		default:
			sel = append(sel, pgIdent(col)+"::text")
		}
	}
	table := pgIdent(t.schema) + "." + pgIdent(t.name)
	from := table
	if !t.partitioned {
		from = "ONLY " + from // not the rows of tables inheriting from it: they are read on their own
	}
	q = "SELECT " + strings.Join(sel, ", ") + " FROM " + from
	if len(t.pk) > 0 {
		// By the table's columns, qualified: a bare name would be the
		// output column of that name, the key's text ("10" before "9"),
		// which the server sorts on disk instead of following the key's
		// index.
		var order []string
		for _, k := range t.pk {
			order = append(order, table+"."+pgIdent(k))
		}
		q += " ORDER BY " + strings.Join(order, ", ")
	}
	return q, keyNames
}

func (s *pgSource) walkQuery(ctx context.Context, tx pgx.Tx, types pgTypes, fn func(Item) error, c *Counts) error {
	rows, err := tx.Query(ctx, s.query, pgx.QueryExecModeDescribeExec, pgTextFormats)
	if err != nil {
		return s.fail("session query", err)
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	var arena valueArena
	var row rowValues
	for rows.Next() {
		c.Rows++
		raw := rows.RawValues()
		key := "NULL"
		if len(raw) > 0 && raw[0] != nil {
			key = string(raw[0])
		}
		for i, f := range fields {
			if i >= len(raw) || raw[i] == nil {
				continue
			}
			var text []byte
			switch types.readAs(f.DataTypeOID) {
			case pgReadNone:
				continue
			case pgReadBytes:
				b, ok := strings.CutPrefix(string(raw[i]), `\x`)
				if ok {
					text, err = hex.DecodeString(b)
				}
				if !ok || err != nil {
					// bytea_output is hex: anything else is not what was asked for.
					return s.fail("session query", fmt.Errorf("column %s (row %s): bytea not in hex form", f.Name, key))
				}
			case pgReadNumber:
				text = arena.number(raw[i])
			default:
				text = arena.copy(raw[i])
			}
			row.add(f.Name, text)
		}
		if row.empty() {
			continue
		}
		if err := fn(Item{Place: ref.Place{Source: s.spec, Table: "query", Key: key, Offset: -1}, Size: -1, Values: row.take()}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.fail("session query", err)
	}
	return nil
}

// renderRawKey renders text-format key values as "a=1,b=x".
func renderRawKey(names []string, vals [][]byte) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteByte('=')
		if vals[i] == nil {
			b.WriteString("NULL")
		} else {
			b.Write(vals[i])
		}
	}
	return b.String()
}

// pgServerMajor is the server's major version, as it reported it when the
// connection started ("15.4 (Debian 15.4-1)", "9.6.24"); 0 when it did not.
func pgServerMajor(conn *pgx.Conn) int {
	v := conn.PgConn().ParameterStatus("server_version")
	end := 0
	for end < len(v) && '0' <= v[end] && v[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(v[:end])
	return n
}

// pgIdent quotes a PostgreSQL identifier.
func pgIdent(s string) string {
	return pgx.Identifier{s}.Sanitize()
}

// pgConnectTimeout bounds connecting when the URL sets no connect_timeout.
const pgConnectTimeout = 30 * time.Second

const (
	pgByteaOID   = 17
	pgUnknownOID = 705
)

// pgType is the part of a pg_type row that decides whether a type is text-like.
type pgType struct {
	typtype, category, name string
	catalog                 bool // in pg_catalog
	elem, base              uint32
	attrs                   []uint32 // a composite type's attribute types
}

// pgTypes is the database's type catalog, by OID.
type pgTypes map[uint32]pgType

func pgLoadTypes(ctx context.Context, tx pgx.Tx) (pgTypes, error) {
	rows, err := tx.Query(ctx, `SELECT t.oid, t.typtype::text, t.typcategory::text, t.typname::text,
		t.typnamespace = 'pg_catalog'::regnamespace, t.typelem, t.typbasetype FROM pg_catalog.pg_type t`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types := pgTypes{}
	for rows.Next() {
		var oid uint32
		var t pgType
		if err := rows.Scan(&oid, &t.typtype, &t.category, &t.name, &t.catalog, &t.elem, &t.base); err != nil {
			return nil, err
		}
		types[oid] = t
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	rows, err = tx.Query(ctx, `SELECT t.oid, a.atttypid FROM pg_catalog.pg_type t
		JOIN pg_catalog.pg_attribute a ON a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE t.typtype = 'c' ORDER BY t.oid, a.attnum`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var oid, attr uint32
		if err := rows.Scan(&oid, &attr); err != nil {
			return nil, err
		}
		if t, ok := types[oid]; ok {
			t.attrs = append(t.attrs, attr)
			types[oid] = t
		}
	}
	return types, rows.Err()
}

// nestsBytea reports whether a column of a type read as JSON holds a bytea
// somewhere inside (an array of bytea, a composite with a bytea attribute,
// domains over either): to_json gives a nested bytea in hex, not its bytes, so
// that a document kept there cannot be read. A type nested deeper than it
// looks is taken to hold one: reported as unread, not read as complete.
func (m pgTypes) nestsBytea(oid uint32) bool {
	return m.readAs(oid) == pgReadJSON && m.holdsBytea(oid, 0)
}

func (m pgTypes) holdsBytea(oid uint32, depth int) bool {
	if depth > 8 {
		return true
	}
	base, t, ok := m.resolveDomain(oid, false)
	switch {
	case !ok:
		return false
	case base == pgByteaOID:
		return true
	case t.category == "A" && t.elem != 0:
		return m.holdsBytea(t.elem, depth+1)
	case t.typtype == "c":
		for _, a := range t.attrs {
			if m.holdsBytea(a, depth+1) {
				return true
			}
		}
	}
	return false
}

// textLike reports whether values of a type are text a session could keep
// references in: string types (category S: text, varchar, char, name, citext),
// json, jsonb, xml, and domains over and arrays of those. These are the columns
// the rewriter rewrites, in their text form.
func (m pgTypes) textLike(oid uint32) bool {
	oid, t, ok := m.resolveDomain(oid, true)
	if oid == pgUnknownOID {
		return true
	}
	return ok && (t.category == "S" || t.catalog && (t.name == "json" || t.name == "jsonb" || t.name == "xml"))
}

// readAs says how Walk reads a column of a type (see pgSource). A type the
// catalog does not explain (a chain of domains longer than any real one) is
// read as text: every type has a text form, so that nothing is skipped unread.
func (m pgTypes) readAs(oid uint32) pgRead {
	return m.readAsDepth(oid, 0)
}

func (m pgTypes) readAsDepth(oid uint32, depth int) pgRead {
	base, t, ok := m.resolveDomain(oid, false)
	switch {
	case !ok || depth > 8:
		return pgReadText
	case base == pgByteaOID:
		return pgReadBytes
	case t.typtype == "c":
		return pgReadJSON
	case t.category == "A" && t.elem != 0:
		if m.readAsDepth(t.elem, depth+1) == pgReadNone {
			return pgReadNone
		}
		return pgReadJSON
	case t.catalog && pgNameless(t):
		return pgReadNone
	case t.catalog && (t.name == "numeric" || t.name == "float4" || t.name == "float8"):
		// The types whose text spells an integer value otherwise: the
		// server writes a float of 1e15 or more with an exponent
		// (1.7333e+15), a numeric with its scale (1234567890.000).
		return pgReadNumber
	}
	return pgReadText
}

// pgNameless reports whether a built-in type's text form has a fixed grammar
// that cannot hold a name: boolean (B), date/time (D), interval (T), geometric
// (G), network address (I), bit string (V), and a few others. Only built-in
// types are judged by their category: an extension's type may declare any.
func pgNameless(t pgType) bool {
	switch t.category {
	case "B", "D", "T", "G", "I", "V":
		return true
	}
	switch t.name {
	case "uuid", "pg_lsn", "tid", "xid", "xid8", "cid":
		return true
	}
	return false
}

// resolveDomain follows domains to their base type, and with arrays also array
// types to their element type, and returns where it stops: that type's OID,
// its row, and whether the OID is in the catalog. A chain longer than any a
// real catalog holds (domains of arrays of domains…) is not followed: it
// stops at OID 0, not found.
func (m pgTypes) resolveDomain(oid uint32, arrays bool) (uint32, pgType, bool) {
	for range 8 {
		t, ok := m[oid]
		switch {
		case !ok:
			return oid, t, false
		case t.typtype == "d":
			oid = t.base
		case arrays && t.category == "A" && t.elem != 0:
			oid = t.elem
		default:
			return oid, t, true
		}
	}
	return 0, pgType{}, false
}
