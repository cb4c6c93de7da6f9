package ndarray

import (
	"fmt"
	"unsafe"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// Element is the set of Go types that typed access supports, each matching
// one dtype: bool "b1", int8..int64 "i1".."i8", uint8..uint64 "u1".."u8",
// float32 "f4", float64 "f8", complex64 "c8", complex128 "c16".
type Element interface {
	bool | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 |
		float32 | float64 | complex64 | complex128
}

// DTypeOf returns the dtype, in the machine's byte order, whose elements are
// Go values of type T.
func DTypeOf[T Element]() DType {
	var zero T
	var dt DType
	switch any(zero).(type) {
	case bool:
		dt = DType{Kind: 'b', ItemSize: 1}
	case int8, int16, int32, int64:
		dt = DType{Kind: 'i', ItemSize: int(unsafe.Sizeof(zero))}
	case uint8, uint16, uint32, uint64:
		dt = DType{Kind: 'u', ItemSize: int(unsafe.Sizeof(zero))}
	case float32, float64:
		dt = DType{Kind: 'f', ItemSize: int(unsafe.Sizeof(zero))}
	case complex64, complex128:
		dt = DType{Kind: 'c', ItemSize: int(unsafe.Sizeof(zero))}
	}
	dt.Order = nativeOrder
	return dt.canonicalOrder()
}

// FromSlice returns a new Array of T's dtype in the machine's byte order
// holding a copy of values. With no shape the array is 1-d of len(values);
// otherwise the shape's element count must equal len(values). Use Scalar for
// a 0-d array. It fails with an error matching ErrShape when shape has more
// than MaxDims dimensions, a negative one, or an element count that
// overflows int, or ErrDataLength when its element count is not
// len(values).
func FromSlice[T Element](values []T, shape ...int) (*Array, error) {
	dt, shape, n, err := sliceShape[T](len(values), shape)
	if err != nil {
		return nil, err
	}
	data := make([]byte, n*dt.ItemSize)
	if n > 0 {
		copy(data, unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), len(data)))
	}
	if dt.Kind == 'b' {
		// A Go bool is stored as 0 or 1, which is what NumPy stores too;
		// this loop only guards against bools forged through unsafe.
		for i, b := range data {
			if b != 0 {
				data[i] = 1
			}
		}
	}
	return &Array{DType: dt, Shape: append([]int{}, shape...), Data: data}, nil
}

// sliceShape checks that shape (1-d of count when empty) holds count
// elements of T, and returns T's dtype, the shape and the count.
func sliceShape[T Element](count int, shape []int) (DType, []int, int, error) {
	if len(shape) == 0 {
		shape = []int{count}
	}
	n, err := NumElements(shape)
	if err != nil {
		return DType{}, nil, 0, err
	}
	if n != count {
		return DType{}, nil, 0, newError(ErrDataLength, fmt.Sprintf("shape %s holds %s, got %s", FormatShape(shape), codecerr.Count(n, "element"), codecerr.Count(count, "value")))
	}
	return DTypeOf[T](), shape, n, nil
}

// View returns an Array of T's dtype in the machine's byte order whose
// Data is values' own memory, not a copy: writing it (npybridge.Write,
// ext110.Marshal) sends the slice's bytes as they are. With no shape the
// array is 1-d of len(values); otherwise the shape's element count must
// equal len(values). Changing values changes the array, and the other way
// round. It fails as FromSlice does: ErrShape for an invalid shape,
// ErrDataLength for one whose element count is not len(values).
func View[T Element](values []T, shape ...int) (*Array, error) {
	dt, shape, n, err := sliceShape[T](len(values), shape)
	if err != nil {
		return nil, err
	}
	var data []byte
	if n > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), n*dt.ItemSize)
	} else {
		data = []byte{}
	}
	return &Array{DType: dt, Shape: append([]int{}, shape...), Data: data}, nil
}

// Scalar returns a 0-d Array holding v.
func Scalar[T Element](v T) *Array {
	a, _ := FromSlice([]T{v}, []int{}...)
	a.Shape = []int{}
	return a
}

