package yaq_test

import (
	"context"
	"fmt"
	"net"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq"
	"github.com/ndpack/ndpack/yaq/avro"
)

// A daemon serving one message that answers an image, and a client calling
// it, as yaqc would. Real daemons' protocols also declare their traits and
// the traits' messages (id, busy, get_config, ...), as yaq-traits composes
// them; the Daemon answers the is-daemon ones itself.
func Example() {
	protocol := `{"protocol": "tiny-camera", "types": [` + avro.ArraySchema + `],
	  "messages": {"get_image": {"request": [{"name": "gain", "type": "double"}], "response": "ndarray"}}}`
	d, err := yaq.NewDaemon("cam", protocol)
	if err != nil {
		panic(err)
	}
	d.Handle("get_image", func(ctx context.Context, params []any) (any, error) {
		gain := params[0].(float64)
		return ndarray.FromSlice([]uint16{1, 2, 3, uint16(gain * 100)}, 2, 2)
	})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go d.Serve(l)
	defer d.Close()

	ctx := context.Background()
	c, err := yaq.Dial(ctx, l.Addr().String(), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(c.Protocol().Name)

	var image *ndarray.Array
	if err := c.Call(ctx, "get_image", []any{2.5}, &image); err != nil {
		panic(err)
	}
	pixels, _ := ndarray.Values[uint16](image)
	fmt.Println(image.DType, image.Shape, pixels)
	// Output:
	// tiny-camera
	// <u2 [2 2] [1 2 3 250]
}

// A loop fetching one image after another into the same memory: only the
// first call allocates for its answer.
func ExampleClient_CallReusing() {
	protocol := `{"protocol": "frame-camera", "types": [` + avro.ArraySchema + `],
	  "messages": {"get_image": {"request": [], "response": "ndarray"}}}`
	d, err := yaq.NewDaemon("cam", protocol)
	if err != nil {
		panic(err)
	}
	frame := 0
	d.Handle("get_image", func(context.Context, []any) (any, error) {
		frame++
		pixels := make([]uint16, 480*640)
		pixels[0] = uint16(frame)
		return ndarray.FromSlice(pixels, 480, 640)
	})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go d.Serve(l)
	defer d.Close()

	ctx := context.Background()
	c, err := yaq.Dial(ctx, l.Addr().String(), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var buf yaq.ResultBuffer
	for range 3 {
		var image *ndarray.Array
		if err := c.CallReusing(ctx, "get_image", nil, &image, &buf); err != nil {
			panic(err)
		}
		// image is valid until the next call with buf: use it (or clone it) now.
		pixels, _ := ndarray.Values[uint16](image)
		fmt.Println(image.Shape, pixels[0])
	}
	// Output:
	// [480 640] 1
	// [480 640] 2
	// [480 640] 3
}
