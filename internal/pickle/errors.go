package pickle

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// Sentinel errors; every error of the package wraps one, for errors.Is.
var (
	// ErrTruncated: the stream ends before STOP or inside an opcode's
	// argument. It is the codecs' shared ErrTruncated.
	ErrTruncated = codecerr.ErrTruncated
	// ErrTooLarge: the stream would allocate or expand beyond a limit of
	// Options. It is the codecs' shared ErrTooLarge.
	ErrTooLarge = codecerr.ErrTooLarge
	// ErrTooDeep: the stream nests containers deeper than
	// Options.MaxDepth. It is the codecs' shared ErrTooDeep.
	ErrTooDeep = codecerr.ErrTooDeep
	// ErrNotData: the stream names a global, or uses an opcode, that would
	// run code or build an object other than the data types Decode knows.
	ErrNotData = errors.New("not plain data")
	// ErrMalformed: the stream is not a pickle Python could load: an
	// unknown opcode, a stack underflow, arguments of the wrong types. It
	// is the codecs' shared ErrMalformed, worded as a pickle's.
	ErrMalformed = codecerr.Class("malformed pickle", codecerr.ErrMalformed)
)

// Error is a failure of Decode or of the writer: its class (one of the
// sentinel errors above), the byte offset in the stream where it was found
// (-1 when none applies) and what was wrong. Its message starts with
// "pickle: ".
type Error struct {
	Err    error  // the class: one of the sentinel errors
	Offset int64  // byte offset in the stream; -1 when none applies
	Detail string // what was wrong, naming the opcode or global
	// Option is the bound of Options that refused the stream
	// ("Options.MaxSize"), if one did: the caller, who has its own name
	// for that bound, may rename it.
	Option string
}

// Error formats the failure as "pickle: CLASS at byte N: DETAIL (OPTION)".
func (e *Error) Error() string {
	return codecerr.FormatOption("pickle", e.Err, e.Offset, e.Detail, e.Option, nil)
}

// Unwrap returns the class, so that errors.Is matches it.
func (e *Error) Unwrap() error { return e.Err }

func errAt(class error, off int, format string, args ...any) *Error {
	return &Error{Err: class, Offset: int64(off), Detail: fmt.Sprintf(format, args...)}
}