// Aligned reports whether a's data starts at an address that is a
// multiple of its items' alignment (their size, up to 8 bytes, for
// integers, floats, datetimes and timedeltas; half their size, up to 8, for
// complex numbers; 1 for the rest), so that Values reads it in place rather
// than copying it. An empty array is aligned.
func (a *Array) Aligned() bool {
	if len(a.Data) == 0 {
		return true
	}
	align := 1
	switch a.DType.Kind {
	case 'i', 'u', 'f', 'M', 'm':
		align = a.DType.ItemSize
	case 'c':
		align = a.DType.ItemSize / 2
	}
	align = min(max(align, 1), 8)
	return uintptr(unsafe.Pointer(&a.Data[0]))%uintptr(align) == 0
}

// Values returns the elements of a as a []T in row-major order, in the
// machine's byte order. T must match the dtype's kind and item size
// (ErrType otherwise); the byte order may be either.
//
// When the array is in the machine's byte order and Data is aligned for T,
// the result aliases a.Data: no copy is made, and writes through either are
// seen by both. Otherwise (another byte order, misaligned data, or T bool,
// whose bytes other than 0 and 1 Go cannot hold) the result is a new slice.
func Values[T Element](a *Array) ([]T, error) {
	if err := checkType[T](a); err != nil {
		return nil, err
	}
	n := len(a.Data) / a.DType.ItemSize
	if n == 0 {
		return []T{}, nil
	}
	var zero T
	if _, isBool := any(zero).(bool); isBool {
		out := make([]bool, n)
		for i, b := range a.Data[:n] {
			out[i] = b != 0
		}
		return any(out).([]T), nil
	}
	aligned := uintptr(unsafe.Pointer(&a.Data[0]))%unsafe.Alignof(zero) == 0
	if aligned && a.DType.WithOrder(nativeOrder) == a.DType {
		return unsafe.Slice((*T)(unsafe.Pointer(&a.Data[0])), n), nil
	}
	out := make([]T, n)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), len(a.Data))
	copy(raw, a.Data)
	if a.DType.WithOrder(nativeOrder) != a.DType {
		SwapBytes(raw, a.DType)
	}
	return out, nil
}

// At returns the element at the given row-major index as a T, in the
// machine's byte order. It fails with an error matching ErrType when T does
// not match the dtype's kind and item size, or ErrIndex as Offset does.
func At[T Element](a *Array, index ...int) (T, error) {
	var v T
	if err := checkType[T](a); err != nil {
		return v, err
	}
	item, err := a.Item(index...)
	if err != nil {
		return v, err
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&v)), len(item))
	copy(raw, item)
	if _, isBool := any(v).(bool); isBool {
		raw[0] = b2u(raw[0] != 0)
	} else if a.DType.WithOrder(nativeOrder) != a.DType {
		SwapBytes(raw, a.DType)
	}
	return v, nil
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func checkType[T Element](a *Array) error {
	want := DTypeOf[T]()
	if a.DType.Kind != want.Kind || a.DType.ItemSize != want.ItemSize {
		return newError(ErrType, fmt.Sprintf("array of %s read as %T (%s)", a.DType, *new(T), want))
	}
	return nil
}

// FromRows returns a new 2-d Array of T's dtype, in the machine's byte
// order, holding a copy of rows: shape (len(rows), len(rows[0])). The rows
// must all have the same length (ErrShape names the first that does not);
// no rows make shape (0, 0).
func FromRows[T Element](rows [][]T) (*Array, error) {
	cols := 0
	if len(rows) > 0 {
		cols = len(rows[0])
	}
	flat := make([]T, 0, len(rows)*cols)
	for i, r := range rows {
		if len(r) != cols {
			return nil, newError(ErrShape, fmt.Sprintf("ragged rows: row %d has %s, row 0 has %d", i, codecerr.Count(len(r), "value"), cols))
		}
		flat = append(flat, r...)
	}
	return FromSlice(flat, len(rows), cols)
}

// Rows returns the elements of a 2-d array as one []T per row, in the
// machine's byte order; the rows share one backing slice, which aliases
// a.Data when Values would. T must match the dtype as for Values. It fails
// with an error matching ErrShape when a is not 2-d, or ErrType when T does
// not match.
func Rows[T Element](a *Array) ([][]T, error) {
	if len(a.Shape) != 2 {
		return nil, newError(ErrShape, fmt.Sprintf("Rows needs a 2-d array, got shape %s", FormatShape(a.Shape)))
	}
	flat, err := Values[T](a)
	if err != nil {
		return nil, err
	}
	cols := a.Shape[1]
	rows := make([][]T, a.Shape[0])
	for i := range rows {
		rows[i] = flat[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return rows, nil
}
