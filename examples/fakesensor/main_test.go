package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaqrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func startDaemon(t *testing.T) (string, chan error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, _ := newServer("cam-1", 1<<20)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), done
}

func TestSensorMethods(t *testing.T) {
	addr, done := startDaemon(t)
	c, err := yaqrpc.Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()

	var id map[string]string
	require.NoError(t, c.Call(ctx, "id", nil, &id))
	assert.Equal(t, map[string]string{"name": "cam-1", "kind": "fakesensor"}, id)

	var shapes map[string][]int
	require.NoError(t, c.Call(ctx, "get_channel_shapes", nil, &shapes))
	assert.Equal(t, map[string][]int{"image": {480, 640}, "spectrum": {1024}}, shapes)

	var mid int
	require.NoError(t, c.Call(ctx, "measure", nil, &mid))
	assert.Equal(t, 1, mid, "the id the measurement will have, as yaqd-core returns it")
	var busy bool
	require.NoError(t, c.Call(ctx, "busy", nil, &busy))
	assert.True(t, busy)
	for busy {
		time.Sleep(5 * time.Millisecond)
		require.NoError(t, c.Call(ctx, "busy", nil, &busy))
	}
	var m map[string]any
	require.NoError(t, c.Call(ctx, "get_measured", nil, &m))
	assert.EqualValues(t, 1, m["measurement_id"])
	img := m["image"].(*ndarray.Array)
	assert.Equal(t, "<u2 (480, 640)", img.String())
	px, _ := ndarray.At[uint16](img, 2, 5)
	assert.Equal(t, uint16(2*7+5*3+1*11), px)
	spec := m["spectrum"].(*ndarray.Array)
	assert.Equal(t, "<f8 (1024,)", spec.String())
	peak, _ := ndarray.At[float64](spec, 512)
	assert.Equal(t, 1.001, peak)

	var rpcErr *yaqrpc.Error
	require.True(t, errors.As(c.Call(ctx, "set_position", []any{1}, nil), &rpcErr))
	assert.Equal(t, yaqrpc.CodeMethodNotFound, rpcErr.Code)

	require.NoError(t, c.Call(ctx, "shutdown", nil, nil))
	select {
	case err := <-done:
		assert.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(2 * time.Second):
		t.Fatal("shutdown did not stop the daemon")
	}
}

// TestPythonClient drives the daemon from Python with the YEP-110
// reference ext_hook, as a yaq client would.
func TestPythonClient(t *testing.T) {
	addr, _ := startDaemon(t)
	_, port, _ := net.SplitHostPort(addr)
	out := pypeer.Run(t, `
import json, socket, time
import numpy as np
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
u = msgpack.Unpacker(ext_hook=ext_hook, raw=False)
def call(method, id):
    s.sendall(msgpack.packb({"ver": "1.0", "method": method, "id": id}))
    while True:
        for o in u:
            assert o["id"] == id, o
            return o.get("result", o.get("error"))
        u.feed(s.recv(1 << 20))
res = {"id": call("id", 1), "measure": call("measure", 2)}
while call("busy", 3):
    time.sleep(0.005)
m = call("get_measured", 4)
img, spec = m["image"], m["spectrum"]
res["image"] = [img.dtype.str, list(img.shape), int(img[2, 5])]
res["spectrum"] = [spec.dtype.str, list(spec.shape), float(spec[512])]
res["shapes"] = call("get_channel_shapes", 5)
res["missing"] = call("home", 6)["code"]
print(json.dumps(res))
`, nil, port)
	var res map[string]any
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	assert.Equal(t, map[string]any{
		"id":       map[string]any{"name": "cam-1", "kind": "fakesensor"},
		"measure":  1.0,
		"image":    []any{"<u2", []any{480.0, 640.0}, 40.0},
		"spectrum": []any{"<f8", []any{1024.0}, 1.001},
		"shapes":   map[string]any{"image": []any{480.0, 640.0}, "spectrum": []any{1024.0}},
		"missing":  float64(yaqrpc.CodeMethodNotFound),
	}, res)
}

// The README's loop (measure, poll busy, get_measured) returns the
// measurement it started, every time, however often measure is called
// meanwhile: a running measurement is not restarted or overlapped.
func TestMeasureWhileBusy(t *testing.T) {
	addr, _ := startDaemon(t)
	c, err := yaqrpc.Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	for trial := 1; trial <= 20; trial++ {
		var id, again int
		require.NoError(t, c.Call(ctx, "measure", nil, &id))
		assert.Equal(t, trial, id)
		require.NoError(t, c.Call(ctx, "measure", nil, &again))
		assert.Equal(t, id, again, "measure while busy starts nothing")
		for busy := true; busy; {
			require.NoError(t, c.Call(ctx, "busy", nil, &busy))
		}
		var m struct {
			ID int `msgpack:"measurement_id"`
		}
		require.NoError(t, c.Call(ctx, "get_measured", nil, &m))
		assert.Equal(t, id, m.ID, "trial %d", trial)
		var mid int
		require.NoError(t, c.Call(ctx, "get_measurement_id", nil, &mid))
		assert.Equal(t, id, mid)
	}

	var names []string
	require.NoError(t, c.Call(ctx, "get_channel_names", nil, &names))
	assert.Equal(t, []string{"image", "spectrum"}, names)
	var units map[string]string
	require.NoError(t, c.Call(ctx, "get_channel_units", nil, &units))
	assert.Equal(t, map[string]string{"image": "counts", "spectrum": "V"}, units)
	var list []string
	require.NoError(t, c.Call(ctx, "help", nil, &list))
	assert.Contains(t, list, "get_measurement_id")
	assert.Len(t, list, 11)
	var doc string
	require.NoError(t, c.Call(ctx, "help", []any{"busy"}, &doc))
	assert.Equal(t, "busy() -> bool: whether a measurement is running", doc)
	var rpcErr *yaqrpc.Error
	require.ErrorAs(t, c.Call(ctx, "help", []any{"nope"}, &doc), &rpcErr)
	assert.Equal(t, yaqrpc.CodeInvalidParams, rpcErr.Code)

	// Looping keeps measuring until stop_looping; then busy ends.
	var first int
	require.NoError(t, c.Call(ctx, "measure", []any{true}, &first))
	deadline := time.Now().Add(2 * time.Second)
	for mid := 0; mid < first+2 && time.Now().Before(deadline); {
		require.NoError(t, c.Call(ctx, "get_measurement_id", nil, &mid))
	}
	require.NoError(t, c.Call(ctx, "stop_looping", nil, nil))
	for busy := true; busy && time.Now().Before(deadline); {
		require.NoError(t, c.Call(ctx, "busy", nil, &busy))
	}
	var last int
	require.NoError(t, c.Call(ctx, "get_measurement_id", nil, &last))
	assert.GreaterOrEqual(t, last, first+2, "looping measured more than once")
}
