package ndarray

import (
	"errors"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// Sentinel errors. Every error the package returns wraps one of these, so
// callers can test the class of a failure with errors.Is and still print a
// message that says which input was wrong.
var (
	// ErrDType: a typestr that is malformed or names an unknown or
	// impossible element type.
	ErrDType = errors.New("invalid dtype")
	// ErrShape: a negative dimension, or an element or byte count that
	// overflows int.
	ErrShape = errors.New("invalid shape")
	// ErrDataLength: data whose length is not the element count times the
	// item size.
	ErrDataLength = errors.New("data length does not match shape")
	// ErrType: a Go element type that does not match the array's dtype.
	ErrType = errors.New("element type mismatch")
	// ErrIndex: an index with the wrong number of coordinates or one out of
	// range.
	ErrIndex = errors.New("index out of range")
	// ErrObject: numpy's object dtype ("|O", "object"): references to
	// Python objects, a pickle in a file, which no DType holds. It matches
	// ErrDType too, and reads as it does. Codecs tell an object array from
	// other bad dtypes by it, to say that its data is a pickle, never read.
	ErrObject error = objectClass{}
)

// objectClass is ErrObject's type: the class "invalid dtype", one kind of
// ErrDType.
type objectClass struct{}

func (objectClass) Error() string        { return ErrDType.Error() }
func (objectClass) Is(target error) bool { return target == ErrDType }

// The classes of failure that mean the same in every package of the
// module, declared once here: whichever codec or protocol reports that its
// input ended early, claimed more than a limit allows, nested too deeply,
// broke its format's rules or was no array of its encoding,
// errors.Is(err, ndarray.ErrTruncated) (ErrTooLarge, ErrTooDeep,
// ErrMalformed, ErrNotArray, ErrNonstandard) is true. A package may word a
// class its own way in its messages ("malformed payload" for an ext 110
// object's): the error still matches the one sentinel.
var (
	// ErrTruncated: the input ends before what it began does.
	ErrTruncated = codecerr.ErrTruncated
	// ErrTooLarge: a length, count or size over a limit the caller set or
	// the format allows.
	ErrTooLarge = codecerr.ErrTooLarge
	// ErrTooDeep: lists, maps or records nested more deeply than a limit
	// the caller set (a message's MaxDepth) or the module keeps.
	ErrTooDeep = codecerr.ErrTooDeep
	// ErrMalformed: bytes that break the rules of their format: a value
	// of the wrong type where the format wants another, a key missing or
	// twice, data that does not match its shape, bytes after the end.
	ErrMalformed = codecerr.ErrMalformed
	// ErrNotArray: input that is not an array of the encoding it was read
	// as at all (another msgpack value where an ext 110 object or a
	// dialect's map was wanted, an .npz member that is not an .npy file),
	// as opposed to one that is and is malformed.
	ErrNotArray = codecerr.ErrNotArray
	// ErrNonstandard: encoding an array of a kind YEP-110's standard list
	// leaves out (S, U, V, M8, m8) without the codec's AllowNonstandard.
	ErrNonstandard = codecerr.ErrNonstandard
)

// Error is the error type of this package and of every codec built on it
// (npybridge, ext110, dialect, yaq/avro, render): which package failed,
// the class of the failure (Err, a sentinel error for errors.Is), where in
// the input, what, and the underlying cause. One type, so that one
// errors.As finds the offset whichever codec read the bytes.
type Error struct {
	Pkg    string // the reporting package's name: "ndarray", "npybridge", "ext110", ...
	Err    error  // the class: one of the reporting package's sentinel errors
	Offset int64  // byte offset in the input; -1 when none applies
	Detail string // what exactly was wrong, quoting the input where it helps
	Cause  error  // the underlying error, such as another *Error; may be nil
	// Option names the reporting package's option that decides what
	// failed, where one does: the bound that refused it
	// ("ReadOptions.MaxHeaderSize") or the permission it lacked
	// ("Options.AllowNonstandard"). A program that has its own names for
	// those knobs (a command's flags) finds it here, not in the text.
	Option string
}

// Error formats the failure as "PKG: CLASS at byte N: DETAIL (OPTION):
// CAUSE", leaving out the offset when it is negative and the parts that
// are empty.
func (e *Error) Error() string {
	return codecerr.FormatOption(e.Pkg, e.Err, e.Offset, e.Detail, e.Option, e.Cause)
}

// Unwrap returns the class and the cause, so that errors.Is matches either.
func (e *Error) Unwrap() []error { return codecerr.Unwrap(e.Err, e.Cause) }

func newError(kind error, detail string) error {
	return &Error{Pkg: "ndarray", Err: kind, Offset: -1, Detail: detail}
}
