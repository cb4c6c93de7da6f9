package ndarray_test

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/ndarray"
)

// Casting.AsType converts as numpy's astype(casting=...) does: widening
// and float-to-float are allowed, float to int is refused unless the
// caller asks for it with Unsafe casting.
func ExampleCasting_AsType() {
	a, _ := ndarray.FromSlice([]float32{1.5, -2.25, 3})
	wide, err := ndarray.SameKind.AsType(a, ndarray.DTypeOf[float64]())
	v, _ := ndarray.Values[float64](wide)
	fmt.Println(wide.DType.Kind == 'f', wide.DType.ItemSize, v, err)

	_, err = ndarray.SameKind.AsType(a, ndarray.DTypeOf[int32]())
	fmt.Println(errors.Is(err, ndarray.ErrType))
	ints, _ := ndarray.Unsafe.AsType(a, ndarray.DTypeOf[int32]())
	iv, _ := ndarray.Values[int32](ints)
	fmt.Println(iv)
	// Output:
	// true 8 [1.5 -2.25 3] <nil>
	// true
	// [1 -2 3]
}

// ToOrder puts the bytes in the order a peer expects: numpy peers and the
// corpus write '<' on little-endian machines, and some instruments send '>'.
func ExampleArray_ToOrder() {
	a, _ := ndarray.FromSlice([]uint16{0x0102, 0x0304})
	be, _ := a.ToOrder('>')
	le, _ := a.ToOrder('<')
	fmt.Println(be.DType, be.Data)
	fmt.Println(le.DType, le.Data)
	v, _ := ndarray.Values[uint16](be) // typed access converts to the machine's order
	fmt.Printf("%#x\n", v)
	// Output:
	// >u2 [1 2 3 4]
	// <u2 [2 1 4 3]
	// [0x102 0x304]
}

// At and Rows read elements by index without converting the whole array.
func ExampleAt() {
	a, _ := ndarray.FromSlice([]int16{1, 2, 3, 4, 5, 6}, 2, 3)
	x, err := ndarray.At[int16](a, 1, 2)
	fmt.Println(x, err)
	rows, _ := ndarray.Rows[int16](a)
	fmt.Println(rows)
	_, err = ndarray.At[int16](a, 2, 0)
	fmt.Println(err != nil)
	// Output:
	// 6 <nil>
	// [[1 2 3] [4 5 6]]
	// true
}

// FromColumnMajor takes Fortran-order data, as a .npy file with
// fortran_order True or a MATLAB-style buffer holds it, into the row-major
// Array every codec uses.
func ExampleFromColumnMajor() {
	dt := ndarray.MustParseDType("|u1")
	a, _ := ndarray.FromColumnMajor(dt, []int{2, 3}, []byte{1, 4, 2, 5, 3, 6})
	fmt.Println(a.Shape, a.Data)
	back, _ := a.ColumnMajorData()
	fmt.Println(back)
	// Output:
	// [2 3] [1 2 3 4 5 6]
	// [1 4 2 5 3 6]
}

// Casting.Allows answers as numpy's np.can_cast does, for every dtype
// ndpack holds; ParseCasting reads numpy's names of the rules.
func ExampleCasting_Allows() {
	i8, f8 := ndarray.MustParseDType("int64"), ndarray.MustParseDType("float64")
	fmt.Println(ndarray.Safe.Allows(i8, f8), ndarray.Safe.Allows(f8, i8), ndarray.Unsafe.Allows(f8, i8))
	c, _ := ndarray.ParseCasting("equiv")
	fmt.Println(c.Allows(f8, ndarray.MustParseDType(">f8")), c.Allows(f8, ndarray.MustParseDType("f4")))
	s, ns := ndarray.MustParseDType("M8[s]"), ndarray.MustParseDType("M8[ns]")
	fmt.Println(ndarray.Safe.Allows(s, ns), ndarray.Safe.Allows(ns, s), ndarray.Safe.Allows(i8, ndarray.MustParseDType("S21")))
	// Output:
	// true false true
	// true false
	// true false true
}
