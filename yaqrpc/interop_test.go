package yaqrpc

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pyClient is a yaq-RPC client in Python, over a raw socket, decoding
// arrays with the YEP-110 reference ext_hook.
const pyClient = `
import json, socket
import numpy as np

def connect(port):
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.settimeout(10)
    return s, msgpack.Unpacker(ext_hook=ext_hook, raw=False, max_buffer_size=100 << 20)

def receive(s, u):
    while True:
        for o in u:
            return o
        data = s.recv(1 << 20)
        if not data:
            return "closed"
        u.feed(data)

def call(s, u, method, id, params=None):
    m = {"ver": "1.0", "method": method, "id": id}
    if params is not None:
        m["params"] = params
    s.sendall(msgpack.packb(m, default=pack_ndarray))
    return receive(s, u)

def code(r):
    return r["error"]["code"] if isinstance(r, dict) and "error" in r else r
`

func TestPythonClientToGoServer(t *testing.T) {
	addr, _ := testServer(t, 40<<20)
	_, port, _ := net.SplitHostPort(addr)
	out := pypeer.Run(t, pyClient+`
res = {}
s, u = connect(sys.argv[1])
big = np.random.default_rng(6).standard_normal(4 << 20)  # 32 MiB of <f8
r = call(s, u, "echo", 1, [big])
res["big"] = bool(r["id"] == 1 and r["result"].dtype.str == "<f8" and np.array_equal(r["result"], big))
be = np.arange(12, dtype=">i4").reshape(3, 4)
r = call(s, u, "echo", 2, {"value": be})
res["named_be"] = bool(r["result"].dtype.str == ">i4" and np.array_equal(r["result"], be))
res["add"] = call(s, u, "add", "x", [2, 3])
res["not_found"] = code(call(s, u, "nope", 3))
res["invalid_params"] = code(call(s, u, "add", 4, ["a", 1]))
res["internal"] = code(call(s, u, "fail", 5))
s.sendall(msgpack.packb({"ver": "1.0", "method": "note", "params": ["n"]}))  # a notification: no answer
res["after_note"] = call(s, u, "add", 6, [1, 1])["result"]
s.sendall(msgpack.packb([1, 2]))
res["not_a_map"] = code(receive(s, u))

g, gu = connect(sys.argv[1])
g.sendall(b"\xc1garbage")
res["garbage"] = code(receive(g, gu))
res["garbage_then"] = receive(g, gu)

o, ou = connect(sys.argv[1])
o.sendall(b"\x81\xdb\x10\x00\x00\x00")  # a 256 MiB string, over the 40 MiB limit
res["oversized"] = code(receive(o, ou))
res["oversized_then"] = receive(o, ou)

t_, tu = connect(sys.argv[1])
t_.sendall(msgpack.packb({"ver": "1.0", "method": "echo", "id": 9, "params": [big]}, default=pack_ndarray)[:1000])
t_.shutdown(socket.SHUT_WR)
res["truncated"] = receive(t_, tu)
res["still_serving"] = call(s, u, "add", 7, [20, 22])["result"]
print(json.dumps(res))
`, nil, port)
	var res map[string]any
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	assert.Equal(t, map[string]any{
		"big": true, "named_be": true,
		"add":       map[string]any{"ver": "1.0", "id": "x", "result": 5.0},
		"not_found": float64(CodeMethodNotFound), "invalid_params": float64(CodeInvalidParams),
		"internal": float64(CodeInternalError), "after_note": 2.0, "not_a_map": float64(CodeInvalidRequest),
		"garbage": float64(CodeParseError), "garbage_then": "closed",
		"oversized": float64(CodeInvalidRequest), "oversized_then": "closed",
		"truncated": "closed", "still_serving": 42.0,
	}, res)
}

// pyDaemon is a yaq-RPC daemon in Python: one thread per connection,
// arrays packed with the YEP-110 reference pack_ndarray.
const pyDaemon = `
import socket, threading
import numpy as np

def handle(conn):
    u = msgpack.Unpacker(ext_hook=ext_hook, raw=False, max_buffer_size=100 << 20)
    while True:
        data = conn.recv(1 << 20)
        if not data:
            return
        u.feed(data)
        for req in u:
            method, params = req.get("method"), req.get("params") or []
            if method == "echo":
                resp = {"result": params[0]}
            elif method == "get_measured":
                resp = {"result": {"measurement_id": 3,
                                   "image": np.arange(480 * 640, dtype="<u2").reshape(480, 640),
                                   "spectrum": np.linspace(0, 1, 1024)}}
            else:
                resp = {"error": {"code": -32601, "message": "method not found"}}
            if "id" in req:
                resp.update({"ver": "1.0", "id": req["id"]})
                conn.sendall(msgpack.packb(resp, default=pack_ndarray))

srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen()
print(srv.getsockname()[1], flush=True)
while True:
    c, _ = srv.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
`

func TestGoClientToPythonDaemon(t *testing.T) {
	port := pypeer.Start(t, pyDaemon)
	c := dial(t, "127.0.0.1:"+port)
	ctx := context.Background()

	big, err := ndarray.Zeros(ndarray.MustParseDType(">f8"), 2048, 2048) // 32 MiB, big-endian
	require.NoError(t, err)
	for i := 0; i < len(big.Data); i += 997 {
		big.Data[i] = byte(i >> 3)
	}
	var back *ndarray.Array
	require.NoError(t, c.Call(ctx, "echo", []any{big}, &back))
	assert.True(t, big.Equal(back), "32 MiB array changed on the way")

	var m map[string]any
	require.NoError(t, c.Call(ctx, "get_measured", nil, &m))
	img := m["image"].(*ndarray.Array)
	assert.Equal(t, "<u2 (480, 640)", img.String())
	v, _ := ndarray.At[uint16](img, 1, 2)
	assert.Equal(t, uint16(642), v)
	spec := m["spectrum"].(*ndarray.Array)
	last, _ := ndarray.At[float64](spec, 1023)
	assert.Equal(t, 1.0, last)

	var rpcErr *Error
	require.ErrorAs(t, c.Call(ctx, "nope", nil, nil), &rpcErr)
	assert.Equal(t, CodeMethodNotFound, rpcErr.Code)
}

// A Python client sending a parameter over the limit reads the daemon's
// answer; before the server drained the rest it saw ConnectionResetError.
func TestPythonClientOversizedRequestIsAnswered(t *testing.T) {
	addr, _ := testServer(t, 0)
	_, port, _ := net.SplitHostPort(addr)
	out := pypeer.Run(t, pyClient+`
s, u = connect(sys.argv[1])
big = np.zeros(70 << 20, dtype="|u1")
try:
    r = call(s, u, "echo", 1, [big])
    print(json.dumps({"answer": r, "then": receive(s, u)}))
except OSError as e:
    print(json.dumps({"exception": type(e).__name__}))
`, nil, port)
	var res map[string]any
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	assert.Equal(t, map[string]any{
		"answer": map[string]any{"ver": "1.0", "id": nil, "error": map[string]any{
			"code":    float64(CodeInvalidRequest),
			"message": "message exceeds the limit of 67108864 bytes: ext claims 73400364, only 67108826 bytes remain"}},
		"then": "closed",
	}, res)
}
