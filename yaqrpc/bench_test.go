package yaqrpc

import (
	"context"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
)

// Round trips on loopback: a Go client calls echo on a Go server, which
// sends the array back. ns/op is the round-trip latency.

// echoCaller returns a function that calls echo with a on a server of its
// own and checks the answer's size.
func echoCaller(b *testing.B, a *ndarray.Array) func() {
	addr, _ := testServer(b, 0)
	c := dial(b, addr)
	return func() {
		var back *ndarray.Array
		if err := c.Call(context.Background(), "echo", []any{a}, &back); err != nil {
			b.Fatal(err)
		}
		if len(back.Data) != len(a.Data) {
			b.Fatalf("echo returned %d bytes of %d", len(back.Data), len(a.Data))
		}
	}
}

func benchEcho(b *testing.B, a *ndarray.Array) {
	call := echoCaller(b, a)
	b.SetBytes(int64(2 * len(a.Data))) // there and back
	b.ReportAllocs()
	for b.Loop() {
		call()
	}
}

func array10() *ndarray.Array {
	a, _ := ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	return a
}

func array32MiB() *ndarray.Array {
	a, _ := ndarray.New(ndarray.DTypeOf[float64](), []int{4 << 20}, benchbase.Data(32<<20))
	return a
}

func BenchmarkRoundTrip10(b *testing.B)    { benchEcho(b, array10()) }
func BenchmarkRoundTrip32MiB(b *testing.B) { benchEcho(b, array32MiB()) }

// BenchmarkRoundTrip32MiBVsRaw runs a 32 MiB echo call and a raw echo of
// the same bytes alternately; its x-baseline is the first target
// (at most 1.5).
func BenchmarkRoundTrip32MiBVsRaw(b *testing.B) {
	benchbase.Versus(b, echoCaller(b, array32MiB()), benchbase.Echoer(b, 32<<20, false))
}

// BenchmarkRoundTrip10VsPingPong runs a 10-element echo call and a raw
// 100-byte ping-pong alternately (target: at most 1.5).
func BenchmarkRoundTrip10VsPingPong(b *testing.B) {
	benchbase.Versus(b, echoCaller(b, array10()), benchbase.PingPonger(b, 100))
}

func BenchmarkCopy32MiB(b *testing.B) { benchbase.Copy(b, benchbase.Data(32<<20)) }

// BenchmarkRawEcho32MiB is the baseline of BenchmarkRoundTrip32MiB: the same
// bytes sent over loopback and echoed back, with nothing decoded.
func BenchmarkRawEcho32MiB(b *testing.B)         { benchbase.RawEcho(b, 32<<20, false) }
func BenchmarkRawEchoBuffered32MiB(b *testing.B) { benchbase.RawEcho(b, 32<<20, true) }

// BenchmarkRawPingPong100 is the baseline of BenchmarkRoundTrip10: 100 bytes
// there and back.
func BenchmarkRawPingPong100(b *testing.B) { benchbase.RawPingPong(b, 100) }

// BenchmarkRoundTrip32MiBReusingVsUserEcho is the restated RPC row: the
// reusing path (CallReusing against a server with ReuseRequestBuffers)
// against a user-space echo of the same bytes (read through a reused
// buffer and written back, as a daemon must touch what it answers), in
// turn each iteration. The goal is 1.3x, with nothing payload-sized
// allocated per call (B/op also counts the baseline's nothing).
func BenchmarkRoundTrip32MiBReusingVsUserEcho(b *testing.B) {
	a := array32MiB()
	addr, _ := testServer(b, 0, func(s *Server) { s.ReuseRequestBuffers = true })
	c := dial(b, addr)
	var buf ResultBuffer
	call := func() {
		var back *ndarray.Array
		if err := c.CallReusing(context.Background(), "echo", []any{a}, &back, &buf); err != nil {
			b.Fatal(err)
		}
		if len(back.Data) != len(a.Data) {
			b.Fatalf("echo returned %d bytes of %d", len(back.Data), len(a.Data))
		}
	}
	b.SetBytes(int64(2 * len(a.Data)))
	b.ReportAllocs()
	benchbase.Versus(b, call, benchbase.MessageEchoer(b, 32<<20))
}
