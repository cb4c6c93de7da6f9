package ext110

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// Sentinel errors; every error of the package wraps one, for errors.Is.
// Errors about the array itself (shape, dtype, data length) also wrap the
// matching ndarray sentinel, such as ndarray.ErrDataLength.
var (
	// ErrNotExt110: the input is not an ext object of type 110.
	ErrNotExt110 = errors.New("not an ext 110 object")
	// ErrTruncated: the input ends before the object does. It is the same
	// value as the other codecs' ErrTruncated (npybridge, dialect, yaq).
	ErrTruncated = codecerr.ErrTruncated
	// ErrMalformed: the payload is not a valid YEP-110 array map.
	ErrMalformed = errors.New("malformed payload")
	// ErrStrided: the payload has non-nil strides, so its data is not
	// C-contiguous.
	ErrStrided = errors.New("non-nil strides")
	// ErrNonstandard: encoding an array of a non-standard kind (S, U, V, M,
	// m) without Options.AllowNonstandard.
	ErrNonstandard = errors.New("non-standard dtype")
	// ErrTooLarge: a payload over the ext32 limit of 2^32-1 bytes, over a
	// Decoder's MaxPayload, or a message over MessageOptions.MaxSize. It is
	// the same value as the other packages' ErrTooLarge.
	ErrTooLarge = codecerr.ErrTooLarge
	// ErrTooDeep: a message whose arrays and maps nest deeper than
	// MessageOptions.MaxDepth.
	ErrTooDeep = errors.New("nested too deep")
	// ErrOffset: the payload has a non-zero offset key, so its array does
	// not start at the first byte of data.
	ErrOffset = errors.New("non-zero offset")
)

// Error is a decoding or encoding failure: its class (one of the sentinel errors
// above), the byte offset in the input where it was found (-1 when none
// applies), what was wrong, and the underlying cause if any. Its message
// starts with "ext110: ".
type Error struct {
	Err    error  // the class: one of the sentinel errors
	Offset int64  // byte offset in the input; -1 when none applies
	Detail string // what was wrong, quoting the input where it helps
	Cause  error  // the underlying error, such as an ndarray.Error; may be nil
}

// Error formats the failure as "ext110: CLASS at byte N: DETAIL: CAUSE".
func (e *Error) Error() string { return codecerr.Format("ext110", e.Err, e.Offset, e.Detail, e.Cause) }

// Unwrap returns the class and the cause, so that errors.Is matches either.
func (e *Error) Unwrap() []error { return codecerr.Unwrap(e.Err, e.Cause) }

func errAt(class error, off int, format string, args ...any) error {
	return newError(class, int64(off), fmt.Sprintf(format, args...), nil)
}

func newError(class error, off int64, detail string, cause error) error {
	return &Error{Err: class, Offset: off, Detail: detail, Cause: cause}
}
