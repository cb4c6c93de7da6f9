package ndpack_test

import (
	"bytes"
	"fmt"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

func ExampleConvertOptions_NPYToExt110() {
	a, _ := ndarray.FromSlice([]uint8{1, 2, 3})
	var npy, blob bytes.Buffer
	_ = npybridge.Write(&npy, a)
	if err := (ndpack.ConvertOptions{}).NPYToExt110(&blob, &npy); err != nil {
		panic(err)
	}
	back, _ := ext110.Unmarshal(blob.Bytes())
	fmt.Println(back, back.Data)
	// Output: |u1 (3,) [1 2 3]
}

// A message from a Python service holds an OpenPI array map and an ext 110
// object; both come back as arrays.
func ExampleMessageOptions_UnmarshalMessage() {
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	openpi, _ := ndpack.MessageOptions{Encoding: dialect.OpenPI}.MarshalMessage(map[string]any{"state": a})
	var m map[string]any
	if err := (ndpack.MessageOptions{}).UnmarshalMessage(openpi, &m); err != nil {
		panic(err)
	}
	fmt.Println(m["state"])
	// Output: <i2 (3,)
}
