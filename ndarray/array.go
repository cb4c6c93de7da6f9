package ndarray

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Array is an N-dimensional array: a dtype, a shape and the elements as
// C-contiguous (row-major) bytes in the dtype's byte order.
//
// An empty Shape is a 0-d array holding one element. A valid Array has
// len(Data) == NumElements(Shape) * DType.ItemSize exactly; see Validate.
// Arrays returned by this module's decoders are valid. Data may alias memory
// the Array does not own (a zero-copy decode, a memory-mapped file); such
// functions say so.
type Array struct {
	DType DType  // the element type, byte order included
	Shape []int  // the length of each dimension; empty for a 0-d array
	Data  []byte // the elements, row-major, in DType's byte order
}

// New returns an Array of the given dtype and shape holding data, after
// checking that they fit together. The Array keeps data (no copy) and a copy
// of shape. It fails with an error matching ErrDType when dt is not a valid
// dtype, ErrShape when shape has more than MaxDims dimensions, a negative
// one, or an element or byte count that overflows int, or ErrDataLength
// when len(data) is not the byte count of dt and shape.
func New(dt DType, shape []int, data []byte) (*Array, error) {
	a := &Array{DType: dt, Shape: append([]int{}, shape...), Data: data}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return a, nil
}

// IsZero reports whether a is the zero Array, an unset value: no dtype, no
// shape, no data. Encoders treat it as absent (msgpack nil, and left out of
// a struct under omitempty).
func (a Array) IsZero() bool { return a.DType == DType{} && a.Shape == nil && a.Data == nil }

// Zeros returns a new Array of the given dtype and shape whose bytes are all
// zero. It fails with an error matching ErrDType when dt is not a valid
// dtype, or ErrShape when shape has more than MaxDims dimensions, a
// negative one, or an element or byte count that overflows int.
func Zeros(dt DType, shape ...int) (*Array, error) {
	if err := dt.Validate(); err != nil {
		return nil, err
	}
	n, err := ByteSize(dt, shape)
	if err != nil {
		return nil, err
	}
	return &Array{DType: dt, Shape: append([]int{}, shape...), Data: make([]byte, n)}, nil
}

// Validate checks the dtype, the shape (no negative dimension, no overflow)
// and that the data length is exactly the element count times the item
// size. The error matches ErrDType when the dtype is not valid, ErrShape
// when a is nil or its shape has more than MaxDims dimensions, a negative
// one, or an element or byte count that overflows int, and ErrDataLength
// when the length of Data is wrong.
func (a *Array) Validate() error {
	if a == nil {
		return newError(ErrShape, "nil *Array")
	}
	if err := a.DType.Validate(); err != nil {
		return err
	}
	want, err := ByteSize(a.DType, a.Shape)
	if err != nil {
		return err
	}
	if len(a.Data) != want {
		return newError(ErrDataLength, fmt.Sprintf("shape %s of %s needs %d bytes, data has %d",
			FormatShape(a.Shape), a.DType, want, len(a.Data)))
	}
	return nil
}

// DefaultMaxSize is the bound every codec and RPC package of this module
// puts on one unit it reads from outside (a message, an Avro RPC frame or
// value, an ext 110 payload) when its MaxSize option is 0: 64 MiB. A unit
// over its bound is refused, matching ErrTooLarge of the codec that read
// it, before anything is allocated for it.
const DefaultMaxSize = 64 << 20

// MaxDims is the most dimensions an array may have: NumPy's limit
// (NPY_MAXDIMS), so that every array ndpack reads or sends, NumPy can hold.
const MaxDims = 32

// NumElements returns the number of elements of an array of the given shape:
// the product of the dimensions, 1 for the empty shape. It fails on more
// than MaxDims dimensions, a negative dimension, or, as NumPy does, when the
// product of the non-zero dimensions does not fit in an int, even if
// another dimension is 0. The error matches ErrShape.
func NumElements(shape []int) (int, error) {
	_, n, err := elementCounts(shape)
	return n, err
}

