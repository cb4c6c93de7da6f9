package openpi_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/openpi"
)

// A Go policy served to robots, and a Go robot calling it: the server
// answers each observation with a (50, 8) chunk of actions, as a π0 policy
// does; the client sends an image, a state and a prompt.
func Example() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	policy := openpi.PolicyFunc(func(ctx context.Context, obs map[string]any) (map[string]any, error) {
		state, err := ndarray.Values[float32](obs["observation/state"].(*ndarray.Array))
		if err != nil {
			return nil, err
		}
		chunk := make([]float32, 50*8)
		for i := range chunk {
			chunk[i] = state[i%8] + float32(i/8)/100
		}
		actions, err := ndarray.View(chunk, 50, 8) // a new slice each call: no copy needed
		return map[string]any{"actions": actions}, err
	})
	srv := &openpi.Server{Policy: policy, Metadata: map[string]any{"action_horizon": 50}}
	go srv.Serve(ctx, l)

	c, err := openpi.Dial(ctx, "ws://"+l.Addr().String(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println("metadata:", c.Metadata())

	image, _ := ndarray.Zeros(ndarray.MustParseDType("|u1"), 224, 224, 3)
	state, _ := ndarray.View(make([]float32, 8), 8)
	action, err := c.Infer(ctx, map[string]any{
		"observation/image": image,
		"observation/state": state,
		"prompt":            "pick up the fork",
	})
	if err != nil {
		log.Fatal(err)
	}
	actions := action["actions"].(*ndarray.Array)
	last, _ := ndarray.At[float32](actions, 49, 0)
	_, timed := action["server_timing"]
	fmt.Println("actions:", actions.DType, actions.Shape, last, "server_timing:", timed)
	// Output:
	// metadata: map[action_horizon:50]
	// actions: <f4 [50 8] 0.49 server_timing: true
}

// A control loop at camera rate reads each action into the same memory.
func ExampleClient_InferReusing() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go (&openpi.Server{Policy: openpi.Echo}).Serve(ctx, l)

	c, err := openpi.Dial(ctx, l.Addr().String(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	var buf openpi.ResultBuffer
	for step := range 3 {
		state, _ := ndarray.View([]float64{float64(step), 0.5}, 2)
		action, err := c.InferReusing(ctx, map[string]any{"state": state}, &buf)
		if err != nil {
			log.Fatal(err)
		}
		// action's arrays alias buf until the next call.
		v, _ := ndarray.Values[float64](action["state"].(*ndarray.Array))
		fmt.Println(step, v)
	}
	// Output:
	// 0 [0 0.5]
	// 1 [1 0.5]
	// 2 [2 0.5]
}
