package yaqrpc_test

import (
	"context"
	"fmt"
	"net"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaqrpc"
)

// A daemon with one method that returns an array, and a client calling it.
func Example() {
	srv := &yaqrpc.Server{}
	srv.Handle("get_spectrum", func(ctx context.Context, req *yaqrpc.Request) (any, error) {
		n, err := yaqrpc.ParamAs[int](req, 0, "points")
		if err != nil {
			return nil, err // an invalid-params error for the client
		}
		values := make([]float64, n)
		for i := range values {
			values[i] = float64(i) / 2
		}
		return ndarray.View(values) // a new slice each call: no copy needed
	})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(l)
	defer srv.Close()

	c, err := yaqrpc.Dial(context.Background(), l.Addr().String(), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var spectrum *ndarray.Array
	if err := c.Call(context.Background(), "get_spectrum", []any{4}, &spectrum); err != nil {
		panic(err)
	}
	v, _ := ndarray.Values[float64](spectrum)
	fmt.Println(spectrum.Shape, v)

	err = c.Call(context.Background(), "get_spectrum", []any{"four"}, nil)
	fmt.Println(err)
	// Output:
	// [4] [0 0.5 1 1.5]
	// yaqrpc: error -32602: parameter 0 ("points") is a string, want int
}

// A loop fetching one frame after another into the same memory: only the
// first call allocates for its answer.
func ExampleClient_CallReusing() {
	srv := &yaqrpc.Server{}
	frame := 0
	srv.Handle("get_frame", func(context.Context, *yaqrpc.Request) (any, error) {
		frame++
		pixels := make([]uint16, 640*480)
		pixels[0] = uint16(frame)
		return ndarray.View(pixels, 480, 640)
	})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(l)
	defer srv.Close()

	c, err := yaqrpc.Dial(context.Background(), l.Addr().String(), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var buf yaqrpc.ResultBuffer
	for range 3 {
		var img *ndarray.Array
		if err := c.CallReusing(context.Background(), "get_frame", nil, &img, &buf); err != nil {
			panic(err)
		}
		// img is valid until the next call with buf: use it (or clone it) now.
		first, _ := ndarray.Values[uint16](img)
		fmt.Println(img.Shape, first[0])
	}
	// Output:
	// [480 640] 1
	// [480 640] 2
	// [480 640] 3
}
