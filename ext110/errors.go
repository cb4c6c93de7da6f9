package ext110

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/ndarray"
)

// Sentinel errors; every error of the package wraps one, for errors.Is.
// Errors about the array itself (shape, dtype, data length) also wrap the
// matching ndarray sentinel, such as ndarray.ErrDataLength.
var (
	// ErrNotExt110: the input is not an ext object of type 110.
	ErrNotExt110 = errors.New("not an ext 110 object")
	// ErrMalformed: the payload is not a valid YEP-110 array map.
	ErrMalformed = errors.New("malformed payload")
	// ErrStrided: the payload has non-nil strides, so its data is not
	// C-contiguous.
	ErrStrided = errors.New("non-nil strides")
	// ErrNonstandard: encoding an array of a non-standard kind (S, U, V, M,
	// m) without Options.AllowNonstandard.
	ErrNonstandard = errors.New("non-standard dtype")
	// ErrTooDeep: a message whose arrays and maps nest deeper than
	// MessageOptions.MaxDepth.
	ErrTooDeep = errors.New("nested too deep")
	// ErrOffset: the payload has a non-zero offset key, so its array does
	// not start at the first byte of data.
	ErrOffset = errors.New("non-zero offset")
)

func errAt(class error, off int, format string, args ...any) error {
	return newError(class, int64(off), fmt.Sprintf(format, args...), nil)
}

func newError(class error, off int64, detail string, cause error) error {
	return &ndarray.Error{Pkg: "ext110", Err: class, Offset: off, Detail: detail, Cause: cause}
}

// nonstandard refuses a dtype YEP-110 leaves out, naming the option that
// sends it anyway.
func nonstandard(detail string) error {
	return &ndarray.Error{Pkg: "ext110", Err: ErrNonstandard, Offset: -1, Detail: detail, Option: "Options.AllowNonstandard"}
}
