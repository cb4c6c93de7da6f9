package npybridge

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// Sentinel errors; every error of the package wraps one, for errors.Is.
// Errors about the array itself also wrap the ndarray sentinel
// (ndarray.ErrShape, ndarray.ErrDType). The classes every codec reports
// are ndarray's: ndarray.ErrNotArray (an .npz member that is not a
// NAME.npy file, a text file say, which np.load returns as bytes),
// ErrMalformed (the header is not the dict numpy writes: syntax, keys,
// types, values), ErrTruncated, ErrTooLarge.
var (
	// ErrNotNPY: the input does not start with the NPY magic string: it
	// is no NPY file (ErrNotNPZ is the same of an archive).
	ErrNotNPY = errors.New("not an NPY file")
	// ErrVersion: a format version other than 1.0, 2.0 or 3.0.
	ErrVersion = errors.New("unsupported format version")
	// ErrUnsupported: a valid NPY file whose dtype ndpack does not hold as
	// an ndarray.Array: object arrays (pickle), which ReadObjects reads
	// with ReadOptions.AllowObjects (ErrObjectArray wraps it).
	ErrUnsupported = errors.New("unsupported dtype")
	// ErrNotNPZ: the input is not a zip archive, or one np.load could not
	// read (a member name twice).
	ErrNotNPZ = errors.New("not an npz archive")
	// ErrNotMappable: an .npz member whose data cannot be memory-mapped
	// (compressed, Fortran order, misaligned); the error says which.
	ErrNotMappable = errors.New("cannot be mapped")
	// ErrCompressed: an .npz member that is deflated (np.savez_compressed),
	// whose data does not lie in the archive as it is (NPZ.DataAt).
	ErrCompressed = errors.New("compressed member")
	// ErrOverlap: an .npz archive whose members' bytes (local header and
	// data) overlap each other or the zip directory, or lie beyond the
	// archive: a directory whose entries all point at one member would
	// otherwise decompress the same bytes once per entry.
	ErrOverlap = errors.New("overlapping or out-of-range zip members")
	// ErrNoMember: an .npz archive has no member of the name asked for.
	ErrNoMember = errors.New("no such member")
	// ErrInvalidArray: an array given to be written is nil, or its dtype,
	// shape and data do not fit together (see ndarray.Array.Validate), or
	// an npz name is empty or repeated.
	ErrInvalidArray = errors.New("invalid array")
)

// errHeader is ndarray.ErrMalformed as this package words it.
var errHeader = codecerr.Class("malformed header", ndarray.ErrMalformed)

// errCorruptMember is the class of an .npz member whose bytes contradict
// its directory record (sizes, CRC, local header) or are not the deflate
// data they claim: a corrupt member of a readable archive, not a file that
// is no archive, though it matches ErrNotNPZ under errors.Is as it always
// did.
var errCorruptMember error = aliasClass{"corrupt npz member", ErrNotNPZ}

// aliasClass is a class of errors worded in its own way that is also
// another, for errors.Is.
type aliasClass struct {
	text string
	of   error
}

func (c aliasClass) Error() string { return c.text }
func (c aliasClass) Unwrap() error { return c.of }

func errAt(class error, off int64, format string, args ...any) error {
	return &ndarray.Error{Pkg: "npybridge", Err: class, Offset: off, Detail: fmt.Sprintf(format, args...)}
}

func wrapAt(class error, off int64, cause error) error {
	return &ndarray.Error{Pkg: "npybridge", Err: class, Offset: off, Cause: cause}
}

// errHeaderTooLarge is the class of a header longer than
// ReadOptions.MaxHeaderSize: errors.Is(err, ndarray.ErrTooLarge) finds it.
var errHeaderTooLarge = fmt.Errorf("header %w", codecerr.ErrTooLarge)

// errNoArchive is what the methods of an NPZWriter not made by
// NewNPZWriter return.
var errNoArchive = errors.New("npybridge: the NPZWriter writes to nothing: make one with NewNPZWriter")