// elementCounts checks shape and returns the product of its non-zero
// dimensions and the element count.
func elementCounts(shape []int) (nonZero, n int, err error) {
	if len(shape) > MaxDims {
		return 0, 0, newError(ErrShape, fmt.Sprintf("%d dimensions, more than the %d NumPy allows", len(shape), MaxDims))
	}
	nonZero, zero := 1, false
	for i, d := range shape {
		switch {
		case d < 0:
			return 0, 0, newError(ErrShape, fmt.Sprintf("dimension %d of shape %s is negative", i, FormatShape(shape)))
		case d == 0:
			zero = true
		case nonZero > math.MaxInt/d:
			return 0, 0, newError(ErrShape, fmt.Sprintf("element count of shape %s overflows int", FormatShape(shape)))
		default:
			nonZero *= d
		}
	}
	if zero {
		return nonZero, 0, nil
	}
	return nonZero, nonZero, nil
}

// ByteSize returns the number of data bytes of an array of the given dtype
// and shape, failing where NumElements fails or where, as NumPy checks it,
// the item size times the product of the non-zero dimensions overflows. The
// error matches ErrShape, or ErrDType for a negative item size.
func ByteSize(dt DType, shape []int) (int, error) {
	nonZero, n, err := elementCounts(shape)
	if err != nil {
		return 0, err
	}
	if dt.ItemSize < 0 {
		return 0, newError(ErrDType, fmt.Sprintf("item size %d", dt.ItemSize))
	}
	if dt.ItemSize > 0 && nonZero > math.MaxInt/dt.ItemSize {
		return 0, newError(ErrShape, fmt.Sprintf("byte count of shape %s of %s overflows int", FormatShape(shape), dt))
	}
	return n * dt.ItemSize, nil
}

// Len returns the number of elements. It is only meaningful for a valid
// Array.
func (a *Array) Len() int {
	if a.DType.ItemSize == 0 {
		n, _ := NumElements(a.Shape) // items of no bytes: S0, U0, V0
		return n
	}
	return len(a.Data) / a.DType.ItemSize
}

// NDim returns the number of dimensions (0 for a 0-d array).
func (a *Array) NDim() int { return len(a.Shape) }

// Offset returns the byte offset in Data of the element at the given
// row-major index, with one coordinate per dimension. It fails with an
// error matching ErrIndex when the number of coordinates is not a's number
// of dimensions or a coordinate is out of its dimension's range (a negative
// coordinate does not count from the end).
func (a *Array) Offset(index ...int) (int, error) {
	if len(index) != len(a.Shape) {
		return 0, newError(ErrIndex, fmt.Sprintf("%d coordinates for a %d-d array", len(index), len(a.Shape)))
	}
	flat := 0
	for i, x := range index {
		if x < 0 || x >= a.Shape[i] {
			return 0, newError(ErrIndex, fmt.Sprintf("coordinate %d is %d, dimension is %d", i, x, a.Shape[i]))
		}
		flat = flat*a.Shape[i] + x
	}
	return flat * a.DType.ItemSize, nil
}

// Item returns the bytes of one element, aliasing Data. It fails as Offset
// does, with ErrIndex.
func (a *Array) Item(index ...int) ([]byte, error) {
	off, err := a.Offset(index...)
	if err != nil {
		return nil, err
	}
	return a.Data[off : off+a.DType.ItemSize : off+a.DType.ItemSize], nil
}

// Clone returns a deep copy of a, owning its own data and shape.
func (a *Array) Clone() *Array {
	return &Array{DType: a.DType, Shape: append([]int{}, a.Shape...), Data: append([]byte{}, a.Data...)}
}

// Equal reports whether a and b have the same dtype, shape and bytes. Arrays
// holding the same values in different byte orders are not Equal; compare
// a.ToOrder(o) with b.ToOrder(o) for that.
func (a *Array) Equal(b *Array) bool {
	if a.DType != b.DType || len(a.Shape) != len(b.Shape) {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	return bytes.Equal(a.Data, b.Data)
}

// String describes the array without its data, e.g. "<f8 (2, 3)".
func (a *Array) String() string {
	return a.DType.String() + " " + FormatShape(a.Shape)
}

// FormatShape prints a shape as a Python tuple, as NumPy does: "()", "(5,)",
// "(2, 3)".
func FormatShape(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}
