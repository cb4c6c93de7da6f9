// Package codecerr is the error type shared by the module's codecs, so that
// every decoder reports failures the same way: the package, the class of the
// failure (a sentinel error for errors.Is), where in the input, what, and
// the underlying cause.
package codecerr

import "fmt"

// Error is a decoding or encoding failure. Each codec exports it under its
// own name as a type alias.
type Error struct {
	Pkg    string // the codec's package name, which starts the message
	Err    error  // the class: one of the codec's sentinel errors
	Offset int64  // byte offset in the input; -1 when none applies
	Detail string // what was wrong
	Cause  error  // the underlying error, if any
}

// Error formats the failure as "PKG: CLASS at byte N: DETAIL: CAUSE".
func (e *Error) Error() string {
	s := e.Pkg + ": " + e.Err.Error()
	if e.Offset >= 0 {
		s += fmt.Sprintf(" at byte %d", e.Offset)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the class and the cause, so errors.Is matches either.
func (e *Error) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}
