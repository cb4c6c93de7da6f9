package npybridge

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// Sentinel errors; every error of the package wraps one, for errors.Is.
// Errors about the array itself also wrap the ndarray sentinel
// (ndarray.ErrShape, ndarray.ErrDType).
var (
	// ErrNotNPY: the input does not start with the NPY magic string.
	ErrNotNPY = errors.New("not an NPY file")
	// ErrVersion: a format version other than 1.0, 2.0 or 3.0.
	ErrVersion = errors.New("unsupported format version")
	// ErrHeader: the header is not the dict numpy writes (syntax, keys,
	// types, values).
	ErrHeader = errors.New("malformed header")
	// ErrHeaderTooLarge: a header longer than ReadOptions.MaxHeaderSize.
	ErrHeaderTooLarge = errors.New("header too large")
	// ErrUnsupported: a valid NPY file whose dtype ndpack does not hold:
	// structured dtypes, and objects (pickle), which are never read.
	ErrUnsupported = errors.New("unsupported dtype")
	// ErrTruncated: the input ends before the header or the data does.
	ErrTruncated = errors.New("truncated input")
	// ErrNotNPZ: the input is not a zip archive, or one np.load could not
	// read (a member name twice).
	ErrNotNPZ = errors.New("not an npz archive")
	// ErrNoMember: an .npz archive has no member of the name asked for.
	ErrNoMember = errors.New("no such member")
)

// Error is a failure of this package: its class (one of the sentinel errors
// above), the byte offset in the file (-1 when none applies), what was
// wrong, and the cause. Its message starts with "npybridge: ".
type Error = codecerr.Error

func errAt(class error, off int64, format string, args ...any) error {
	return &Error{Pkg: "npybridge", Err: class, Offset: off, Detail: fmt.Sprintf(format, args...)}
}

func wrapAt(class error, off int64, cause error) error {
	return &Error{Pkg: "npybridge", Err: class, Offset: off, Cause: cause}
}
