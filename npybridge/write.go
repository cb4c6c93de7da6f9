package npybridge

import (
	"io"
	"os"
	"slices"

	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/ndarray"
)

// Write writes a as an NPY file to w, byte-identical to np.save of the same
// array: C order, the header AppendHeader makes, then the data as it is,
// without a copy.
// It fails with an *ndarray.Error wrapping ErrInvalidArray when a is nil or invalid
// or has a subarray dtype, or with w's write error.
func Write(w io.Writer, a *ndarray.Array) error {
	if a == nil {
		return errAt(ErrInvalidArray, -1, "cannot write a nil *ndarray.Array")
	}
	if err := a.Validate(); err != nil {
		return wrapAt(ErrInvalidArray, -1, err)
	}
	if err := checkWritable(a.DType); err != nil {
		return err
	}
	if _, err := w.Write(AppendHeader(nil, a.DType, a.Shape)); err != nil {
		return err
	}
	_, err := w.Write(a.Data)
	return err
}

// Append appends a as an NPY file to dst, the bytes Write writes, growing
// dst at most once, to the exact size (Size). It fails as Write does, and
// then returns dst unchanged.
func Append(dst []byte, a *ndarray.Array) ([]byte, error) {
	n, err := Size(a)
	if err != nil {
		return dst, err
	}
	dst = slices.Grow(dst, n)
	return append(AppendHeader(dst, a.DType, a.Shape), a.Data...), nil
}

// Size returns the length of the NPY file Write writes for a, without
// writing it, so that a message holding the file can be sized before any
// of it is copied. It fails as Write does.
func Size(a *ndarray.Array) (int, error) {
	if a == nil {
		return 0, errAt(ErrInvalidArray, -1, "cannot write a nil *ndarray.Array")
	}
	if err := a.Validate(); err != nil {
		return 0, wrapAt(ErrInvalidArray, -1, err)
	}
	if err := checkWritable(a.DType); err != nil {
		return 0, err
	}
	return len(AppendHeader(nil, a.DType, a.Shape)) + len(a.Data), nil
}

// WriteFrom writes an NPY file to w for an array of dtype dt and the given
// shape whose row-major data is read from r, as np.save would write it:
// exactly the shape's byte count is copied, so memory does not grow with
// the array. It fails if r ends early.
// It fails with an *ndarray.Error wrapping ErrInvalidArray for an invalid dtype or
// shape or a subarray dtype, ndarray.ErrTruncated when r ends early, or with r's or
// w's error.
func WriteFrom(w io.Writer, dt ndarray.DType, shape []int, r io.Reader) error {
	if err := dt.Validate(); err != nil {
		return wrapAt(ErrInvalidArray, -1, err)
	}
	if err := checkWritable(dt); err != nil {
		return err
	}
	n, err := ndarray.ByteSize(dt, shape)
	if err != nil {
		return wrapAt(ErrInvalidArray, -1, err)
	}
	if _, err := w.Write(AppendHeader(nil, dt, shape)); err != nil {
		return err
	}
	copied, err := io.CopyN(w, r, int64(n))
	if err == io.EOF {
		return errAt(ndarray.ErrTruncated, -1, "the data source ended after %d of %d bytes", copied, n)
	}
	return err
}

// WriteFile writes a as the NPY file name, atomically: the bytes go to a
// temporary file in the same folder, renamed to name only once complete, so
// name is never left half-written and an existing file survives a failure.
// It fails as Write does, or with the file system's error.
func WriteFile(name string, a *ndarray.Array) error {
	return atomicfile.Write(name, 0o666, func(f *os.File) error { return Write(f, a) })
}
