package ext110_test

import (
	"bytes"
	"fmt"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

func ExampleMarshal() {
	a, _ := ndarray.FromSlice([]uint8{1, 2, 3})
	b, err := ext110.Marshal(a)
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", b)
	back, _ := ext110.Unmarshal(b)
	fmt.Println(back, back.Data)
	// Output:
	// c7 28 6e 84 a4 64 61 74 61 c4 03 01 02 03 a7 74 79 70 65 73 74 72 a3 7c 75 31 a5 73 68 61 70 65 91 03 a7 76 65 72 73 69 6f 6e 03
	// |u1 (3,) [1 2 3]
}

// Arrays travel inside any msgpack message once ext110 is imported. (A
// message from outside is decoded with package ndpack's
// MessageOptions.UnmarshalMessage, which checks it first: msgpack.Unmarshal
// trusts what the bytes claim.)
func Example_msgpack() {
	a, _ := ndarray.FromSlice([]float32{1.5, 2.5})
	msg, _ := msgpack.Marshal(map[string]any{"method": "get_measured", "result": a})

	var decoded map[string]any
	if err := msgpack.Unmarshal(msg, &decoded); err != nil {
		panic(err)
	}
	arr := decoded["result"].(*ndarray.Array)
	v, _ := ndarray.Values[float32](arr)
	fmt.Println(arr.Shape, v)
	// Output: [2] [1.5 2.5]
}

func ExampleDecoder() {
	var stream bytes.Buffer
	enc := ext110.NewEncoder(&stream)
	for i := range 3 {
		a, _ := ndarray.FromSlice([]int16{int16(i), int16(10 * i)})
		_ = enc.Encode(a)
	}
	dec := ext110.NewDecoder(&stream)
	for {
		a, err := dec.Decode()
		if err != nil {
			break // io.EOF at the end
		}
		v, _ := ndarray.Values[int16](a)
		fmt.Println(v)
	}
	// Output:
	// [0 0]
	// [1 10]
	// [2 20]
}
