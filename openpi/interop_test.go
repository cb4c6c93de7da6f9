package openpi

import (
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
)

// pyClient is openpi-client's WebsocketClientPolicy against a server on
// 127.0.0.1:argv[1], checking what comes back with numpy; argv[2] picks
// the check. It prints "ok".
const pyClient = `
import sys
import numpy as np
from openpi_client import websocket_client_policy as wcp

def same(want, got, path=""):
    if isinstance(want, np.float64):
        want = float(want)  # a Python float subclass: msgpack packs it as a float
    if isinstance(want, (np.ndarray, np.generic)) and not isinstance(want, float):
        want = np.asarray(want)
        assert isinstance(got, np.ndarray), (path, type(got))
        assert got.dtype.str == want.dtype.str and got.shape == want.shape, (path, got.dtype, got.shape, want.dtype, want.shape)
        assert got.tobytes() == want.tobytes(), path
    elif isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), (path, sorted(got), sorted(want))
        for k in want:
            same(want[k], got[k], path + "/" + k)
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, list) and len(got) == len(want), (path, got)
        for i, (w, g) in enumerate(zip(want, got)):
            same(w, g, path + "/" + str(i))
    else:
        assert type(got) == type(want) and got == want, (path, got, want)

port, mode = int(sys.argv[1]), sys.argv[2]
c = wcp.WebsocketClientPolicy("127.0.0.1", port)
rng = np.random.default_rng(1)
obs = {
    "observation/image": rng.integers(0, 256, (224, 224, 3), dtype=np.uint8),
    "wrist": {"image": rng.integers(0, 256, (224, 224, 3), dtype=np.uint8)},
    "state": rng.standard_normal(32).astype(np.float32),
    "f8": rng.standard_normal((2, 3)),
    "i8": np.array([-2**63, 2**63 - 1, 0], dtype=np.int64),
    "b": np.array([True, False, True]),
    "zero_d": np.array(2.5, dtype=np.float32),
    "np_float": np.float64(3.25),
    "np_int": np.int32(-7),
    "prompt": "pick up the fork",
    "nested": {"deeper": {"n": 5, "s": "x", "none": None, "l": [1, 2.5, "a"], "t": True}},
    "empty": np.zeros((0, 3), dtype=np.float32),
    "be": np.arange(4, dtype=">i4"),
    "big": 2**64 - 1,
}
if mode == "echo":
    same({"name": "go echo", "horizon": 50, "dims": [1, 2.5, "x"]}, c.get_server_metadata())
    for i in range(3):
        act = c.infer(obs)
        t = act.pop("server_timing")
        assert isinstance(t["infer_ms"], float) and ("prev_total_ms" in t) == (i > 0), t
        same(obs, act)
elif mode == "idle":
    import time
    for i in range(3):
        act = c.infer({"state": obs["state"]})
        same(obs["state"], act["state"])
        time.sleep(1)
elif mode == "policy":
    same({}, c.get_server_metadata())
    act = c.infer(obs)
    act.pop("server_timing")
    want = {
        "actions": np.stack([obs["state"][:8] * np.float32(i + 1) for i in range(50)]),
        "image_sum": np.int64(obs["observation/image"].sum(dtype=np.int64)),
        "prompt_words": ["pick", "up", "the", "fork"],
    }
    same(want, act)
    try:
        c.infer({"prompt": "fail"})
        raise AssertionError("no error")
    except RuntimeError as e:
        assert str(e) == "Error in inference server:\nValueError: no fork\n", repr(str(e))
print("ok")
`

func runPyClient(t *testing.T, addr, mode string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	out, err := python(t, pyClient, port, mode).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("openpi's client, %s: %v\n%s", mode, err, out)
	}
}

// TestLivePythonClientEcho: openpi's WebsocketClientPolicy against the Go
// echo server: every kind of value comes back as it was sent.
func TestLivePythonClientEcho(t *testing.T) {
	pythonPath(t)
	addr := startServer(t, &Server{Policy: Echo, Metadata: map[string]any{"name": "go echo", "horizon": 50, "dims": []any{1, 2.5, "x"}}})
	runPyClient(t, addr, "echo")
}

// TestLivePythonClientPings: openpi's client answers the Go server's
// pings (every 0.2 s here) while it waits a second between calls, and
// keeps its connection.
func TestLivePythonClientPings(t *testing.T) {
	pythonPath(t)
	runPyClient(t, startServer(t, &Server{Policy: Echo, PingInterval: 200 * time.Millisecond}), "idle")
}

// TestLivePythonClientPolicy: openpi's client against a Go policy that
// computes its action, and the policy's error as openpi's client reports
// it.
func TestLivePythonClientPolicy(t *testing.T) {
	pythonPath(t)
	addr := startServer(t, &Server{Policy: PolicyFunc(func(_ context.Context, obs map[string]any) (map[string]any, error) {
		if obs["prompt"] == "fail" {
			return nil, errors.New("ValueError: no fork")
		}
		state, err := ndarray.Values[float32](obs["state"].(*ndarray.Array))
		if err != nil {
			return nil, err
		}
		actions := make([]float32, 50*8)
		for i := range actions {
			actions[i] = state[i%8] * float32(i/8+1)
		}
		var sum int64
		for _, b := range obs["observation/image"].(*ndarray.Array).Data {
			sum += int64(b)
		}
		var words []any
		for _, w := range strings.Fields(obs["prompt"].(string)) {
			words = append(words, w)
		}
		a, err := ndarray.FromSlice(actions, 50, 8)
		return map[string]any{"actions": a, "image_sum": ndarray.Scalar(sum), "prompt_words": words}, err
	})})
	runPyClient(t, addr, "policy")
}

