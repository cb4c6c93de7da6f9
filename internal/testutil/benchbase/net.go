package benchbase

import (
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/loopback"
)

// EchoServer serves raw echoes on loopback and returns its address: each
// connection gets back whatever it sends, with io.Copy (on Linux, TCP to
// TCP, io.Copy splices inside the kernel), or with buffered, through a
// buffer of its own, as a server that looks at the bytes must.
func EchoServer(b testing.TB, buffered bool) string {
	return loopback.Serve(b, func(conn net.Conn) {
		if !buffered {
			io.Copy(conn, conn)
			return
		}
		buf := make([]byte, 1<<20)
		io.CopyBuffer(struct{ io.Writer }{conn}, struct{ io.Reader }{conn}, buf)
	})
}

// RawEcho measures n bytes sent over loopback and echoed back with nothing
// decoded: the baseline of an RPC round trip of an n-byte array.
func RawEcho(b *testing.B, n int, buffered bool) {
	echo := Echoer(b, n, buffered)
	b.SetBytes(int64(2 * n))
	b.ReportAllocs()
	for b.Loop() {
		echo()
	}
}

// Echoer connects to a raw echo server (see EchoServer) and returns a
// function that sends n bytes and reads them back, writing and reading at
// once as an echo client does. It fails b if the connection does.
func Echoer(b testing.TB, n int, buffered bool) func() {
	conn, err := net.Dial("tcp", EchoServer(b, buffered))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	data := Data(n)
	back := make([]byte, len(data))
	return func() {
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

// RawPingPong measures n bytes there and back over loopback: the baseline
// of a small RPC call.
func RawPingPong(b *testing.B, n int) {
	ping := PingPonger(b, n)
	b.ReportAllocs()
	for b.Loop() {
		ping()
	}
}

// PingPonger connects to a raw echo server and returns a function that
// writes n bytes and then reads them back.
func PingPonger(b testing.TB, n int) func() {
	conn, err := net.Dial("tcp", EchoServer(b, false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	msg, back := make([]byte, n), make([]byte, n)
	return func() {
		if _, err := conn.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(conn, back); err != nil {
			b.Fatal(err)
		}
	}
}

// Versus measures subject against its baseline in one loop: each iteration
// runs the baseline and then the subject, so that both meet the same
// moments of a shared, noisy machine, which separate benchmarks run
// seconds apart do not. It reports the median over iterations of the
// subject's time divided by the baseline's, as "x-baseline", and the
// subject's own time per call, as "subject-ns/op" (ns/op counts both).
func Versus(b *testing.B, subject, baseline func()) {
	subject() // connections, handshakes and first allocations out of the way
	baseline()
	var ratios []float64
	var total time.Duration
	for b.Loop() {
		t0 := time.Now()
		baseline()
		t1 := time.Now()
		subject()
		t2 := time.Now()
		ratios = append(ratios, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
		total += t2.Sub(t1)
	}
	slices.Sort(ratios)
	median := ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		median = (median + ratios[len(ratios)/2-1]) / 2
	}
	b.ReportMetric(median, "x-baseline")
	b.ReportMetric(float64(total.Nanoseconds())/float64(len(ratios)), "subject-ns/op")
}

// MessageEchoer is Echoer against a server that, as a daemon must, reads
// each whole n-byte message into a reused buffer before it writes it back:
// the RPC baseline that touches what it answers, without the overlap of
// sending while still receiving that a streaming echo has.
func MessageEchoer(b testing.TB, n int) func() {
	addr := loopback.Serve(b, func(conn net.Conn) {
		buf := make([]byte, n)
		for {
			if _, err := io.ReadFull(conn, buf); err != nil {
				return
			}
			if _, err := conn.Write(buf); err != nil {
				return
			}
		}
	})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	data := Data(n)
	back := make([]byte, len(data))
	return func() {
		if _, err := conn.Write(data); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(conn, back); err != nil {
			b.Fatal(err)
		}
	}
}
