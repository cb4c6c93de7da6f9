package avro

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// Sentinel errors; every error of the package wraps one, for errors.Is.
// Errors about the array itself also wrap the ndarray sentinel. The classes
// every codec reports are ndarray's: ndarray.ErrMalformed (the bytes are
// not a valid value of their schema: a negative length, a union branch
// out of range, an ndarray record whose dimension is outside Avro's int
// or whose data does not match its shape), ErrNonstandard (encoding an
// array of a kind outside YEP-110's standard list, S, U, V, M8, m8,
// without ArrayOptions.AllowNonstandard), ErrTruncated, ErrTooLarge.
var (
	// ErrDoesNotFit: a Go value that does not fit the Avro schema it is
	// to be encoded with (a string for a boolean parameter, say), or an
	// array of a record (structured) dtype, which the YEP-113 ndarray
	// record cannot carry: it has a typestr and no descr, so |V<n> would
	// arrive with every field lost.
	ErrDoesNotFit = errors.New("value does not fit its schema")
	// ErrSchema: an Avro schema or protocol this package cannot use:
	// malformed JSON, an unknown type, a reference to an undefined name, a
	// fixed without a size, a union inside a union, a name defined twice,
	// a record whose values could never end.
	ErrSchema = errors.New("invalid schema")
)

// errMalformed is ndarray.ErrMalformed as this package words it.
var errMalformed = codecerr.Class("malformed value", ndarray.ErrMalformed)

func errAt(class error, off int, format string, args ...any) error {
	return &ndarray.Error{Pkg: "avro", Err: class, Offset: int64(off), Detail: fmt.Sprintf(format, args...)}
}

// schemaErr is an ErrSchema failure, which has no offset: schemas are
// JSON values, not bytes read.
func schemaErr(format string, args ...any) error {
	return &ndarray.Error{Pkg: "avro", Err: ErrSchema, Offset: -1, Detail: fmt.Sprintf(format, args...)}
}

// inSchema says where in a schema or protocol err was found ("record "r",
// field "f""), before what it says was wrong.
func inSchema(err error, format string, args ...any) error {
	where := fmt.Sprintf(format, args...)
	if e, ok := err.(*ndarray.Error); ok {
		c := *e
		c.Detail = where + ": " + c.Detail
		return &c
	}
	return fmt.Errorf("%s: %w", where, err)
}
