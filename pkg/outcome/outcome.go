// Package outcome is the one vocabulary every mediactl report ends with: what
// a run of scan, verify, gc or migrate came to. Each report says its outcome;
// the command line maps it to an exit code in one place.
//
// Outcomes are ordered by how much they tell an operator: a run that was
// interrupted says the least about the store (its counts are partial), so
// when several parts of a run end differently, the run's outcome is the
// [Worst] of them.
package outcome

import "encoding/json"

// Outcome is what a run came to.
type Outcome int

const (
	// OK: the work is done and nothing is wrong.
	OK Outcome = iota
	// Found: the work is done and it found problems (dangling references,
	// corrupt blobs, conflicts, references left on local copies).
	Found
	// Refused: a safety guard or the store lock stopped the work before it
	// changed anything it guards.
	Refused
	// Incomplete: an I/O or parse error stopped part of the work; nothing
	// unsafe was done on the part that could not be read.
	Incomplete
	// Interrupted: a signal stopped the run; what was done is reported, and
	// running the same command again goes on.
	Interrupted
)

var names = [...]string{"ok", "found", "refused", "incomplete", "interrupted"}

func (o Outcome) String() string {
	if o < 0 || int(o) >= len(names) {
		return "unknown"
	}
	return names[o]
}

// MarshalJSON writes the outcome's name.
func (o Outcome) MarshalJSON() ([]byte, error) { return json.Marshal(o.String()) }

// UnmarshalJSON reads an outcome's name.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	for i, n := range names {
		if n == s {
			*o = Outcome(i)
			return nil
		}
	}
	return &json.UnsupportedValueError{Str: s}
}

// Worst is the outcome that tells the most of os: interrupted, then
// incomplete, then refused, then found, then ok. It is part of the package's
// API for a caller that makes one outcome of several runs (two stores of one
// gc, see the example); the operations themselves worsen their report's
// outcome step by step (Worsen).
func Worst(os ...Outcome) Outcome {
	w := OK
	for _, o := range os {
		if o > w {
			w = o
		}
	}
	return w
}

// Worsen sets *o to the worse of *o and p.
func (o *Outcome) Worsen(p Outcome) {
	if p > *o {
		*o = p
	}
}
