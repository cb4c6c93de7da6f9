package yaq

import (
	"context"
	"io"
	"log"
	"net"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
)

// speedDaemon answers get_measured with a 2048x2048 <u2 image and echo with
// a small array, on loopback.
func speedDaemon(b *testing.B, configure ...func(*Daemon)) (string, *ndarray.Array) {
	proto := `{"protocol": "speed", "types": [` + avro.ArraySchema + `], "messages": {
	  "get_measured": {"request": [], "response": {"type": "map", "values": ["int", "double", "ndarray"]}},
	  "echo": {"request": [{"name": "a", "type": "ndarray"}], "response": "ndarray"}}}`
	d, err := NewDaemon("speed", proto)
	if err != nil {
		b.Fatal(err)
	}
	d.ErrorLog = log.New(io.Discard, "", 0)
	for _, f := range configure {
		f(d)
	}
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
	c, err := Dial(context.Background(), addr, nil)
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

// echoCaller returns a function that calls echo with a on a daemon of its
// own and checks the answer's size.
func echoCaller(b *testing.B, a *ndarray.Array) func() {
	addr, _ := speedDaemon(b)
	c, err := Dial(context.Background(), addr, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
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

func array32MiB() *ndarray.Array {
	a, _ := ndarray.New(ndarray.DTypeOf[float64](), []int{4 << 20}, benchbase.Data(32<<20))
	return a
}

func array10() *ndarray.Array {
	a, _ := ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	return a
}

// BenchmarkEcho32MiB sends a 32 MiB <f8 array and gets it back; compare
// with BenchmarkRawEcho32MiB.
func BenchmarkEcho32MiB(b *testing.B) {
	call := echoCaller(b, array32MiB())
	b.SetBytes(2 * 32 << 20) // there and back
	b.ReportAllocs()
	for b.Loop() {
		call()
	}
}

// BenchmarkEcho32MiBVsRaw runs the 32 MiB echo call and a raw echo of the
// same bytes alternately; its x-baseline is the target (at most 1.5).
func BenchmarkEcho32MiBVsRaw(b *testing.B) {
	benchbase.Versus(b, echoCaller(b, array32MiB()), benchbase.Echoer(b, 32<<20, false))
}

// BenchmarkCall10VsPingPong runs a 10-element echo call and a raw 100-byte
// ping-pong alternately (target: at most 1.5).
func BenchmarkCall10VsPingPong(b *testing.B) {
	benchbase.Versus(b, echoCaller(b, array10()), benchbase.PingPonger(b, 100))
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
	call := echoCaller(b, array10())
	b.ReportAllocs()
	for b.Loop() {
		call()
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

// BenchmarkEcho32MiBReusingVsUserEcho is the restated RPC row for yaq: the
// answer read into the memory of the last (CallReusing), the request into
// the daemon's last (ReuseRequestBuffers), against a
// user-space echo of the same bytes, in turn each iteration (goal 1.3x,
// nothing payload-sized allocated per call on the client).
func BenchmarkEcho32MiBReusingVsUserEcho(b *testing.B) {
	a := array32MiB()
	addr, _ := speedDaemon(b, func(d *Daemon) { d.ReuseRequestBuffers = true })
	c, err := Dial(context.Background(), addr, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
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
	b.SetBytes(2 * 32 << 20)
	b.ReportAllocs()
	benchbase.Versus(b, call, benchbase.MessageEchoer(b, 32<<20))
}
