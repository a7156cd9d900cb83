package sessions

import (
	"context"
	"errors"
	"fmt"

	"github.com/mediactl/mediactl/pkg/ref"
)

// sqlBatchSize is how many changed values one write transaction carries: few
// enough that a live writer is not held off by our locks for long, many enough
// to amortize the commit.
const sqlBatchSize = 500

// sqlUnit is one column value of one row, as read, and what to write there.
type sqlUnit struct {
	place ref.Place
	old   []byte
	new   []byte
	cell  any // how the backend finds the cell again (*sqliteCell, *pgCell)
	// unaddressable, when set, says why the row cannot be found again (no primary
	// key…): such a unit is never written.
	unaddressable string
	// generated: the column's value is computed from the row's other columns
	// (GENERATED ALWAYS AS). It is never written, and changes when they are:
	// see sqlRewrite.finish.
	generated bool
}

func (u *sqlUnit) change() Change { return Change{Place: u.place, Old: u.old, New: u.new} }

// sqlBackend is what the batch engine needs from a database. Every method that
// returns a plain error may fail for the unit alone (the database refused the
// value: see unitError) or for the whole source (the connection is gone).
type sqlBackend interface {
	// normalize returns u.new as the database will keep it and report it.
	normalize(ctx context.Context, u *sqlUnit) ([]byte, error)
	begin(ctx context.Context) error
	// cas writes u.new if the cell still holds u.old, and returns the value as
	// stored. ok is false when the cell holds something else or the row is gone.
	cas(ctx context.Context, u *sqlUnit) (stored []byte, ok bool, err error)
	commit(ctx context.Context) error
	rollback(ctx context.Context) error
	// reread returns the cell's current value; ok is false when the row is gone or
	// the value is no longer text.
	reread(ctx context.Context, u *sqlUnit) (cur []byte, ok bool, err error)
	// unitError tells whether err concerns only the statement's unit (a value the
	// database refused) rather than the connection or the database.
	unitError(err error) bool
	// conflictError tells whether err means the row is busy elsewhere (a lock
	// timeout, a deadlock): the unit is then treated as changed under us.
	conflictError(err error) bool
}

// sqlRewrite offers units to Edit as the reader yields them and writes the
// changes in batches.
type sqlRewrite struct {
	r *rewriteRun
	b sqlBackend
	// deferWrites keeps every change until the read is over (a database where a
	// reader blocks writers).
	deferWrites bool
	pending     []*sqlUnit
	// derived are the units of generated columns that Edit wanted changed,
	// edited again by finish.
	derived []*sqlUnit
}

// generatedRefusal is why a value of a generated column is not rewritten.
const generatedRefusal = "the column is generated (GENERATED ALWAYS AS): its value is computed from the row's other columns and cannot be written, and once they were rewritten it still holds what was to change; change what it is computed from"

// offer calls Edit for a unit just read. It returns only errors that stop the
// rewrite.
func (s *sqlRewrite) offer(ctx context.Context, u *sqlUnit) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.r.c.Units++
	nw, ok, err := s.r.callEdit(u.place, u.old)
	if err != nil || !ok {
		return err
	}
	if u.unaddressable != "" {
		s.r.fail(u.place, errors.New(u.unaddressable))
		return nil
	}
	if u.generated {
		// Writing it would fail. The value is what its columns say: once
		// they are rewritten it may need no change any more.
		u.old = nil
		s.derived = append(s.derived, u)
		return nil
	}
	u.new = nw
	s.pending = append(s.pending, u)
	if len(s.pending) >= sqlBatchSize && !s.deferWrites {
		return s.flush(ctx)
	}
	return nil
}

// flush writes the pending changes, sqlBatchSize at a time.
func (s *sqlRewrite) flush(ctx context.Context) error {
	for len(s.pending) > 0 {
		n := min(len(s.pending), sqlBatchSize)
		batch := s.pending[:n:n]
		s.pending = s.pending[n:]
		if err := s.writeBatch(ctx, batch); err != nil {
			return err
		}
	}
	s.pending = nil
	return nil
}

// finish writes what is pending, then edits the values of generated columns
// that Edit wanted changed again, as they are now: one computed from a
// column just rewritten (json_extract(content, '$.path')) has changed with
// it, and needs nothing more. One that still needs a change, computed from
// what the rewrite does not write (a number, another table's key), fails
// with generatedRefusal. A row gone meanwhile needs nothing.
func (s *sqlRewrite) finish(ctx context.Context) error {
	if err := s.flush(ctx); err != nil {
		return err
	}
	derived := s.derived
	s.derived = nil
	for _, u := range derived {
		if err := ctx.Err(); err != nil {
			return err
		}
		cur, ok, err := s.b.reread(ctx, u)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if s.b.unitError(err) {
				s.r.fail(u.place, err)
				continue
			}
			return fmt.Errorf("re-read %s: %w", u.place, err)
		}
		if !ok {
			continue // the row is gone, or the value is no text any more
		}
		_, want, err := s.r.callEdit(u.place, cur)
		if err != nil {
			return err
		}
		if want {
			s.r.fail(u.place, errors.New(generatedRefusal))
		}
	}
	return nil
}

