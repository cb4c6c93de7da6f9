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
	srv := yaqrpc.NewServer()
	srv.Handle("get_spectrum", func(ctx context.Context, req *yaqrpc.Request) (any, error) {
		n, err := yaqrpc.ParamAs[int](req, 0, "points")
		if err != nil {
			return nil, err // an invalid-params error for the client
		}
		values := make([]float64, n)
		for i := range values {
			values[i] = float64(i) / 2
		}
		return ndarray.FromSlice(values)
	})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(l)
	defer srv.Close()

	c, err := yaqrpc.Dial(context.Background(), l.Addr().String())
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
