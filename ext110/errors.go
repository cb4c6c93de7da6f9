package ext110

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// Sentinel errors; every error of the package wraps one, for errors.Is.
// Errors about the array itself (shape, dtype, data length) also wrap the
// matching ndarray sentinel, such as ndarray.ErrDataLength. The classes
// every codec reports are ndarray's: ndarray.ErrNotArray (the input is
// not an ext object of type 110), ErrMalformed (the payload is not a valid
// YEP-110 array map), ErrNonstandard, ErrTruncated and ErrTooLarge.
var (
	// ErrStrided: the payload has non-nil strides, so its data is not
	// C-contiguous.
	ErrStrided = errors.New("non-nil strides")
	// ErrOffset: the payload has a non-zero offset key, so its array does
	// not start at the first byte of data.
	ErrOffset = errors.New("non-zero offset")
)

// The shared classes as this package words them.
var (
	errNotExt110 = codecerr.Class("not an ext 110 object", ndarray.ErrNotArray)
	errMalformed = codecerr.Class("malformed payload", ndarray.ErrMalformed)
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
	return &ndarray.Error{Pkg: "ext110", Err: ndarray.ErrNonstandard, Offset: -1, Detail: detail, Option: "Options.AllowNonstandard"}
}
