package ndarray_test

import (
	"errors"
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

// A dtype as numpy's np.dtype takes it: a name, a typestr, a comma list
// (a record of fields f0, f1, ...), a subarray, numpy's list form.
func ExampleParseDType() {
	for _, spec := range []string{"float32", ">i2", "f4,i2", "(3,)f4", "[('x', '<f4'), ('pos', '<f8', (2,))]"} {
		dt, err := ndarray.ParseDType(spec)
		fmt.Println(dt, dt.ItemSize, err)
	}
	_, err := ndarray.ParseDType("longdouble")
	fmt.Println(err != nil, errors.Is(err, ndarray.ErrDType))
	// Output:
	// <f4 4 <nil>
	// >i2 2 <nil>
	// [('f0', '<f4'), ('f1', '<i2')] 6 <nil>
	// ('<f4', (3,)) 12 <nil>
	// [('x', '<f4'), ('pos', '<f8', (2,))] 20 <nil>
	// true true
}

// A typestr as the formats carry it: byte order, kind, size.
func ExampleParseTypestr() {
	dt, err := ndarray.ParseTypestr(">i2")
	fmt.Println(dt.Kind == 'i', dt.ItemSize, dt.Order == '>', dt.IsStandard(), err)
	_, err = ndarray.ParseTypestr("<f3")
	fmt.Println(err)
	_, err = ndarray.ParseTypestr("float32")
	fmt.Println(err)
	// Output:
	// true 2 true true <nil>
	// ndarray: invalid dtype: typestr "<f3": kind 'f' has no 3-byte size (valid: [2 4 8 16])
	// ndarray: invalid dtype: typestr "float32": byte order 'f' is not one of '<', '>', '|', '='
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
