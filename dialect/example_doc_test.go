package dialect_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ndarray"
)

// A map as Python's msgpack.packb(a, default=msgpack_numpy.encode) writes
// it for np.array([[1.5, -2], [0.25, 4]], dtype='<f4'): the bytes below
// were produced by msgpack-numpy 0.4 and msgpack-python 1.0.
func ExampleUnmarshal() {
	b, _ := hex.DecodeString("85c4026e64c3c40474797065a33c6634c4046b696e64c400" +
		"c4057368617065920202c40464617461c4100000c03f000000c00000803e00008040")
	a, d, err := dialect.Unmarshal(b)
	if err != nil {
		panic(err)
	}
	v, _ := ndarray.Values[float32](a)
	fmt.Println(d, a.DType, a.Shape, v)
	// Output: msgpack-numpy <f4 [2 2] [1.5 -2 0.25 4]
}

// The same array in both dialects, byte for byte as msgpack_numpy.encode
// and openpi_client's packer write it: a Python service reading either
// convention gets a numpy array back.
func ExampleDialect_Marshal() {
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	a, _ = a.ToOrder('<') // numpy peers send '<i2'
	for _, d := range []dialect.Dialect{dialect.MsgpackNumpy, dialect.OpenPI} {
		b, err := d.Marshal(a)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %x\n", d, b)
	}
	// Output:
	// msgpack-numpy: 85c4026e64c3c40474797065a33c6932c4046b696e64c400c40573686170659103c40464617461c406010002000300
	// openpi: 84c40b5f5f6e6461727261795f5fc3c40464617461c406010002000300c4056474797065a33c6932c40573686170659103
}

// DecodeHeader reads the dtype and shape and says where the data lies,
// without copying it: enough to route or refuse a large array cheaply.
func ExampleDecodeHeader() {
	a, _ := ndarray.Zeros(ndarray.MustParseDType("<u2"), 480, 640)
	b, _ := dialect.OpenPI.Marshal(a)
	h, err := dialect.DecodeHeader(b)
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Dialect, h.DType, h.Shape, h.DataLen, h.Len == len(b))
	// Output: openpi <u2 [480 640] 614400 true
}

// Arrays written back to back, as a stream of frames; the data is handed
// to the writer without a copy.
func ExampleEncoder() {
	var stream bytes.Buffer
	enc := dialect.NewEncoder(&stream, dialect.MsgpackNumpy)
	for i := range 3 {
		a, _ := ndarray.FromSlice([]uint8{uint8(i), uint8(i * 10)})
		if err := enc.Encode(a); err != nil {
			panic(err)
		}
	}
	// Each map's header says how long it is.
	b := stream.Bytes()
	for len(b) > 0 {
		h, err := dialect.DecodeHeader(b)
		if err != nil {
			panic(err)
		}
		a, _, _ := dialect.Unmarshal(b[:h.Len])
		fmt.Println(a.Data)
		b = b[h.Len:]
	}
	// Output:
	// [0 0]
	// [1 10]
	// [2 20]
}

// What a dialect cannot carry is an error that names it: OpenPI's map has
// no room for a record's fields.
func ExampleDialect_Marshal_record() {
	dt, _ := ndarray.NewRecord([]ndarray.Field{
		{Name: "x", DType: ndarray.MustParseDType("<f4"), Offset: 0},
		{Name: "y", DType: ndarray.MustParseDType("<f4"), Offset: 4},
	}, 0)
	a, _ := ndarray.Zeros(dt, 2)
	_, err := dialect.OpenPI.Marshal(a)
	fmt.Println(errors.Is(err, dialect.ErrStructured))
	_, err = dialect.MsgpackNumpy.Marshal(a)
	fmt.Println(err)
	// Output:
	// true
	// <nil>
}

// Parse reads the names the command line uses (ndpack convert --to openpi).
func ExampleParse() {
	d, err := dialect.Parse("openpi")
	fmt.Println(d == dialect.OpenPI, err)
	_, err = dialect.Parse("pickle")
	fmt.Println(err)
	// Output:
	// true <nil>
	// dialect: unknown dialect "pickle" (want msgpack-numpy, openpi or gr00t)
}
