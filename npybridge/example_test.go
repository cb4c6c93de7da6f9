package npybridge_test

import (
	"bytes"
	"fmt"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

func ExampleWrite() {
	a, _ := ndarray.FromSlice([]float64{0, 1, 2, 3, 4, 5}, 2, 3)
	a, _ = a.ToOrder('<')
	var buf bytes.Buffer
	if err := npybridge.Write(&buf, a); err != nil {
		panic(err)
	}
	// The header np.save writes: data starts at byte 128.
	fmt.Printf("%q\n", buf.Bytes()[10:69])
	back, _ := npybridge.Read(&buf)
	fmt.Println(back)
	// Output:
	// "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"
	// <f8 (2, 3)
}

func ExampleReadOptions_ReadHeader() {
	a, _ := ndarray.Zeros(ndarray.MustParseDType(">i4"), 1000, 1000)
	var buf bytes.Buffer
	_ = npybridge.Write(&buf, a)
	h, err := npybridge.ReadOptions{}.ReadHeader(&buf) // reads 128 bytes, not the 4 MB of data
	fmt.Println(h.DType, h.Shape, h.FortranOrder, h.Major, h.DataOffset, h.DataLen(), err)
	// Output: >i4 [1000 1000] false 1 128 4000000 <nil>
}
