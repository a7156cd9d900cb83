package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/store"
)

// Edit receives one unit of session text — a whole document (a session file) or one
// column value of one row — and returns its replacement, or nil to leave it as is.
// It may be called again for the same place with fresh bytes when the unit changed
// between read and write. An error stops the rewrite.
//
// Edit must not modify old; the rewriter owns the returned slice. A replacement
// equal to old is treated like nil.
type Edit func(place ref.Place, old []byte) (new []byte, err error)

// Change is one replacement about to be written.
type Change struct {
	Place    ref.Place // as Walk reports it: Document for files; Table, Key, Column for SQL rows
	Old, New []byte
}

// RewriteOptions tune [Rewriter.Rewrite].
//
// Edit, Prepare and Committed are called one at a time, from the goroutine that
// called Rewrite, and never inside one of the rewriter's write transactions: they
// may take their time. A read snapshot may be open meanwhile (Edit is called as
// units are read): rows can still be written by others, except in a SQLite
// database without WAL, where a reader blocks writers.
type RewriteOptions struct {
	// Prepare is called with each change before it is committed (journal it and
	// fsync there); an error skips that change and stops the rewrite.
	//
	// A prepared change is not always committed: the unit may change under the
	// rewriter (it is then re-read, edited and prepared again, with the fresh Old),
	// vanish, or be refused by the store, and a crash can come between the two
	// calls. A journal must therefore treat a prepared change without a Committed
	// one as "maybe written": the store holds either Old or New (or a later
	// writer's value).
	//
	// New is the value as the store will keep it and as Walk will report it: for a
	// Postgres jsonb, xml or array column, the database's text form of what Edit
	// returned (jsonb normalizes spaces and key order), so that a journal can
	// recognize it later.
	Prepare func(Change) error
	// Committed is called after the change is durable in the store. New is the
	// value as stored (the same as prepared, unless a database trigger changed it).
	Committed func(Change)
	// Retries is how many times a unit that changed between read and write is
	// re-read and re-edited: 0 means the default, 5; a negative number means never.
	Retries int
}

// defaultRewriteRetries is RewriteOptions.Retries when it is 0.
const defaultRewriteRetries = 5

// RewriteCounts are what a rewrite did.
type RewriteCounts struct {
	Units     int64 // documents and values offered to Edit
	Changed   int64 // units written
	Retried   int64 // re-reads because the unit changed under us
	Conflicts int64 // units still changing after Retries: left untouched, named in the error list
	// Failed counts units with a problem confined to each: a file that could not
	// be read, a temporary file that could not be written (disk full), a value
	// the database refused, a row without a stable key. Each is named in the
	// error list and left untouched, unless its message says otherwise (a file
	// rewritten whose folder could not be synced, or whose old version could not
	// be removed).
	Failed int64
	// InUse counts session files left as they are because another process
	// held them open when the new version was to replace them (Linux: a
	// runtime appending to its JSON Lines file would go on writing into the
	// replaced version), named in the error list with ErrInUse.
	InUse int64
	// Gone counts units deleted by someone else between read and write (a session
	// file removed by the runtime, a row deleted): nothing is left to rewrite.
	Gone int64
	// Skipped counts files deliberately not read, as Walk counts them: symbolic
	// links, *.tmp files, pipes and devices.
	Skipped int64
}

// Rewriter is a session source that can be written in place.
type Rewriter interface {
	// String names the source as the operator gave it, with any password removed;
	// it is Place.Source of every place.
	String() string
	// Rewrite offers every unit of the source, in Walk's order and with Walk's
	// places, to edit, and writes each replacement back if the unit is still what
	// edit saw (else it re-reads and edits again, up to RewriteOptions.Retries).
	//
	// Problems confined to one unit do not stop it: they are counted (Failed,
	// Conflicts) and, after all other units were done, returned as a
	// [*RewriteError] naming each place. An error from edit or Prepare, a
	// canceled ctx or a source that fails as a whole (a database that went away, a
	// missing folder) stop it; the error is then returned, joined with the
	// RewriteError of the units met so far, if any. The counts are always what was
	// done.
	Rewrite(ctx context.Context, edit Edit, opts RewriteOptions) (RewriteCounts, error)
	// Close releases connections.
	Close() error
}

// ErrConflict is wrapped by the error of a unit that changed under the rewriter
// on every attempt (RewriteCounts.Conflicts).
var ErrConflict = errors.New("changed by another writer on every attempt; left as it is")

