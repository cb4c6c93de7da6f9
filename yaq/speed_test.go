package yaq

import (
	"context"
	"io"
	"log"
	"net"
	"testing"

	"github.com/ndpack/ndpack/internal/benchbase"
	"github.com/ndpack/ndpack/ndarray"
)

// speedDaemon answers get_measured with a 2048x2048 <u2 image and echo with
// a small array, on loopback.
func speedDaemon(b *testing.B) (string, *ndarray.Array) {
	proto := `{"protocol": "speed", "types": [` + ArraySchema + `], "messages": {
	  "get_measured": {"request": [], "response": {"type": "map", "values": ["int", "double", "ndarray"]}},
	  "echo": {"request": [{"name": "a", "type": "ndarray"}], "response": "ndarray"}}}`
	d, err := NewDaemon("speed", proto)
	if err != nil {
		b.Fatal(err)
	}
	d.ErrorLog = log.New(io.Discard, "", 0)
	img, _ := ndarray.New(ndarray.MustParseDType("<u2"), []int{2048, 2048}, benchbase.Data(8<<20))
	d.Handle("get_measured", func(context.Context, []any) (any, error) {
		return map[string]any{"image": img, "measurement_id": 1}, nil
	})
	d.Handle("echo", func(_ context.Context, p []any) (any, error) { return p[0], nil })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go d.Serve(l)
	b.Cleanup(func() { d.Close() })
	return l.Addr().String(), img
}

// BenchmarkGetMeasured2048 fetches a 2048x2048 <u2 image (8 MiB); compare
// with BenchmarkRawSend8MiB, the same bytes over loopback with nothing
// decoded.
func BenchmarkGetMeasured2048(b *testing.B) {
	addr, img := speedDaemon(b)
	c, err := Dial(context.Background(), addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.SetBytes(int64(len(img.Data)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := c.Call(context.Background(), "get_measured", nil, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEcho32MiB sends a 32 MiB <f8 array and gets it back; compare
// with BenchmarkRawEcho32MiB.
func BenchmarkEcho32MiB(b *testing.B) {
	addr, _ := speedDaemon(b)
	c, err := Dial(context.Background(), addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	a, _ := ndarray.New(ndarray.Float64, []int{4 << 20}, benchbase.Data(32<<20))
	b.SetBytes(int64(2 * len(a.Data))) // there and back
	b.ReportAllocs()
	for b.Loop() {
		var back *ndarray.Array
		if err := c.Call(context.Background(), "echo", []any{a}, &back); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawEcho32MiB is the baseline of BenchmarkEcho32MiB: the same
// bytes over loopback and back, nothing decoded.
func BenchmarkRawEcho32MiB(b *testing.B) { benchbase.RawEcho(b, 32<<20, false) }

// BenchmarkRawPingPong100 is the baseline of BenchmarkCall10: 100 bytes
// there and back.
func BenchmarkRawPingPong100(b *testing.B) { benchbase.RawPingPong(b, 100) }

// BenchmarkCall10 is a 10-element echo; compare with
// BenchmarkRawPingPong100.
func BenchmarkCall10(b *testing.B) {
	addr, _ := speedDaemon(b)
	c, err := Dial(context.Background(), addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	a, _ := ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	b.ReportAllocs()
	for b.Loop() {
		var back any
		if err := c.Call(context.Background(), "echo", []any{a}, &back); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawSend8MiB(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	data := benchbase.Data(8 << 20)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		req := make([]byte, 1)
		for {
			if _, err := io.ReadFull(conn, req); err != nil {
				return
			}
			if _, err := conn.Write(data); err != nil {
				return
			}
		}
	}()
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	back := make([]byte, len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		conn.Write([]byte{1})
		if _, err := io.ReadFull(conn, back); err != nil {
			b.Fatal(err)
		}
	}
}
