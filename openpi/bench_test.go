package openpi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// The benchmarks move the observation, three 224x224x3 uint8
// images and a 32-float state (about 450 KiB), over loopback and back.
// Run them under the machine's benchmark lock, with a short benchtime:
//
//	flock /tmp/ndpack-bench.lock go test -run XXX -bench . -benchtime 200x ./openpi/
//
// BenchmarkRoundTrip/plain-websocket is the floor: the same bytes echoed
// by a coder/websocket server with nothing decoded or encoded, each side
// reading into a buffer it reuses. The peers' benchmarks need
// NDPACK_OPENPI_SRC (see peers_test.go).

// plainEcho serves a websocket that echoes each message's bytes.
func plainEcho(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		conn.SetReadLimit(-1)
		var buf []byte
		for {
			typ, msg, err := readMessage(r.Context(), conn, buf)
			if err != nil {
				return
			}
			buf = msg
			if err := conn.Write(r.Context(), typ, msg); err != nil {
				return
			}
		}
	})}
	go hs.Serve(l)
	b.Cleanup(func() { hs.Close() })
	return l.Addr().String()
}

func BenchmarkRoundTrip(b *testing.B) {
	obs := robotObservation(b)
	msg, err := appendMessage(nil, obs, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("plain-websocket", func(b *testing.B) {
		ctx := context.Background()
		conn, _, err := websocket.Dial(ctx, "ws://"+plainEcho(b), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.CloseNow()
		conn.SetReadLimit(-1)
		var buf []byte
		b.SetBytes(int64(2 * len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			if err := conn.Write(ctx, websocket.MessageBinary, msg); err != nil {
				b.Fatal(err)
			}
			if _, buf, err = readMessage(ctx, conn, buf); err != nil || len(buf) != len(msg) {
				b.Fatal(err)
			}
		}
	})
	goServer := func(b *testing.B, infer func(*Client) error) {
		c := dialT(b, startServer(b, &Server{}), nil)
		b.SetBytes(int64(2 * len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			if err := infer(c); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("go-client-go-server-reusing", func(b *testing.B) {
		var buf ResultBuffer
		goServer(b, func(c *Client) error { _, err := c.InferReusing(context.Background(), obs, &buf); return err })
	})
	b.Run("go-client-go-server", func(b *testing.B) {
		goServer(b, func(c *Client) error { _, err := c.Infer(context.Background(), obs); return err })
	})
}

// pyBenchClient is openpi's client sending the benchmark's observation:
// after a warm-up it prints "ready", then for each number N it reads it
// makes N calls and prints "done". argv[2] is "echo" or "replay".
const pyBenchClient = `
import sys
import numpy as np
from openpi_client import websocket_client_policy as wcp
c = wcp.WebsocketClientPolicy("127.0.0.1", int(sys.argv[1]))
obs = {"image/" + n: np.full((224, 224, 3), i, dtype=np.uint8) for i, n in enumerate(["base_0_rgb", "left_wrist_0_rgb", "right_wrist_0_rgb"])}
obs["state"] = np.zeros(32, dtype=np.float32)
obs["prompt"] = "fold the towel"
obs[sys.argv[2]] = True
for _ in range(20):
    c.infer(obs)
print("ready", flush=True)
for line in sys.stdin:
    for _ in range(int(line)):
        c.infer(obs)
    print("done", flush=True)
`

// pyBench measures openpi's Python client against the server at addr.
func pyBench(b *testing.B, addr, mode string) {
	_, port, _ := net.SplitHostPort(addr)
	ready, w, r := startPython(b, pyBenchClient, port, mode)
	if ready != "ready" {
		b.Fatalf("the Python client said %q", ready)
	}
	b.ResetTimer()
	fmt.Fprintf(w, "%d\n", b.N)
	line, err := r.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "done" {
		b.Fatalf("the Python client: %q %v", line, err)
	}
}

// BenchmarkPeers compares, on the same observation, openpi's Python
// server with the Go server answering openpi's Python client (an echo,
// and a replayed (50, 32) float32 action chunk), and the Go client with
// the Python client against the Python server.
func BenchmarkPeers(b *testing.B) {
	pythonPath(b)
	chunk := make([]float32, 50*32)
	actions := mustArray(b, chunk, 50, 32)
	goServer := startServer(b, &Server{Policy: PolicyFunc(func(_ context.Context, obs map[string]any) (map[string]any, error) {
		if _, ok := obs["replay"]; ok {
			return map[string]any{"actions": actions}, nil
		}
		return obs, nil
	})})
	pyServer := startPyBenchServer(b)
	for _, mode := range []string{"echo", "replay"} {
		b.Run("python-client-python-server-"+mode, func(b *testing.B) { pyBench(b, pyServer, mode) })
		b.Run("python-client-go-server-"+mode, func(b *testing.B) { pyBench(b, goServer, mode) })
	}
	for _, server := range []struct{ name, addr string }{{"python-server", pyServer}, {"go-server", goServer}} {
		b.Run("go-client-"+server.name+"-echo", func(b *testing.B) {
			c := dialT(b, server.addr, nil)
			obs := robotObservation(b)
			obs["echo"] = true
			var buf ResultBuffer
			for range 20 {
				if _, err := c.InferReusing(context.Background(), obs, &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				if _, err := c.InferReusing(context.Background(), obs, &buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// pyBenchServer is openpi's server answering an echo, or a (50, 32)
// float32 chunk for an observation holding "replay".
const pyBenchServer = `
import asyncio
import numpy as np
from openpi_client import base_policy
from openpi.serving import websocket_policy_server as wps
import websockets.asyncio.server as _server

actions = np.zeros((50, 32), dtype=np.float32)

class Policy(base_policy.BasePolicy):
    def infer(self, obs):
        if "replay" in obs:
            return {"actions": actions}
        return dict(obs)

async def main():
    srv = wps.WebsocketPolicyServer(Policy(), host="127.0.0.1", port=0)
    async with _server.serve(srv._handler, "127.0.0.1", 0, compression=None, max_size=None,
                             process_request=wps._health_check) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

asyncio.run(main())
`

func startPyBenchServer(b *testing.B) string {
	port, _, _ := startPython(b, pyBenchServer)
	if _, err := strconv.Atoi(port); err != nil {
		b.Fatalf("the Python server printed %q", port)
	}
	return "127.0.0.1:" + port
}
