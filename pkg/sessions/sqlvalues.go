package sessions

import "github.com/mediactl/mediactl/pkg/ref"

// valueArena copies the short values of database rows for Items. A database
// holds many short values (numbers, ids, roles) and Walk yields each as a
// row's Value whose Text the consumer owns: short values share chunks instead of
// costing an allocation each. A consumer that keeps one Text keeps at most its
// chunk alive; each Text is capped, so that appending to it never writes into
// another's bytes.
type valueArena struct {
	buf []byte
	// forms is number's scratch buffer.
	forms []byte
}

const (
	arenaMaxValue = 64   // longer values get an allocation of their own
	arenaChunk    = 4096 // bytes per shared chunk
)

// copy returns a copy of b that the caller owns.
func (a *valueArena) copy(b []byte) []byte {
	if len(b) > arenaMaxValue {
		return append([]byte(nil), b...)
	}
	a.reserve(len(b))
	n := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// copyString is copy for a string.
func (a *valueArena) copyString(s string) []byte {
	if len(s) > arenaMaxValue {
		return []byte(s)
	}
	a.reserve(len(s))
	n := len(a.buf)
	a.buf = append(a.buf, s...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// appendWith returns what appendFn appends to an empty slice, in the arena;
// appendFn must append at most arenaMaxValue bytes.
func (a *valueArena) appendWith(appendFn func([]byte) []byte) []byte {
	a.reserve(arenaMaxValue)
	n := len(a.buf)
	a.buf = appendFn(a.buf)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// number returns a copy of a number's text followed by its integer forms
// (see ref.AppendIntegerForms), which the caller owns: "1234567890.000
// 1234567890" for a numeric, "1.7333e+15 1733300000000000" for a float. A
// runtime names a file by the number's value, which a column's text may
// spell with a fraction or an exponent.
func (a *valueArena) number(text []byte) []byte {
	a.forms = ref.AppendIntegerForms(append(a.forms[:0], text...), text)
	return a.copy(a.forms)
}

func (a *valueArena) reserve(n int) {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, arenaChunk)
	}
}

// rowValues gathers the values of one row at a time, for the Item that
// carries them; the slice is reused for the next row (Item.Values is only
// valid during the call), the texts are not.
type rowValues struct{ vals []Value }

// add appends a value to the row being read.
func (r *rowValues) add(column string, text []byte) {
	r.vals = append(r.vals, Value{Column: column, Text: text})
}

// empty reports whether the row being read has no value yet.
func (r *rowValues) empty() bool { return len(r.vals) == 0 }

// take returns the row's values, valid until the next call to add, and
// starts the next row.
func (r *rowValues) take() []Value {
	v := r.vals
	r.vals = r.vals[:0]
	return v
}
