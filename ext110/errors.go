package ext110

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error of the package wraps one, for errors.Is.
// Errors about the array itself (shape, dtype, data length) also wrap the
// matching ndarray sentinel, such as ndarray.ErrDataLength.
var (
	// ErrNotExt110: the input is not an ext object of type 110.
	ErrNotExt110 = errors.New("not an ext 110 object")
	// ErrTruncated: the input ends before the object does.
	ErrTruncated = errors.New("truncated input")
	// ErrMalformed: the payload is not a valid YEP-110 array map.
	ErrMalformed = errors.New("malformed payload")
	// ErrStrided: the payload has non-nil strides, so its data is not
	// C-contiguous.
	ErrStrided = errors.New("non-nil strides")
	// ErrNonstandard: encoding an array of a non-standard kind (S, U, V, M,
	// m) without Options.AllowNonstandard.
	ErrNonstandard = errors.New("non-standard dtype")
	// ErrTooLarge: a payload over the ext32 limit of 2^32-1 bytes, or over a
	// Decoder's MaxPayload.
	ErrTooLarge = errors.New("payload too large")
)

// Error is a decoding or encoding failure: its class (one of the sentinel
// errors), the byte offset in the input where it was found (-1 when none
// applies), what was wrong, and the underlying cause if any.
type Error struct {
	Err    error
	Offset int64
	Detail string
	Cause  error
}

func (e *Error) Error() string {
	s := "ext110: " + e.Err.Error()
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

func errAt(class error, off int, format string, args ...any) error {
	return &Error{Err: class, Offset: int64(off), Detail: fmt.Sprintf(format, args...)}
}
