package ndarray_test

import (
	"fmt"

	"github.com/ndpack/ndpack/ndarray"
)

func ExampleFromSlice() {
	a, err := ndarray.FromSlice([]float64{0, 1, 2, 3, 4, 5}, 2, 3)
	if err != nil {
		panic(err)
	}
	v, _ := ndarray.At[float64](a, 1, 2)
	fmt.Println(a.Shape, a.Len(), v)
	// Output: [2 3] 6 5
}

func ExampleParseDType() {
	dt, err := ndarray.ParseDType(">i2")
	fmt.Println(dt.Kind == 'i', dt.ItemSize, dt.Order == '>', dt.IsStandard(), err)
	_, err = ndarray.ParseDType("<f3")
	fmt.Println(err)
	// Output:
	// true 2 true true <nil>
	// ndarray: invalid dtype: typestr "<f3": kind 'f' has no 3-byte size (valid: [2 4 8 16])
}

func ExampleValues() {
	// Big-endian bytes, as a sender might produce them.
	a, _ := ndarray.New(ndarray.MustParseDType(">u2"), []int{2}, []byte{0x01, 0x00, 0x00, 0x02})
	v, _ := ndarray.Values[uint16](a) // converted to the machine's order (a copy)
	fmt.Println(v)
	// Output: [256 2]
}

// A file of float32 read as float64, as numpy's astype would convert it;
// lossy conversions need Unsafe.
func ExampleValuesAs() {
	a, _ := ndarray.FromSlice([]float32{0.5, 1.25, -3})
	v, _ := ndarray.ValuesAs[float64](a)
	fmt.Println(v)

	_, err := ndarray.ValuesAs[int16](a)
	fmt.Println(err)
	ints, _ := ndarray.Unsafe.AsType(a, ndarray.MustParseDType("<i2"))
	w, _ := ndarray.Values[int16](ints)
	fmt.Println(w)
	// Output:
	// [0.5 1.25 -3]
	// ndarray: element type mismatch: cannot convert <f4 to <i2 with casting "same_kind"
	// [0 1 -3]
}

func ExampleFromRows() {
	a, _ := ndarray.FromRows([][]int32{{1, 2, 3}, {4, 5, 6}})
	fmt.Println(a)
	rows, _ := ndarray.Rows[int32](a)
	fmt.Println(rows[1])
	// Output:
	// <i4 (2, 3)
	// [4 5 6]
}
