package avro

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// Sentinel errors; every error of the package wraps one, for errors.Is.
// Errors about the array itself also wrap the ndarray sentinel.
var (
	// ErrTruncated: the input ends before the value does. It is the same
	// value as the other codecs' ErrTruncated.
	ErrTruncated = codecerr.ErrTruncated
	// ErrMalformed: the bytes are not a valid value of their schema: a
	// negative length, a union branch out of range, an ndarray record
	// whose dimension is outside Avro's int or whose data does not match
	// its shape.
	ErrMalformed = errors.New("malformed value")
	// ErrDoesNotFit: a Go value that does not fit the Avro schema it is
	// to be encoded with (a string for a boolean parameter, say), or an
	// array of a record (structured) dtype, which the YEP-113 ndarray
	// record cannot carry: it has a typestr and no descr, so |V<n> would
	// arrive with every field lost.
	ErrDoesNotFit = errors.New("value does not fit its schema")
	// ErrNonstandard: encoding an array of a kind outside YEP-110's
	// standard list (S, U, V, M8, m8) without ArrayOptions.AllowNonstandard.
	ErrNonstandard = errors.New("non-standard dtype")
	// ErrTooLarge: a frame or value from a peer over MaxSize, or over a
	// bound its bytes cannot vouch for: more items that take no bytes than
	// a value may hold, more Go memory than a small multiple of its bytes,
	// a value spread over more frames than allowed. It is the module's
	// shared ErrTooLarge (ext110.ErrTooLarge is the same value).
	ErrTooLarge = codecerr.ErrTooLarge
	// ErrSchema: an Avro schema or protocol this package cannot use:
	// malformed JSON, an unknown type, a reference to an undefined name, a
	// fixed without a size, a union inside a union, a name defined twice,
	// a record whose values could never end.
	ErrSchema = errors.New("invalid schema")
)

// Error is a failure of this package: its class (one of the sentinel errors
// above), the byte offset in the input where it was found (-1 when none
// applies, as for a schema), what was wrong, and the underlying cause if
// any. Its message starts with "avro: ".
type Error struct {
	Err    error  // the class: one of the sentinel errors
	Offset int64  // byte offset in the input; -1 when none applies
	Detail string // what was wrong
	Cause  error  // the underlying error, such as an ndarray.Error; may be nil
}

// Error formats the failure as "avro: CLASS at byte N: DETAIL: CAUSE".
func (e *Error) Error() string { return codecerr.Format("avro", e.Err, e.Offset, e.Detail, e.Cause) }

// Unwrap returns the class and the cause, so that errors.Is matches either.
func (e *Error) Unwrap() []error { return codecerr.Unwrap(e.Err, e.Cause) }

func errAt(class error, off int, format string, args ...any) error {
	return &Error{Err: class, Offset: int64(off), Detail: fmt.Sprintf(format, args...)}
}

// schemaErr is an ErrSchema failure, which has no offset: schemas are
// JSON values, not bytes read.
func schemaErr(format string, args ...any) error {
	return &Error{Err: ErrSchema, Offset: -1, Detail: fmt.Sprintf(format, args...)}
}

// inSchema says where in a schema or protocol err was found ("record "r",
// field "f""), before what it says was wrong.
func inSchema(err error, format string, args ...any) error {
	where := fmt.Sprintf(format, args...)
	if e, ok := err.(*Error); ok {
		c := *e
		c.Detail = where + ": " + c.Detail
		return &c
	}
	return fmt.Errorf("%s: %w", where, err)
}
