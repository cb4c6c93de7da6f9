package openpi

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
)

// The benchmarks move the observation, three 224x224x3 uint8
// images and a 32-float state (about 450 KiB), over loopback and back.
// Run them under the machine's benchmark lock, with a short benchtime:
//
//	flock /tmp/ndpack-bench.lock go test -run XXX -bench . -benchtime 200x ./openpi/
//
// The floor of BenchmarkRoundTripVsPlainWebsocket is the same bytes echoed
// by a coder/websocket server with nothing decoded or encoded, each side
// reading into a buffer it reuses. The peers' benchmarks need
// NDPACK_OPENPI_SRC (see peers_test.go).

// plainEcho serves a websocket that echoes each message's bytes.
func plainEcho(b *testing.B) string {
	return serveHTTP(b, wsHandler(func(r *http.Request, conn *websocket.Conn) {
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
	}))
}

// BenchmarkRoundTripVsPlainWebsocket times the Go client's call against
// the Go echo server with, in the same loop iteration, the plain echo of
// the same bytes (benchbase.Versus: x-baseline is the median ratio).
func BenchmarkRoundTripVsPlainWebsocket(b *testing.B) {
	obs := robotObservation(b)
	msg, err := appendMessage(nil, obs, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	conn, _, err := websocket.Dial(ctx, "ws://"+plainEcho(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(-1)
	var back []byte
	plain := func() {
		if err := conn.Write(ctx, websocket.MessageBinary, msg); err != nil {
			b.Fatal(err)
		}
		if _, back, err = readMessage(ctx, conn, back); err != nil || len(back) != len(msg) {
			b.Fatal(err)
		}
	}
	c := dialT(b, startServer(b, &Server{Policy: Echo}), nil)
	var buf ResultBuffer
	b.Run("reusing", func(b *testing.B) {
		benchbase.Versus(b, func() {
			if _, err := c.InferReusing(ctx, obs, &buf); err != nil {
				b.Fatal(err)
			}
		}, plain)
	})
	b.Run("infer", func(b *testing.B) {
		benchbase.Versus(b, func() {
			if _, err := c.Infer(ctx, obs); err != nil {
				b.Fatal(err)
			}
		}, plain)
	})
}

// pyBenchClient is openpi's client with two connections, to openpi's
// server (argv[1]) and to the Go server (argv[2]), sending the benchmark's
// observation with the key argv[3] ("echo" or "replay"). After a warm-up
// it prints "ready"; then "pair N" makes N pairs of calls, one to each
// server in turn, and prints the median ratio of the Go server's time to
// the Python server's and both mean times in ns; "one" makes one call to
// openpi's server and prints its time in ns.
const pyBenchClient = `
import sys, time
import numpy as np
from openpi_client import websocket_client_policy as wcp
py = wcp.WebsocketClientPolicy("127.0.0.1", int(sys.argv[1]))
go = wcp.WebsocketClientPolicy("127.0.0.1", int(sys.argv[2]))
obs = {"image/" + n: np.full((224, 224, 3), i, dtype=np.uint8) for i, n in enumerate(["base_0_rgb", "left_wrist_0_rgb", "right_wrist_0_rgb"])}
obs["state"] = np.zeros(32, dtype=np.float32)
obs["prompt"] = "fold the towel"
obs[sys.argv[3]] = True
for _ in range(20):
    py.infer(obs)
    go.infer(obs)
print("ready", flush=True)
def timed(c):
    t = time.perf_counter_ns()
    c.infer(obs)
    return time.perf_counter_ns() - t
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "one":
        print(timed(py), flush=True)
        continue
    ratios, tp, tg = [], 0, 0
    for _ in range(int(cmd[1])):
        p, g = timed(py), timed(go)
        ratios.append(g / p)
        tp += p
        tg += g
    ratios.sort()
    n = len(ratios)
    print(ratios[n // 2], tp // n, tg // n, flush=True)
`

// BenchmarkLivePeers compares, on the same observation, the Go server with
// openpi's Python server answering openpi's Python client (an echo, and a
// replayed (50, 32) float32 action chunk), and the Go client with openpi's
// Python client calling openpi's server: each pair of calls is made in
// turn, and the median ratio of Go's time to Python's is reported as
// x-python (below 1: Go is faster).
func BenchmarkLivePeers(b *testing.B) {
	pythonPath(b)
	actions := mustArray(b, make([]float32, 50*32), 50, 32)
	goServer := startServer(b, &Server{Policy: PolicyFunc(func(_ context.Context, obs map[string]any) (map[string]any, error) {
		if _, ok := obs["replay"]; ok {
			return map[string]any{"actions": actions}, nil
		}
		return obs, nil
	})})
	pyServer := startPyBenchServer(b)
	_, pyPort, _ := net.SplitHostPort(pyServer)
	_, goPort, _ := net.SplitHostPort(goServer)
	for _, mode := range []string{"echo", "replay"} {
		b.Run("python-client-go-vs-python-server-"+mode, func(b *testing.B) {
			ready, w, r := startPython(b, pyBenchClient, pyPort, goPort, mode)
			if ready != "ready" {
				b.Fatalf("the Python client said %q", ready)
			}
			b.ResetTimer()
			fmt.Fprintf(w, "pair %d\n", b.N)
			var ratio, tp, tg float64
			line, err := r.ReadString('\n')
			if _, serr := fmt.Sscan(line, &ratio, &tp, &tg); err != nil || serr != nil {
				b.Fatalf("the Python client: %q %v %v", line, err, serr)
			}
			b.ReportMetric(ratio, "x-python")
			b.ReportMetric(tg, "go-server-ns/op")
			b.ReportMetric(tp, "python-server-ns/op")
		})
	}
	b.Run("go-vs-python-client-python-server-echo", func(b *testing.B) {
		ready, w, r := startPython(b, pyBenchClient, pyPort, goPort, "echo")
		if ready != "ready" {
			b.Fatalf("the Python client said %q", ready)
		}
		c := dialT(b, pyServer, nil)
		obs := robotObservation(b)
		obs["echo"] = true
		var buf ResultBuffer
		call := func() time.Duration {
			t := time.Now()
			if _, err := c.InferReusing(context.Background(), obs, &buf); err != nil {
				b.Fatal(err)
			}
			return time.Since(t)
		}
		for range 20 {
			call()
		}
		var ratios []float64
		var tg, tp float64
		for b.Loop() {
			fmt.Fprintln(w, "one")
			line, err := r.ReadString('\n')
			py, perr := strconv.ParseFloat(strings.TrimSpace(line), 64)
			if err != nil || perr != nil {
				b.Fatalf("the Python client: %q %v", line, err)
			}
			g := float64(call())
			ratios = append(ratios, g/py)
			tg += g
			tp += py
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "x-python")
		b.ReportMetric(tg/float64(len(ratios)), "go-client-ns/op")
		b.ReportMetric(tp/float64(len(ratios)), "python-client-ns/op")
	})
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

// readMessage reads one whole message into buf's memory, as the client
// and server read theirs.
func readMessage(ctx context.Context, conn *websocket.Conn, buf []byte) (websocket.MessageType, []byte, error) {
	typ, r, err := conn.Reader(ctx)
	if err != nil {
		return 0, buf[:0], err
	}
	buf, err = readBody(ctx, r, buf, math.MaxInt64-1, nil, "")
	return typ, buf, err
}
