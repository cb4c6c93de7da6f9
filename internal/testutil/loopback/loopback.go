// Package loopback serves fake peers to tests on 127.0.0.1, and only
// there: the listener the tests of several packages would each write.
package loopback

import (
	"net"
	"testing"
)

// Serve listens on 127.0.0.1 and runs handle on its own goroutine for each
// connection, closing the connection when handle returns; the listener
// closes when the test ends. It returns the address to dial.
func Serve(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				handle(conn)
			}()
		}
	}()
	return l.Addr().String()
}
