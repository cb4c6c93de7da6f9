package zmtp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// pyzmq is a peer of Debian's python3-zmq (libzmq 4.3): script runs with
// zmq imported and prints its first line (a port) when ready.
func pyzmq(t *testing.T, script string, args ...string) string {
	t.Helper()
	pypeer.RequireModule(t, "zmq", "python3-zmq")
	return pypeer.Start(t, "import zmq\n"+script, args...)
}

// Our REQ talks to pyzmq's REP: each request's frames come back as the
// REP saw them, after REQ's empty delimiter, and a large one whole.
func TestREQAgainstPyzmqREP(t *testing.T) {
	port := pyzmq(t, `
ctx = zmq.Context()
s = ctx.socket(zmq.REP)
port = s.bind_to_random_port("tcp://127.0.0.1")
print(port, flush=True)
while True:
    parts = s.recv_multipart()
    s.send_multipart([b"got %d" % len(parts)] + parts)
`)
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	z, err := Handshake(c, "REQ", 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if z.PeerType != "REP" {
		t.Errorf("peer type %q", z.PeerType)
	}
	big := bytes.Repeat([]byte("0123456789"), 300000) // a long frame
	for _, body := range [][][]byte{{[]byte("hello")}, {[]byte("a"), []byte("")}, {big}} {
		if err := z.WriteMessage(append([][]byte{{}}, body...)...); err != nil {
			t.Fatal(err)
		}
		reply, err := z.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if len(reply) != 2+len(body) || len(reply[0]) != 0 || string(reply[1]) != "got "+string(rune('0'+len(body))) {
			t.Fatalf("reply %q", reply[:min(len(reply), 2)])
		}
		for i, f := range body {
			if !bytes.Equal(reply[2+i], f) {
				t.Errorf("frame %d came back as %d other bytes", i, len(reply[2+i]))
			}
		}
	}
}

// pyzmq's REQ talks to our REP: it sends its delimiter and body, and takes
// our reply with the envelope echoed.
func TestPyzmqREQAgainstREP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		z, err := Handshake(c, "REP", 64<<20)
		if err != nil {
			t.Error(err)
			return
		}
		for {
			msg, err := z.ReadMessage()
			if err != nil {
				return
			}
			if len(msg) < 2 || len(msg[0]) != 0 {
				t.Errorf("request %q has no delimiter", msg)
				return
			}
			z.WriteMessage([]byte{}, bytes.ToUpper(msg[1]))
		}
	}()
	out := pypeer.Run(t, `
import sys, zmq
s = zmq.Context().socket(zmq.REQ)
s.setsockopt(zmq.RCVTIMEO, 10000)
s.connect("tcp://" + sys.argv[1])
for m in (b"ping", b"x" * 1000000):
    s.send(m)
    r = s.recv()
    print(len(r), r[:4].decode())
`, nil, l.Addr().String())
	if got := strings.TrimSpace(string(out)); got != "4 PING\n1000000 XXXX" {
		t.Errorf("pyzmq's REQ got %q", got)
	}
}

// A peer whose frame claims 2^40 bytes, or whose message of tiny frames
// would take more than the limit, is refused before anything is allocated
// for it; a peer that is no ZeroMQ peer fails the handshake.
func TestHostilePeers(t *testing.T) {
	serve := func(send []byte) *Conn {
		t.Helper()
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		go func() {
			var g [64]byte
			g[0], g[9], g[10], g[11] = 0xff, 0x7f, 3, 1
			copy(g[12:], "NULL")
			b.Write(g[:])
			ready := append([]byte{5}, "READY"...)
			ready = appendProperty(ready, "Socket-Type", "REP")
			b.Write(append([]byte{flagCommand, byte(len(ready))}, ready...))
			b.Write(send)
		}()
		go func() { // what our side writes is read and dropped
			buf := make([]byte, 4096)
			for {
				if _, err := b.Read(buf); err != nil {
					return
				}
			}
		}()
		z, err := Handshake(a, "REQ", 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	huge := binary.BigEndian.AppendUint64([]byte{flagLong}, 1<<40)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := serve(huge).ReadMessage()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("a frame of 2^40 bytes: %v", err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 1<<20 {
		t.Errorf("allocated %d bytes for a frame claim", a)
	}
	tiny := bytes.Repeat([]byte{flagMore, 0}, 1<<16)
	if _, err := serve(tiny).ReadMessage(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a message of 65,536 empty frames: %v", err)
	}
	a, b := net.Pipe()
	defer a.Close()
	go func() { b.Write([]byte("HTTP/1.1 200 OK\r\n\r\n")); b.Close() }()
	go func() { io := make([]byte, 128); b.Read(io) }()
	if _, err := Handshake(a, "REQ", 1<<20); !errors.Is(err, ErrProtocol) {
		t.Errorf("an HTTP peer: %v", err)
	}
}