// ErrInUse is the error of a session file another process held open when
// its new version was to replace it (RewriteCounts.InUse).
var ErrInUse = errors.New("open in another process, which may still write to it: left as it is; run again once it is closed")

// UnitError is a problem confined to one unit, which was left untouched.
type UnitError struct {
	Place ref.Place
	Err   error
}

func (e *UnitError) Error() string { return e.Place.String() + ": " + e.Err.Error() }
func (e *UnitError) Unwrap() error { return e.Err }

// RewriteError lists every unit a rewrite left untouched because of a problem
// confined to it. errors.Is(err, ErrConflict) tells whether one of them kept
// changing.
type RewriteError struct {
	Source string
	Units  []*UnitError
}

// maxListedUnits bounds how many units RewriteError.Error names; Units has all.
const maxListedUnits = 100

func (e *RewriteError) Error() string {
	var b strings.Builder
	n := len(e.Units)
	fmt.Fprintf(&b, "%s: %d %s not rewritten", e.Source, n, plural(n, "unit", "units"))
	for i, u := range e.Units {
		if i == maxListedUnits {
			fmt.Fprintf(&b, "\n  … and %d more", n-i)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(u.Error())
	}
	return b.String()
}

// Unwrap returns the units' errors, so that errors.Is and errors.As see them.
func (e *RewriteError) Unwrap() []error {
	errs := make([]error, len(e.Units))
	for i, u := range e.Units {
		errs[i] = u
	}
	return errs
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// OpenRewriter opens the session source named by spec for writing, as [Open] does
// for reading; the spec forms are the same, and every place the rewriter reports
// is the one Walk reports for the same unit.
//
// Options.Exclude selects what is rewritten as it selects what Walk reads: an
// excluded file, folder, table or column is neither offered to Edit nor
// written. A rewriter given the options the source was read with thus
// changes only what that read saw.
//
// A folder or a file is rewritten file by file: the new version is written to a
// temporary file beside the original (".<name>.<random>.tmp", which session
// readers skip), with the original's mode (and owner, when running as root), and
// synced (a file whose owner cannot be kept is not rewritten); it then takes
// the original's place only if the original is still what was read. On Linux, renameat2(RENAME_EXCHANGE) swaps the two files atomically
// and the old one is compared after the swap (a writer that renamed its own new
// version in between is detected, and its version swapped back); elsewhere, or
// where the file system refuses the exchange, the original is re-read and
// compared just before a plain rename. Symbolic links are never read nor written:
// the spec itself may not be a link to a file (name the file), links inside a
// folder are skipped as Walk skips them.
//
// A SQLite database (sqlite:PATH) is read in one read snapshot, as Walk reads
// it, through the read-only connection, and written through a second,
// read-write connection in short write transactions of up to 500 values (BEGIN
// IMMEDIATE, with a busy timeout): a live writer in WAL mode keeps working. Each
// UPDATE is a compare-and-swap on the primary key (or rowid) and the value as
// read, and keeps its storage class (TEXT stays TEXT, BLOB stays BLOB; a new
// text that the column's affinity would turn into a number is refused). A table
// whose rowid is hidden by columns, or a row whose key is NULL, cannot be
// addressed: a change there is reported as Failed. In another journal mode than
// WAL a reader blocks writers, so the changes are kept in memory and written
// after the read.
//
// PostgreSQL is read in one REPEATABLE READ READ ONLY snapshot, as Walk reads it,
// and written through a second connection in short READ COMMITTED transactions of
// up to 500 values, each UPDATE a compare-and-swap on the primary key and the
// value's text form, the new text converted by the column's own type. Before
// Prepare, the new text is converted to the column's type and back, so that the
// journal holds the text the database will keep (jsonb's, an array's); a type
// that would change a string (a length limit) refuses the change instead. A row
// lock held elsewhere for more than 10 s counts as a change under the rewriter.
// Tables without a primary key are not rewritten (a ctid changes with every
// update): a value there that edit wants to change is reported as Failed.
//
// In both databases a change to a primary key column is refused (Failed): it
// would change which row the place names. A generated column (GENERATED
// ALWAYS AS) is offered but never written: its value changes with the
// columns it is computed from. Once the other changes are written it is read
// and offered to Edit again, and only a change Edit still wants then is
// refused (Failed). A value the database refuses (a
// constraint, a trigger) fails alone; the rest of its batch is written.
//
// Bucket sources are refused with an error wrapping [ErrUsage], Options.Query
// with a *QueryError.
func OpenRewriter(ctx context.Context, spec string, opts Options) (Rewriter, error) {
	if strings.TrimSpace(opts.Query) != "" {
		return nil, &QueryError{Source: store.Redact(spec), Rewrite: true}
	}
	if store.IsBucketScheme(store.URLScheme(spec)) {
		return nil, usagef("rewriting sessions kept in a bucket (%s) is not supported yet: stop the runtime, copy the session objects to a local folder, rewrite that folder, and copy them back", store.Redact(spec))
	}
	src, err := Open(ctx, spec, Options{Exclude: opts.Exclude})
	if err != nil {
		return nil, err
	}
	switch s := src.(type) {
	case *filesSource:
		if err := checkRewritableSpec(spec); err != nil {
			return nil, err
		}
		return newFilesRewriter(s), nil
	case *sqliteSource:
		w, err := openSQLiteRewriter(ctx, s)
		if err != nil {
			s.Close()
			return nil, err
		}
		return w, nil
	case *pgSource:
		w, err := openPostgresRewriter(ctx, s, spec)
		if err != nil {
			s.Close()
			return nil, err
		}
		return w, nil
	}
	src.Close()
	return nil, usagef("rewriting %s is not supported", src)
}

// checkRewritableSpec refuses a spec that is a symbolic link to a file: the
// rewriter never writes through a link (a folder link is fine: files are replaced
// inside the folder it leads to).
func checkRewritableSpec(spec string) error {
	lfi, err := os.Lstat(spec)
	if err != nil || lfi.Mode()&os.ModeSymlink == 0 {
		return nil // a missing spec is reported by Rewrite, as by Walk
	}
	fi, err := os.Stat(spec)
	if err != nil || fi.IsDir() {
		return nil
	}
	target, _ := os.Readlink(spec)
	return usagef("%s is a symbolic link (to %s): sessions are never rewritten through a link; name the file itself", spec, target)
}

// rewriteRun is the bookkeeping of one Rewrite call.
type rewriteRun struct {
	source   string
	edit     Edit
	opts     RewriteOptions
	retries  int
	c        RewriteCounts
	problems []*UnitError
}

func newRewriteRun(source string, edit Edit, opts RewriteOptions) *rewriteRun {
	r := &rewriteRun{source: source, edit: edit, opts: opts, retries: opts.Retries}
	switch {
	case r.retries == 0:
		r.retries = defaultRewriteRetries
	case r.retries < 0:
		r.retries = 0
	}
	return r
}

// fail records a unit left untouched because of err.
func (r *rewriteRun) fail(p ref.Place, err error) {
	r.c.Failed++
	r.problems = append(r.problems, &UnitError{Place: p, Err: err})
}

// conflict records a unit that kept changing.
// inUse records a unit left as it is because another process holds it open
// (RewriteCounts.InUse).
func (r *rewriteRun) inUse(p ref.Place) {
	r.c.InUse++
	r.problems = append(r.problems, &UnitError{Place: p, Err: ErrInUse})
}

func (r *rewriteRun) conflict(p ref.Place, attempts int) {
	r.c.Conflicts++
	r.problems = append(r.problems, &UnitError{Place: p, Err: fmt.Errorf("%w (%d attempts)", ErrConflict, attempts)})
}

// callEdit calls edit and tells whether it asks for a change.
func (r *rewriteRun) callEdit(p ref.Place, old []byte) ([]byte, bool, error) {
	nw, err := r.edit(p, old)
	if err != nil {
		return nil, false, fmt.Errorf("edit %s: %w", p, err)
	}
	if nw == nil || string(nw) == string(old) {
		return nil, false, nil
	}
	return nw, true, nil
}

func (r *rewriteRun) prepare(ch Change) error {
	if r.opts.Prepare == nil {
		return nil
	}
	if err := r.opts.Prepare(ch); err != nil {
		return fmt.Errorf("prepare %s: %w", ch.Place, err)
	}
	return nil
}

func (r *rewriteRun) committed(ch Change) {
	r.c.Changed++
	if r.opts.Committed != nil {
		r.opts.Committed(ch)
	}
}

// result joins a fatal error (may be nil) with the units' problems.
func (r *rewriteRun) result(fatal error) (RewriteCounts, error) {
	var uerr error
	if len(r.problems) > 0 {
		uerr = &RewriteError{Source: r.source, Units: r.problems}
	}
	switch {
	case fatal == nil:
		return r.c, uerr
	case uerr == nil:
		return r.c, fatal
	}
	return r.c, errors.Join(fatal, uerr)
}