// pyServer is openpi's WebsocketPolicyServer (its handler and health
// check, on a port the system picks, which it prints) with a numpy policy;
// argv[1], if given, is how often it pings (websockets' default, 20 s).
const pyServer = `
import asyncio
import sys
import numpy as np
from openpi_client import base_policy
from openpi.serving import websocket_policy_server as wps
import websockets.asyncio.server as _server

auth = []

class Policy(base_policy.BasePolicy):
    def infer(self, obs):
        if obs.get("prompt") == "fail":
            raise ValueError("no fork")
        if "echo" in obs:
            return dict(obs)
        state = obs["state"]
        return {
            "actions": np.stack([state * np.float32(i + 1) for i in range(50)]),
            "image_sum": np.int64(obs["image"].sum(dtype=np.int64)),
            "prompt": obs["prompt"],
            "auth": auth[-1],
            "nested": {"k": np.arange(3, dtype=np.int64), "zero_d": np.array(True)},
        }

def process_request(connection, request):
    auth.append(request.headers.get("Authorization"))
    return wps._health_check(connection, request)

async def main():
    srv = wps.WebsocketPolicyServer(Policy(), host="127.0.0.1", port=0, metadata={"name": "numpy policy", "horizon": 50})
    ping = float(sys.argv[1]) if len(sys.argv) > 1 else 20
    async with _server.serve(srv._handler, "127.0.0.1", 0, compression=None, max_size=None,
                             process_request=process_request, ping_interval=ping, ping_timeout=ping) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

asyncio.run(main())
`

// startPyServer starts openpi's server and returns its address.
func startPyServer(t testing.TB, args ...string) string {
	port, _, _ := startPython(t, pyServer, args...)
	return "127.0.0.1:" + port
}

// TestLivePythonServerPings: openpi's server (websockets) closes a
// connection whose pings go unanswered for its ping timeout, 20 s by
// default: the Go client answers them while it waits between calls, so a
// robot that pauses keeps its connection. Here the server pings every
// 0.2 s, and the client waits 2 s.
func TestLivePythonServerPings(t *testing.T) {
	pythonPath(t)
	c := dialT(t, startPyServer(t, "0.2"), nil)
	for range 2 {
		if _, err := c.Infer(ctx10(t), map[string]any{"echo": true}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
	}
}

// TestLivePythonServer: the Go client against openpi's server with a
// numpy policy: metadata, values computed by numpy, the API key header as
// the server saw it, an echo of every kind of value, the health check, and
// the policy's traceback.
func TestLivePythonServer(t *testing.T) {
	pythonPath(t)
	addr := startPyServer(t)
	c := dialT(t, addr, &DialOptions{APIKey: "s3cret"})
	if got := c.Metadata(); len(got) != 2 || got["name"] != "numpy policy" || got["horizon"] != int64(50) {
		t.Errorf("metadata %#v", got)
	}
	state := mustArray(t, []float32{0.1, -0.2, 0.3, 1e-8, 5, 6, 7, 8}, 8)
	img := make([]uint8, 224*224*3)
	var sum int64
	for i := range img {
		img[i] = uint8(i * 31)
		sum += int64(img[i])
	}
	action, err := c.Infer(ctx10(t), map[string]any{"state": state, "image": mustArray(t, img, 224, 224, 3), "prompt": "pick up the fork"})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ndarray.Values[float32](state)
	want := make([]float32, 50*8)
	for i := range want {
		want[i] = s[i%8] * float32(i/8+1)
	}
	if !mustArray(t, want, 50, 8).Equal(action["actions"].(*ndarray.Array)) {
		t.Errorf("actions %v", action["actions"])
	}
	if got, ok := action["image_sum"].(*ndarray.Array); !ok || !got.Equal(ndarray.Scalar(sum)) {
		t.Errorf("image_sum %v, want %d", action["image_sum"], sum)
	}
	if action["prompt"] != "pick up the fork" || action["auth"] != "Api-Key s3cret" {
		t.Errorf("prompt %v, auth %v", action["prompt"], action["auth"])
	}
	nested := action["nested"].(map[string]any)
	if !nested["k"].(*ndarray.Array).Equal(mustArray(t, []int64{0, 1, 2}, 3)) || !nested["zero_d"].(*ndarray.Array).Equal(ndarray.Scalar(true)) {
		t.Errorf("nested %v", nested)
	}
	if timing, ok := action["server_timing"].(map[string]any); !ok || timing["infer_ms"] == nil {
		t.Errorf("server_timing %v", action["server_timing"])
	}

	obs := observation(t)
	obs["echo"] = true
	for range 2 {
		back, err := c.Infer(ctx10(t), obs)
		if err != nil {
			t.Fatal(err)
		}
		delete(back, "server_timing")
		want := maps.Clone(obs)
		want["f4"] = 0.5 // a Python float: msgpack-python reads a float 32 as one
		sameValues(t, "", want, back)
	}

	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "OK\n" {
		t.Errorf("healthz: %d %q", resp.StatusCode, body)
	}

	_, err = c.Infer(ctx10(t), map[string]any{"prompt": "fail"})
	var se *ServerError
	if !errors.As(err, &se) || se.LastLine != "ValueError: no fork" ||
		!strings.HasPrefix(se.Traceback, "Traceback (most recent call last):\n") ||
		!strings.HasPrefix(err.Error(), "openpi: server error: ValueError: no fork\nTraceback") {
		t.Errorf("got %v, want the policy's traceback", err)
	}
}
