package sessions

// valueArena copies the short values of database rows for Items. A database
// holds many short values (numbers, ids, roles) and Walk yields each as an
// Item whose Text the consumer owns: short values share chunks instead of
// costing an allocation each. A consumer that keeps one Text keeps at most its
// chunk alive; each Text is capped, so that appending to it never writes into
// another's bytes.
type valueArena struct{ buf []byte }

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

func (a *valueArena) reserve(n int) {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, arenaChunk)
	}
}
