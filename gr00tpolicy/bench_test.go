package gr00tpolicy

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/internal/zmtp"
	"github.com/ndpack/ndpack/ndarray"
)

// The benchmarks move the observation, three 224x224x3 uint8
// images and a 32-float state (about 450 KiB), over loopback and back.
// Run them under the machine's benchmark lock, with a short benchtime:
//
//	flock /tmp/ndpack-bench.lock go test -run XXX -bench . -benchtime 200x ./gr00tpolicy/
//
// BenchmarkLivePeers needs GR00T's source (NDPACK_GR00T_SRC, see
// peers_test.go): its PolicyServer and PolicyClient are what the Go
// server and client are measured against.

// benchObservation is peer.py's bench_observation().
func benchObservation(b testing.TB) map[string]any {
	video := map[string]any{}
	for i := range 3 {
		img := make([]uint8, 224*224*3)
		for j := range img {
			img[j] = uint8(i)
		}
		video["cam"+strconv.Itoa(i)] = must(ndarray.FromSlice(img, 224, 224, 3))
	}
	return map[string]any{"video": video, "state": map[string]any{"joints": must(ndarray.FromSlice(make([]float32, 32), 32))}}
}

// bareEcho serves a ZeroMQ REP that sends each request's frames back as
// they came, decoding nothing, and returns a REQ connected to it.
func bareEcho(b *testing.B) *zmtp.Conn {
	l := listen(b)
	b.Cleanup(func() { l.Close() })
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		z, err := zmtp.Handshake(nc, "REP", 64<<20)
		if err != nil {
			return
		}
		for {
			frames, err := z.ReadMessage()
			if err != nil || z.WriteMessage(frames...) != nil {
				return
			}
		}
	}()
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	z, err := zmtp.Handshake(nc, "REQ", 64<<20)
	if err != nil {
		b.Fatal(err)
	}
	return z
}

// BenchmarkRoundTripVsBareZeroMQ times the Go client's get_action against
// the Go server (Echo) with, in the same loop iteration, a bare ZeroMQ
// REQ/REP echo of the same request's bytes, nothing decoded or encoded
// (benchbase.Versus: x-baseline is the median ratio).
func BenchmarkRoundTripVsBareZeroMQ(b *testing.B) {
	obs := benchObservation(b)
	req, err := encode(nil, ordered{{"endpoint", "get_action"}, {"data", ordered{{"observation", obs}, {"options", nil}}}})
	if err != nil {
		b.Fatal(err)
	}
	z := bareEcho(b)
	bare := func() {
		if err := z.WriteMessage(nil, req); err != nil {
			b.Fatal(err)
		}
		if back, err := z.ReadMessage(); err != nil || len(back[1]) != len(req) {
			b.Fatal(err)
		}
	}
	addr, _ := startServer(b, &Server{Policy: Echo, ErrorLog: newLogger(io.Discard)})
	c := dialT(b, addr, nil)
	ctx := context.Background()
	b.SetBytes(int64(2 * len(req)))
	benchbase.Versus(b, func() {
		if _, _, err := c.GetAction(ctx, obs, nil); err != nil {
			b.Fatal(err)
		}
	}, bare)
}

// BenchmarkLivePeers compares, on the same observation, the Go server with
// GR00T's PolicyServer answering GR00T's PolicyClient (both echo), and the
// Go client with GR00T's PolicyClient calling GR00T's PolicyServer: each
// pair of calls is made in turn, and the median ratio of Go's time to
// Python's is reported as x-python (below 1: Go is faster).
func BenchmarkLivePeers(b *testing.B) {
	t := b
	if os.Getenv(srcVar) == "" {
		b.Skipf("%s names no GR00T source", srcVar)
	}
	goAddr, _ := startServer(t, &Server{Policy: Echo, ErrorLog: newLogger(io.Discard)})
	_, goPort, _ := net.SplitHostPort(goAddr)
	l := listen(t)
	pyPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	startPeer(t, "GR00T", "echo-server", pyPort).line(t)
	b.Run("python-client-go-vs-python-server", func(b *testing.B) {
		p, w := startPeerWithInput(b, "GR00T", "bench-client", pyPort, goPort)
		if ready := p.line(b); ready != "ready" {
			b.Fatalf("the Python client said %q", ready)
		}
		fmt.Fprintf(w, "pair %d\n", b.N)
		var ratio, tp, tg float64
		line := p.line(b)
		if _, err := fmt.Sscan(line, &ratio, &tp, &tg); err != nil {
			b.Fatalf("the Python client: %q %v", line, err)
		}
		b.ReportMetric(ratio, "x-python")
		b.ReportMetric(tg, "go-server-ns/op")
		b.ReportMetric(tp, "python-server-ns/op")
	})
	b.Run("go-vs-python-client-python-server", func(b *testing.B) {
		p, w := startPeerWithInput(b, "GR00T", "bench-client", pyPort, goPort)
		if ready := p.line(b); ready != "ready" {
			b.Fatalf("the Python client said %q", ready)
		}
		c := dialT(b, "127.0.0.1:"+pyPort, nil)
		obs := benchObservation(b)
		call := func() time.Duration {
			t0 := time.Now()
			if _, _, err := c.GetAction(context.Background(), obs, nil); err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		}
		for range 20 {
			call()
		}
		var ratios []float64
		var tg, tp float64
		for b.Loop() {
			fmt.Fprintln(w, "one")
			line := p.line(b)
			py, err := strconv.ParseFloat(strings.TrimSpace(line), 64)
			if err != nil {
				b.Fatalf("the Python client: %q %v", line, err)
			}
			g := float64(call())
			ratios = append(ratios, g/py)
			tg += g
			tp += py
		}
		b.ReportMetric(median(ratios), "x-python")
		b.ReportMetric(tg/float64(len(ratios)), "go-client-ns/op")
		b.ReportMetric(tp/float64(len(ratios)), "python-client-ns/op")
	})
}

// median is the middle of xs (the mean of the two middle ones for an even
// count).
func median(xs []float64) float64 {
	slices.Sort(xs)
	m := xs[len(xs)/2]
	if len(xs)%2 == 0 {
		m = (m + xs[len(xs)/2-1]) / 2
	}
	return m
}
