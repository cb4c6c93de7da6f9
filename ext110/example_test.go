package ext110_test

import (
	"bytes"
	"errors"
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

// Arrays travel inside any msgpack message once ext110 is imported.
func Example_msgpack() {
	a, _ := ndarray.FromSlice([]float32{1.5, 2.5})
	msg, _ := msgpack.Marshal(map[string]any{"method": "get_measured", "result": a})

	var decoded map[string]any
	if err := (ext110.MessageOptions{}).UnmarshalMessage(msg, &decoded); err != nil {
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

// Messages from outside are checked before they are decoded: a few bytes
// that claim four billion items, or nesting that would overflow the stack,
// are errors rather than a dead process.
func ExampleMessageOptions_UnmarshalMessage() {
	a, _ := ndarray.FromSlice([]uint16{7, 8, 9})
	msg, _ := msgpack.Marshal(map[string]any{"id": 4, "result": a})

	var resp struct {
		ID     int            `msgpack:"id"`
		Result *ndarray.Array `msgpack:"result"`
	}
	if err := (ext110.MessageOptions{}).UnmarshalMessage(msg, &resp); err != nil {
		panic(err)
	}
	fmt.Println(resp.ID, resp.Result)

	var v any
	err := ext110.MessageOptions{}.UnmarshalMessage([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}, &v)
	fmt.Println(err)
	fmt.Println(errors.Is(err, ndarray.ErrTruncated))

	deep := append(bytes.Repeat([]byte{0x91}, 1000), 0x00)
	err = ext110.MessageOptions{MaxDepth: 100}.UnmarshalMessage(deep, &v)
	fmt.Println(err)
	// Output:
	// 4 <u2 (3,)
	// ext110: truncated input: array claims 4294967295, only 0 bytes remain
	// true
	// ext110: nested too deep at byte 100: arrays and maps nest more than 100 deep
}

func ExampleMessageDecoder() {
	var stream bytes.Buffer
	for i := range 2 {
		a, _ := ndarray.FromSlice([]float64{float64(i), 0.5})
		b, _ := msgpack.Marshal(map[string]any{"frame": i, "data": a})
		stream.Write(b)
	}
	dec := ext110.NewMessageDecoder(&stream)
	dec.Options.MaxSize = 1 << 20 // refuse any message over 1 MiB
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			break // io.EOF at the end
		}
		v, _ := ndarray.Values[float64](m["data"].(*ndarray.Array))
		fmt.Println(m["frame"], v)
	}
	// Output:
	// 0 [0 0.5]
	// 1 [1 0.5]
}
