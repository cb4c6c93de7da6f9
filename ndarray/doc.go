// Package ndarray holds the value that ndpack moves around: an
// N-dimensional array described the way NumPy's array interface (version 3)
// describes one: a dtype written as a typestr such as "<f8", a shape, and the
// elements as C-contiguous (row-major) bytes.
//
// The package depends on nothing but the standard library. The codecs live
// elsewhere: package ext110 (msgpack extension type 110, YEP-110) and
// package npybridge (NumPy .npy and .npz files).
//
// An Array's fields are exported so that codecs can build one around bytes
// they already hold without a copy. Anything that builds an Array by hand
// should call New or Validate: the codecs refuse an Array whose data length
// is not exactly the element count times the item size.
//
// Typed access goes through generic functions: FromSlice builds an Array from
// a Go slice, Values reads one back, and At reads a single element.
//
// Every error the package returns is an *Error whose Err is one of the
// sentinels ErrDType, ErrShape, ErrDataLength, ErrType and ErrIndex: test
// the class with errors.Is; the message says which input was wrong. Each
// function's documentation names the classes it can fail with.
package ndarray
