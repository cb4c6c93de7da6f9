package gr00tpolicy_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"github.com/ndpack/ndpack/gr00tpolicy"
	"github.com/ndpack/ndpack/ndarray"
)

// policy answers each observation with a (16, 7) chunk of arm actions
// around the arm's state, as a GR00T-N1 policy does.
type policy struct{}

func (policy) GetAction(_ context.Context, obs, _ map[string]any) (action, info map[string]any, err error) {
	state, err := ndarray.Values[float32](obs["state"].(map[string]any)["left_arm"].(*ndarray.Array))
	if err != nil {
		return nil, nil, err
	}
	chunk := make([]float32, 16*7)
	for i := range chunk {
		chunk[i] = state[i%7] + float32(i/7)/100
	}
	arm, err := ndarray.View(chunk, 16, 7) // a new slice each call: no copy needed
	return map[string]any{"action.left_arm": arm}, map[string]any{}, err
}

func (policy) Reset(context.Context, map[string]any) (map[string]any, error) {
	return map[string]any{}, nil
}

// A Go policy served as GR00T's PolicyServer serves one, and a Go robot
// calling it as GR00T's PolicyClient does.
func Example() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	srv := &gr00tpolicy.Server{Policy: policy{}, Modality: map[string]gr00tpolicy.ModalityConfig{
		"state": {DeltaIndices: []int{0}, ModalityKeys: []string{"state.left_arm"}},
	}}
	go srv.Serve(ctx, l)

	c, err := gr00tpolicy.Dial(ctx, l.Addr().String(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	modalities, err := c.ModalityConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	joints, _ := ndarray.View([]float32{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}, 7)
	action, _, err := c.GetAction(ctx, map[string]any{"state": map[string]any{"left_arm": joints}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	arm := action["action.left_arm"].(*ndarray.Array)
	fmt.Println(modalities["state"].ModalityKeys, arm.DType, arm.Shape)
	// Output: [state.left_arm] <f4 [16 7]
}
