package zarr

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// Sentinel errors; every error of the package wraps one, for errors.Is, or
// one of the classes every codec reports, ndarray's: ErrMalformed (a
// .zarray, .zgroup or .zattrs that is not the JSON Zarr v2 writes:
// syntax, a missing key, a value of the wrong type, a negative dimension, a
// chunk of no elements; or a chunk that is not what its array's metadata
// says: of the wrong size, or not the zlib stream of one), ErrTooLarge
// when a bound refused the input, ErrTooDeep when its JSON nests past
// MaxMetadataDepth.
var (
	// ErrUnsupported: valid Zarr v2 that ndpack does not read or write: a
	// compressor other than zlib, filters, an object dtype, a record
	// dtype Zarr v2 cannot carry (titles, padding), another zarr_format.
	ErrUnsupported = errors.New("unsupported")
	// ErrNotZarr: a path that holds neither an array (.zarray) nor a group
	// (.zgroup).
	ErrNotZarr = errors.New("not a Zarr array or group")
)

// errMetadata and errChunk are ndarray.ErrMalformed as this package words
// it, of metadata and of a chunk.
var (
	errMetadata = codecerr.Class("malformed metadata", ndarray.ErrMalformed)
	errChunk    = codecerr.Class("malformed chunk", ndarray.ErrMalformed)
)

// errAt makes the package's error: class, the byte offset in the input it
// concerns (-1 for none) and what was wrong.
func errAt(class error, off int64, format string, args ...any) error {
	return &ndarray.Error{Pkg: "zarr", Err: class, Offset: off, Detail: fmt.Sprintf(format, args...)}
}

// wrapErr makes the package's error of class around cause.
func wrapErr(class error, cause error, format string, args ...any) error {
	return &ndarray.Error{Pkg: "zarr", Err: class, Offset: -1, Detail: fmt.Sprintf(format, args...), Cause: cause}
}
