package yaqrpc

import (
	"context"
	"testing"

	"github.com/ndpack/ndpack/internal/benchbase"
	"github.com/ndpack/ndpack/ndarray"
)

// Round trips on loopback: a Go client calls echo on a Go server, which
// sends the array back. ns/op is the round-trip latency.

func benchEcho(b *testing.B, a *ndarray.Array) {
	addr, _ := testServer(b, 0)
	c := dial(b, addr)
	ctx := context.Background()
	b.SetBytes(int64(2 * len(a.Data))) // there and back
	b.ReportAllocs()
	for b.Loop() {
		var back *ndarray.Array
		if err := c.Call(ctx, "echo", []any{a}, &back); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRoundTrip10(b *testing.B) {
	a, _ := ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	benchEcho(b, a)
}

func BenchmarkRoundTrip32MiB(b *testing.B) {
	a, _ := ndarray.New(ndarray.Float64, []int{4 << 20}, benchbase.Data(32<<20))
	benchEcho(b, a)
}

func BenchmarkCopy32MiB(b *testing.B) { benchbase.Copy(b, benchbase.Data(32<<20)) }

// BenchmarkRawEcho32MiB is the baseline of BenchmarkRoundTrip32MiB: the same
// bytes sent over loopback and echoed back, with nothing decoded.
func BenchmarkRawEcho32MiB(b *testing.B)         { benchbase.RawEcho(b, 32<<20, false) }
func BenchmarkRawEchoBuffered32MiB(b *testing.B) { benchbase.RawEcho(b, 32<<20, true) }

// BenchmarkRawPingPong100 is the baseline of BenchmarkRoundTrip10: 100 bytes
// there and back.
func BenchmarkRawPingPong100(b *testing.B) { benchbase.RawPingPong(b, 100) }
