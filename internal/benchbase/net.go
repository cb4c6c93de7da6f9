package benchbase

import (
	"io"
	"net"
	"testing"
)

// EchoServer serves raw echoes on loopback and returns its address: each
// connection gets back whatever it sends, with io.Copy (on Linux, TCP to
// TCP, io.Copy splices inside the kernel), or with buffered, through a
// buffer of its own, as a server that looks at the bytes must.
func EchoServer(b testing.TB, buffered bool) string {
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

// RawEcho measures n bytes sent over loopback and echoed back with nothing
// decoded: the baseline of an RPC round trip of an n-byte array.
func RawEcho(b *testing.B, n int, buffered bool) {
	conn, err := net.Dial("tcp", EchoServer(b, buffered))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	data := Data(n)
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

// RawPingPong measures n bytes there and back over loopback: the baseline
// of a small RPC call.
func RawPingPong(b *testing.B, n int) {
	conn, err := net.Dial("tcp", EchoServer(b, false))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	msg, back := make([]byte, n), make([]byte, n)
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
