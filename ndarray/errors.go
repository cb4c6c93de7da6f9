package ndarray

import "errors"

// Sentinel errors. Every error the package returns wraps one of these, so
// callers can test the class of a failure with errors.Is and still print a
// message that says which input was wrong.
var (
	// ErrDType: a typestr that is malformed or names an unknown or
	// impossible element type.
	ErrDType = errors.New("invalid dtype")
	// ErrShape: a negative dimension, or an element or byte count that
	// overflows int.
	ErrShape = errors.New("invalid shape")
	// ErrDataLength: data whose length is not the element count times the
	// item size.
	ErrDataLength = errors.New("data length does not match shape")
	// ErrType: a Go element type that does not match the array's dtype.
	ErrType = errors.New("element type mismatch")
	// ErrIndex: an index with the wrong number of coordinates or one out of
	// range.
	ErrIndex = errors.New("index out of range")
)

// Error is the error type of this package: what was wrong (Err, one of the
// sentinel errors) and the detail that locates it.
type Error struct {
	Err    error  // one of the sentinel errors above
	Detail string // what exactly was wrong, quoting the input
}

// Error formats the failure as "ndarray: CLASS: DETAIL".
func (e *Error) Error() string { return "ndarray: " + e.Err.Error() + ": " + e.Detail }

// Unwrap returns the sentinel error, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }

func newError(kind error, detail string) error { return &Error{Err: kind, Detail: detail} }
