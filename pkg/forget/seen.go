package forget

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"io"
	"sync"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/sessions"
)

// A unit is left out of a later read only as the first read saw it.
//
// The first read decides which units are the forgotten owners' alone; the
// reads after it (the check before the moves, the read after them) leave
// those units out, so that what only they name can go. But a unit's name
// is no owner's for ever: a database row is named by its key, and SQLite
// gives a deleted row's rowid to the next row inserted, PostgreSQL reuses a
// ctid, a file's path can be written again by another session. A row of
// another owner saved under the key of a forgotten owner's row while forget
// runs would be left out, and a blob it names removed. So each unit the
// first read sees is fingerprinted (a database row by its values, a
// document by its bytes), and a later read leaves a unit out only when its
// fingerprint is the same: a unit that changed is read, whoever's it is
// now, and what it names stays (a forgotten owner's session saved again
// during the run keeps its blobs too: when unsure, keep).
type fingerprints struct {
	seed maphash.Seed
	mu   sync.Mutex
	// of maps a unit (its name's hash) to its content's fingerprint, never
	// zero; zero marks a name that two units' names share, or a document
	// read twice with different bytes: such a unit is never left out.
	of map[uint64]uint64
}

func newFingerprints() *fingerprints {
	return &fingerprints{seed: maphash.MakeSeed(), of: map[uint64]uint64{}}
}

// writeString writes s with its length, so that no two sequences of
// strings hash as one.
func writeString(h *maphash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.WriteString(s)
}

func writeBytes(h *maphash.Hash, b []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// name is the hash of u's name.
func (f *fingerprints) name(u owner.Unit) uint64 {
	var h maphash.Hash
	h.SetSeed(f.seed)
	writeString(&h, u.Source)
	writeString(&h, u.Table)
	writeString(&h, u.Key)
	writeString(&h, u.Document)
	return h.Sum64()
}

// row is the fingerprint of a database row's values, never zero.
func (f *fingerprints) row(vals []sessions.Value) uint64 {
	var h maphash.Hash
	h.SetSeed(f.seed)
	for _, v := range vals {
		writeString(&h, v.Column)
		writeBytes(&h, v.Text)
	}
	return h.Sum64() | 1
}

func (f *fingerprints) record(name, print uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.of[name]; ok && old != print {
		print = 0
	}
	f.of[name] = print
}

// same reports whether the unit named name was seen by the first read with
// this print.
func (f *fingerprints) same(name, print uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, ok := f.of[name]
	return ok && old != 0 && old == print
}

// recording is a source of the first read, fingerprinting each unit it
// yields.
type recording struct {
	sessions.Source
	f *fingerprints
}

func (s *recording) Walk(ctx context.Context, fn func(sessions.Item) error) (sessions.Counts, error) {
	return s.Source.Walk(ctx, func(it sessions.Item) error {
		if it.Err != nil {
			return fn(it)
		}
		name := s.f.name(owner.UnitOf(it.Place))
		if it.Open == nil {
			s.f.record(name, s.f.row(it.Values))
			return fn(it)
		}
		open := it.Open
		it.Open = func() (io.ReadCloser, error) {
			rc, err := open()
			if err != nil {
				return nil, err
			}
			h := &hashing{rc: rc, f: s.f, name: name}
			h.h.SetSeed(s.f.seed)
			return h, nil
		}
		return fn(it)
	})
}

// Close leaves the source open: it belongs to the caller.
func (s *recording) Close() error { return nil }

// hashing is a document being read by the first read: its fingerprint is
// recorded when it was read to its end. A read that stopped before (an
// error, a look-up that needed only the start) records nothing, and a unit
// without a fingerprint is never left out.
type hashing struct {
	rc   io.ReadCloser
	h    maphash.Hash
	f    *fingerprints
	name uint64
	eof  bool
}

func (r *hashing) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.h.Write(p[:n])
	if errors.Is(err, io.EOF) {
		r.eof = true
	}
	return n, err
}

func (r *hashing) Close() error {
	if r.eof {
		r.f.record(r.name, r.h.Sum64()|1)
	}
	return r.rc.Close()
}

// document is the fingerprint of the document open opens, read to its end.
func (f *fingerprints) document(open func() (io.ReadCloser, error)) (uint64, error) {
	rc, err := open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	var h maphash.Hash
	h.SetSeed(f.seed)
	if _, err := io.Copy(&h, rc); err != nil {
		return 0, err
	}
	return h.Sum64() | 1, nil
}
