// Package usage marks errors that the operator can fix — a malformed URL, a
// directory that does not exist, flags that do not go together — so that a CLI
// can tell them from failures of the work itself and exit with its usage code.
//
// The error text is only the message: the operator reads what to fix, not the
// name of an error class.
package usage

import (
	"errors"
	"fmt"
)

// Err is matched by errors.Is for every error made by Errorf.
var Err = errors.New("usage error")

// Errorf formats a usage error. Like fmt.Errorf, a %w verb wraps an error.
func Errorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

type usageError struct{ err error }

func (e *usageError) Error() string        { return e.err.Error() }
func (e *usageError) Unwrap() error        { return e.err }
func (e *usageError) Is(target error) bool { return target == Err }
