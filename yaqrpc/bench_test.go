package yaqrpc

import (
	"context"
	"io"
	"net"
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

// rawEchoServer echoes whatever arrives with io.Copy, the raw echo the
// issue measured (on Linux, TCP to TCP, io.Copy splices inside the
// kernel); with buffered, through a buffer of its own, as a server that
// looks at the bytes must.
func rawEchoServer(b testing.TB, buffered bool) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if !buffered {
					io.Copy(conn, conn)
					return
				}
				buf := make([]byte, 1<<20)
				io.CopyBuffer(struct{ io.Writer }{conn}, struct{ io.Reader }{conn}, buf)
			}()
		}
	}()
	return l.Addr().String()
}

// BenchmarkRawEcho32MiB is the baseline of BenchmarkRoundTrip32MiB: the same
// bytes sent over loopback and echoed back, with nothing decoded.
func BenchmarkRawEcho32MiB(b *testing.B)         { rawEcho32MiB(b, false) }
func BenchmarkRawEchoBuffered32MiB(b *testing.B) { rawEcho32MiB(b, true) }

func rawEcho32MiB(b *testing.B, buffered bool) {
	conn, err := net.Dial("tcp", rawEchoServer(b, buffered))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	data := benchbase.Data(32 << 20)
	back := make([]byte, len(data))
	b.SetBytes(int64(2 * len(data)))
	b.ReportAllocs()
	for b.Loop() {
		done := make(chan error, 1)
		go func() { _, err := conn.Write(data); done <- err }()
		if _, err := io.ReadFull(conn, back); err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawPingPong100 is the baseline of BenchmarkRoundTrip10: 100 bytes
// there and back.
func BenchmarkRawPingPong100(b *testing.B) {
	conn, err := net.Dial("tcp", rawEchoServer(b, false))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	msg, back := make([]byte, 100), make([]byte, 100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(conn, back); err != nil {
			b.Fatal(err)
		}
	}
}
