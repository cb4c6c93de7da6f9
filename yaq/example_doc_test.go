package yaq_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/ndpack/ndpack/yaq"
)

// sensorProtocol is a daemon's protocol as yaq-traits composes it: the
// is-daemon trait's messages, which the Daemon answers from its fields,
// and the daemon's own.
const sensorProtocol = `{"protocol": "tiny-sensor", "traits": ["is-daemon"],
  "messages": {
    "id": {"request": [], "response": {"type": "map", "values": ["null", "string"]}},
    "busy": {"request": [], "response": "boolean"},
    "get_config": {"request": [], "response": "string"},
    "set_gain": {"request": [{"name": "gain", "type": "double"}], "response": "null"},
    "get_gain": {"request": [], "response": "double"}}}`

// A daemon: the is-daemon messages are answered from its fields, the
// others by handlers; a handler's error reaches the client as a
// *RemoteError carrying its text, as yaqd-core sends a Python exception.
// Shutdown lets calls in hand finish, as the shutdown message does.
func ExampleDaemon() {
	d, err := yaq.NewDaemon("sensor1", sensorProtocol)
	if err != nil {
		panic(err)
	}
	model := "TS-1"
	d.Model = &model
	d.Config = map[string]any{"port": 39001, "gain": 1.5}
	gain := 1.5
	d.Handle("set_gain", func(ctx context.Context, params []any) (any, error) {
		g := params[0].(float64)
		if g <= 0 {
			return nil, fmt.Errorf("gain must be positive, got %v", g)
		}
		gain = g
		return nil, nil
	})
	d.Handle("get_gain", func(context.Context, []any) (any, error) { return gain, nil })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go d.Serve(l)

	ctx := context.Background()
	c, err := yaq.Dial(ctx, l.Addr().String(), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var id map[string]any
	var busy bool
	var config string
	_ = c.Call(ctx, "id", nil, &id)
	_ = c.Call(ctx, "busy", nil, &busy)
	_ = c.Call(ctx, "get_config", nil, &config)
	fmt.Println(id["name"], id["kind"], id["model"], busy)
	fmt.Print(config)

	err = c.Call(ctx, "set_gain", []any{-1.0}, nil)
	var remote *yaq.RemoteError
	if errors.As(err, &remote) {
		fmt.Println(remote.Method, "failed:", remote.Message)
	}

	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	fmt.Println(d.Shutdown(sctx))
	// Output:
	// sensor1 tiny-sensor TS-1 false
	// gain = 1.5
	// port = 39001
	// set_gain failed: gain must be positive, got -1
	// <nil>
}

// A client as yaqc is one: Dial shakes hands and learns the daemon's
// protocol, so parameters are checked against it before anything is sent,
// and answers are decoded into Go values.
func ExampleDial() {
	d, _ := yaq.NewDaemon("sensor1", sensorProtocol)
	d.Handle("get_gain", func(context.Context, []any) (any, error) { return 2.5, nil })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go d.Serve(l)
	defer d.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := yaq.Dial(ctx, l.Addr().String(), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	p := c.Protocol()
	names := make([]string, 0, len(p.Messages))
	for name := range p.Messages {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Println(p.Name, p.Traits, names)

	var gain float64
	if err := c.Call(ctx, "get_gain", nil, &gain); err != nil {
		panic(err)
	}
	fmt.Println(gain)

	// A parameter of the wrong type never reaches the daemon.
	fmt.Println(c.Call(ctx, "set_gain", []any{"high"}, nil))
	// Output:
	// tiny-sensor [is-daemon] [busy get_config get_gain id set_gain]
	// 2.5
	// yaq: value does not fit its schema: set_gain: parameter "gain": a string is not a double
}
