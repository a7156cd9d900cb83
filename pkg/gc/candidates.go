package gc

import (
	"bytes"
	"encoding/json"
	"io"
	"iter"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mediactl/mediactl/pkg/retain"
)

// Candidates are the blobs a plan would remove, oldest first (then by key).
// They are held as ids into the plan's index of the store — 4 bytes each — and
// a candidate's key is only rendered when it is asked for: by At, All, the
// JSON encoding, or Execute, which renders one batch at a time.
//
// The zero value holds no candidate. In JSON, Candidates is an array of
// Candidate objects, as a []Candidate would be.
type Candidates struct {
	ids []uint32 // blob ids; referencedBit marks those sessions refer to
	// r holds the blobs' keys, sizes and times, by id.
	r *retain.Retention
}

const referencedBit = 1 << 31

// Len is the number of candidates.
func (c Candidates) Len() int { return len(c.ids) }

// At returns candidate i, 0 <= i < Len().
func (c Candidates) At(i int) Candidate {
	id := c.ids[i]
	n := int(id &^ referencedBit)
	return Candidate{
		Key:        c.r.Key(n),
		Size:       c.r.Size(n),
		ModTime:    c.r.ModTime(n),
		Referenced: id&referencedBit != 0,
	}
}

// All yields the candidates in order.
func (c Candidates) All() iter.Seq[Candidate] {
	return func(yield func(Candidate) bool) {
		for i := range c.ids {
			if !yield(c.At(i)) {
				return
			}
		}
	}
}

// Keys yields the candidates' keys in order.
func (c Candidates) Keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := range c.ids {
			if !yield(c.r.Key(int(c.ids[i] &^ referencedBit))) {
				return
			}
		}
	}
}

// MarshalJSON renders the candidates as a JSON array of Candidate objects.
// For many candidates, WriteJSON streams them instead.
func (c Candidates) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	err := c.WriteJSON(&b, "", "")
	return b.Bytes(), err
}

// WriteJSON writes the candidates to w as json.MarshalIndent(list, prefix,
// indent) would write the equivalent []Candidate (as json.Marshal would when
// prefix and indent are empty), rendering one candidate at a time, so that
// memory does not grow with their number.
func (c Candidates) WriteJSON(w io.Writer, prefix, indent string) error {
	if len(c.ids) == 0 {
		_, err := io.WriteString(w, "[]")
		return err
	}
	pretty := prefix != "" || indent != ""
	var nl1, nl2 []byte // line breaks before an element and before its fields
	if pretty {
		nl1 = []byte("\n" + prefix + indent)
		nl2 = []byte("\n" + prefix + indent + indent)
	}
	field := func(b []byte, name string) []byte {
		b = append(b, nl2...)
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		if pretty {
			b = append(b, ' ')
		}
		return b
	}
	b := make([]byte, 0, 64<<10)
	b = append(b, '[')
	var key []byte
	for i, id := range c.ids {
		n := int(id &^ referencedBit)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, nl1...)
		b = append(b, '{')
		b = field(b, "key")
		key = c.r.Index().AppendKey(key[:0], n)
		b = appendJSONString(b, key)
		b = append(b, ',')
		b = field(b, "size")
		b = strconv.AppendInt(b, c.r.Size(n), 10)
		b = append(b, ',')
		b = field(b, "mod_time")
		b = append(b, '"')
		b = c.r.ModTime(n).AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
		if id&referencedBit != 0 {
			b = append(b, ',')
			b = field(b, "referenced")
			b = append(b, "true"...)
		}
		b = append(b, nl1...)
		b = append(b, '}')
		if len(b) >= 60<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if pretty {
		b = append(b, '\n')
		b = append(b, prefix...)
	}
	b = append(b, ']')
	_, err := w.Write(b)
	return err
}

// appendJSONString appends s as encoding/json renders a string: plain
// printable ASCII as it is, anything else through encoding/json itself.
func appendJSONString(b, s []byte) []byte {
	for _, c := range s {
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, err := json.Marshal(string(s))
			if err != nil { // not for a string
				panic(err)
			}
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