// writeBatch normalizes and prepares a batch, writes it in one transaction, and
// retries the units that changed under us.
func (s *sqlRewrite) writeBatch(ctx context.Context, batch []*sqlUnit) error {
	ready := batch[:0]
	for _, u := range batch {
		ok, err := s.normalize(ctx, u)
		if err != nil {
			return err
		}
		if ok {
			ready = append(ready, u)
		}
	}
	var stop error
	for i, u := range ready {
		if err := s.r.prepare(u.change()); err != nil {
			// Write what was prepared, then stop.
			stop = err
			ready = ready[:i]
			break
		}
	}
	retry, err := s.writeAll(ctx, ready)
	if err != nil || stop != nil {
		// After a Prepare error nothing more is edited or prepared: the units
		// that changed under us stay as they are.
		return errors.Join(stop, err)
	}
	for _, u := range retry {
		if err := s.retry(ctx, u); err != nil {
			return errors.Join(stop, err)
		}
	}
	return stop
}

// normalize replaces u.new by its stored form; false means the unit was refused
// (recorded).
func (s *sqlRewrite) normalize(ctx context.Context, u *sqlUnit) (bool, error) {
	stored, err := s.b.normalize(ctx, u)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if !s.b.unitError(err) {
			return false, err
		}
		s.r.fail(u.place, err)
		return false, nil
	}
	u.new = stored
	return true, nil
}

// writeAll writes prepared units in one transaction. If the database refuses one
// of them, the transaction is rolled back and each unit is written in a
// transaction of its own, so that the refusal stays the unit's. It returns the
// units that changed under us.
func (s *sqlRewrite) writeAll(ctx context.Context, units []*sqlUnit) (retry []*sqlUnit, err error) {
	if len(units) == 0 {
		return nil, nil
	}
	if len(units) > 1 {
		retry, done, err := s.tryBatch(ctx, units)
		if err != nil || done {
			return retry, err
		}
	}
	retry = nil
	for _, u := range units {
		ok, err := s.writeOne(ctx, u)
		if err != nil {
			return retry, err
		}
		if !ok {
			retry = append(retry, u)
		}
	}
	return retry, nil
}

// tryBatch writes all units in one transaction; done is false when the database
// refused one of them and nothing was written.
func (s *sqlRewrite) tryBatch(ctx context.Context, units []*sqlUnit) (retry []*sqlUnit, done bool, err error) {
	if err := s.b.begin(ctx); err != nil {
		return nil, false, fmt.Errorf("begin a write transaction: %w", err)
	}
	stored := make([][]byte, len(units))
	for i, u := range units {
		v, ok, err := s.b.cas(ctx, u)
		if err != nil {
			s.b.rollback(ctx)
			if ctx.Err() != nil {
				return nil, false, ctx.Err()
			}
			if s.b.unitError(err) || s.b.conflictError(err) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("write %s: %w", u.place, err)
		}
		if !ok {
			retry = append(retry, u)
			continue
		}
		stored[i] = v
	}
	if err := s.b.commit(ctx); err != nil {
		s.b.rollback(ctx)
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		if s.b.unitError(err) || s.b.conflictError(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("commit: %w", err)
	}
	for i, u := range units {
		if stored[i] != nil {
			s.committed(u, stored[i])
		}
	}
	return retry, true, nil
}

// writeOne writes one unit in a transaction of its own; ok is false when it
// changed under us. A refusal is recorded as the unit's failure.
func (s *sqlRewrite) writeOne(ctx context.Context, u *sqlUnit) (ok bool, err error) {
	if err := s.b.begin(ctx); err != nil {
		return false, fmt.Errorf("begin a write transaction: %w", err)
	}
	refused := func(err error) (bool, error) {
		s.b.rollback(ctx)
		switch {
		case ctx.Err() != nil:
			return false, ctx.Err()
		case s.b.conflictError(err):
			return false, nil
		case s.b.unitError(err):
			s.r.fail(u.place, err)
			return true, nil
		}
		return false, fmt.Errorf("write %s: %w", u.place, err)
	}
	stored, ok, err := s.b.cas(ctx, u)
	if err != nil {
		return refused(err)
	}
	if !ok {
		s.b.rollback(ctx)
		return false, nil
	}
	if err := s.b.commit(ctx); err != nil {
		return refused(err)
	}
	s.committed(u, stored)
	return true, nil
}

func (s *sqlRewrite) committed(u *sqlUnit, stored []byte) {
	ch := u.change()
	ch.New = stored
	s.r.committed(ch)
}

// retry re-reads a unit that changed under us, edits it again and writes it, up
// to the retry limit.
func (s *sqlRewrite) retry(ctx context.Context, u *sqlUnit) error {
	for attempt := 1; ; attempt++ {
		if attempt > s.r.retries {
			s.r.conflict(u.place, attempt)
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		s.r.c.Retried++
		cur, ok, err := s.b.reread(ctx, u)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if s.b.unitError(err) {
				s.r.fail(u.place, err)
				return nil
			}
			return fmt.Errorf("re-read %s: %w", u.place, err)
		}
		if !ok {
			s.r.c.Gone++
			return nil
		}
		nw, want, err := s.r.callEdit(u.place, cur)
		if err != nil || !want {
			return err
		}
		u.old, u.new = cur, nw
		if ok, err := s.normalize(ctx, u); err != nil || !ok {
			return err
		}
		if err := s.r.prepare(u.change()); err != nil {
			return err
		}
		done, err := s.writeOne(ctx, u)
		if err != nil || done {
			return err
		}
	}
}
