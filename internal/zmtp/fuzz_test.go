package zmtp

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// bytesConn is a net.Conn that reads in and drops what is written.
type bytesConn struct {
	net.Conn
	r io.Reader
}

func (c bytesConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c bytesConn) Write(p []byte) (int, error) { return len(p), nil }

// FuzzReadMessage reads messages, after a peer's greeting and READY, from
// any bytes: no panic, and no message or frame over the limit.
func FuzzReadMessage(f *testing.F) {
	var g [64]byte
	g[0], g[9], g[10], g[11] = 0xff, 0x7f, 3, 1
	copy(g[12:], "NULL")
	ready := appendProperty(append([]byte{5}, "READY"...), "Socket-Type", "REP")
	hello := append(g[:], append([]byte{flagCommand, byte(len(ready))}, ready...)...)
	f.Add([]byte{flagMore, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'})
	f.Add(binary.BigEndian.AppendUint64([]byte{flagLong}, 1<<40))
	f.Add(append([]byte{flagCommand, 8, 4}, "PING\x00\x10ab"...))
	f.Add(append([]byte{flagCommand, 6, 5}, "ERROR"...))
	f.Add(bytes.Repeat([]byte{flagMore, 0}, 1000))
	const max = 1 << 16
	f.Fuzz(func(t *testing.T, in []byte) {
		z, err := Handshake(bytesConn{r: bytes.NewReader(append(append([]byte{}, hello...), in...))}, "REQ", max)
		if err != nil {
			t.Fatal(err)
		}
		z.br = bufio.NewReaderSize(z.br, 16) // small reads reach every path
		for range 100 {
			msg, err := z.ReadMessage()
			if err != nil {
				return
			}
			total := 0
			for _, fr := range msg {
				total += len(fr) + frameCost
			}
			if total > max {
				t.Fatalf("a message of %d bytes, over the limit of %d", total, max)
			}
		}
	})
}
