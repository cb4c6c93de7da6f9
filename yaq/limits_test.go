package yaq

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floodProtocol has a message with a large answer, for peers to ask for and
// never read, and a small one for a normal client.
const floodProtocol = `{"protocol": "flood", "messages": {
	"image": {"request": [], "response": "bytes"},
	"ping": {"request": [], "response": "int"}}}`

// floodDaemon serves floodProtocol on 127.0.0.1 with the limits set by
// tune; image answers 1 MiB.
func floodDaemon(t *testing.T, tune func(d *Daemon)) (*Daemon, string, *hostile.Log) {
	d, err := NewDaemon("flood", floodProtocol)
	require.NoError(t, err)
	logs := &hostile.Log{}
	d.ErrorLog = log.New(logs, "", 0)
	image := bytes.Repeat([]byte{7}, 1<<20)
	require.NoError(t, d.Handle("image", func(context.Context, []any) (any, error) { return image, nil }))
	require.NoError(t, d.Handle("ping", func(context.Context, []any) (any, error) { return 1, nil }))
	tune(d)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan struct{})
	go func() { d.Serve(l); close(served) }()
	t.Cleanup(func() { d.Close(); <-served })
	return d, l.Addr().String(), logs
}

// limitFrame frames p as yaq peers do.
func limitFrame(p ...byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(p))), p...)
}

// avroString is s as an Avro string.
func avroString(s string) []byte { return append(binary.AppendVarint(nil, int64(len(s))), s...) }

// rawHandshake is a BOTH handshake with d, and its request's meta and
// empty name, as one write.
func rawHandshake(t *testing.T, d *Daemon) []byte {
	spaces := bytes.Repeat([]byte{' '}, 16)
	hs, err := handshakeRequest.Append(nil, map[string]any{"clientHash": spaces, "clientProtocol": "x", "serverHash": d.hash[:], "meta": nil})
	require.NoError(t, err)
	return append(append(limitFrame(hs...), limitFrame(0)...), limitFrame(avroString("")...)...)
}

// rawCall is a call of a message with no parameters, as one write.
func rawCall(name string) []byte {
	return append(append(limitFrame(0), limitFrame(avroString(name)...)...), limitFrame()...)
}

// Peers that pipeline calls for large answers and never read them are cut
// off within the write timeout of their buffers filling, rather than
// holding megabytes of socket buffer each for as long as they please, while
// a normal client's calls keep being answered within 2 s; afterwards no
// goroutine is left and the daemon serves on. (With no write timeout the
// peers are held until they leave: the test fails.)
func TestDaemonCutsOffPeersThatDoNotRead(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	peers := 100
	if raceEnabled {
		peers = 20 // the race detector slows the server several times over
	}
	hostile.Flood[*Client]{
		Server: "daemon",
		Start: func(wt time.Duration) hostile.Served {
			d, addr, logs := floodDaemon(t, func(d *Daemon) { d.WriteTimeout = wt })
			return hostile.Served{Addr: addr, Conns: d.conns.Len, Log: logs, Greeting: rawHandshake(t, d)}
		},
		Client: hostile.NewClient(func(ctx context.Context, addr string) (*Client, error) { return Dial(ctx, addr, nil) }, (*Client).Call),
		Calls:  bytes.Repeat(rawCall("image"), 4096),
		Peers:  peers,
	}.Run(t)
}

// yaqc sends a call's terminator in a write of its own, which may arrive
// after the answer: it is not the start of the next request, and the
// connection may then sit idle for longer than the read timeout. A request
// that stops half way, or a new connection that sends no handshake, is
// closed after the read timeout; one idle past the idle timeout quietly.
func TestDaemonReadTimeouts(t *testing.T) {
	const rt = 200 * time.Millisecond
	d, addr, logs := floodDaemon(t, func(d *Daemon) { d.ReadTimeout, d.IdleTimeout = rt, 1500*time.Millisecond })
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	readFrames := func(n int) [][]byte {
		t.Helper()
		var out [][]byte
		for range n {
			var h [4]byte
			_, err := io.ReadFull(c, h[:])
			require.NoError(t, err)
			p := make([]byte, binary.BigEndian.Uint32(h[:]))
			_, err = io.ReadFull(c, p)
			require.NoError(t, err)
			out = append(out, p)
		}
		return out
	}
	_, err = c.Write(rawHandshake(t, d))
	require.NoError(t, err)
	// The handshake's answer: BOTH, meta, flag, a null (empty), the end.
	assert.Equal(t, [][]byte{{0x00, 0x00, 0x00, 0x00}, {0x00}, {0x00}, {}, {}}, readFrames(5))
	for range 2 {
		call := rawCall("ping")
		_, err = c.Write(call[:len(call)-4]) // all but the terminator
		require.NoError(t, err)
		assert.Equal(t, [][]byte{{0x00}, {0x00}, {0x02}, {}}, readFrames(4), "meta, flag, 1, end")
		time.Sleep(50 * time.Millisecond)
		_, err = c.Write(call[len(call)-4:])
		require.NoError(t, err)
		time.Sleep(2 * rt) // idle, longer than the read timeout
	}

	start := time.Now()
	half, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer half.Close()
	_, err = half.Write(append(rawHandshake(t, d), 0, 0, 0, 9, 0))
	require.NoError(t, err)
	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	for _, p := range []net.Conn{half, silent} {
		p.SetReadDeadline(time.Now().Add(3 * time.Second))
		_, err := io.Copy(io.Discard, p)
		assert.NoError(t, err, "closed by the daemon")
		took := time.Since(start)
		assert.GreaterOrEqual(t, took, rt)
		// Closed at the timeout, not at the 3 s deadline; the margin is
		// for a CI machine running the other packages' tests meanwhile.
		assert.Less(t, took, rt+1500*time.Millisecond)
	}
	// Timeouts are logged at most once a second: one line for the two,
	// whichever timed out first. The silent one is said to have sent
	// nothing, not to have left a request incomplete.
	assert.Regexp(t, `^yaq: flood: 127\.0\.0\.1:\d+: (a request still incomplete 200ms after it began|sent nothing \(no handshake, no request\) within 200ms of connecting) \(the read timeout\); closing the connection\n$`, logs.String())

	// Idle past the idle timeout: closed, and nothing logged.
	time.Sleep(1500*time.Millisecond - 3*rt)
	c.SetReadDeadline(time.Now().Add(time.Second))
	_, err = io.Copy(io.Discard, c)
	assert.NoError(t, err, "closed by the daemon")
	assert.Equal(t, 1, strings.Count(logs.String(), "\n"), "%s", logs)
}

// Over MaxConnections, a connection is closed at once and the refusals
// logged once; a normal client is served again once a connection closes.
func TestDaemonConnectionCap(t *testing.T) {
	d, addr, logs := floodDaemon(t, func(d *Daemon) { d.MaxConnections = 3 })
	var held []net.Conn // in the middle of their handshake, so not idle
	for range 3 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Write([]byte{0, 0, 0, 100, 0x20}) // a 100-byte frame, 1 byte sent
		require.NoError(t, err)
		held = append(held, c)
	}
	// Each counts as busy only once the daemon has read its first byte:
	// before it is served at all, a connection is neither, and then
	// briefly idle (evictable) until that byte is in hand.
	for deadline := time.Now().Add(3 * time.Second); d.conns.Len() < 3 || d.conns.Idle() > 0 || d.conns.Unserved() > 0; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline))
	}
	for range 5 {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err := Dial(ctx, addr, nil)
		cancel()
		require.Error(t, err)
		assert.NotErrorIs(t, err, context.DeadlineExceeded, "refused at once")
		assert.Less(t, time.Since(start), time.Second)
	}
	assert.Regexp(t, `^yaq: flood: 127\.0\.0\.1:\d+: 3 connections open, the limit: refusing new ones until some close\n$`, logs.String())
	held[0].Close()
	for deadline := time.Now().Add(3 * time.Second); d.conns.Len() > 2; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline))
	}
	c, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	var n int
	require.NoError(t, c.Call(context.Background(), "ping", nil, &n))
}

// Peers that shake hands and sit idle cannot lock clients out: at the cap,
// the connection idle the longest is closed to make room, and a new
// client's call is answered at once. (The old daemon refused every new
// connection until an idle one had waited out the hour of idle timeout.)
func TestDaemonCapClosesIdle(t *testing.T) {
	const max = 8
	d, addr, logs := floodDaemon(t, func(d *Daemon) { d.MaxConnections = max })
	ctx := context.Background()
	var n int
	for range max {
		c, err := Dial(ctx, addr, nil)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.Call(ctx, "ping", nil, &n))
	}
	for deadline := time.Now().Add(3 * time.Second); d.conns.Idle() < max; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "%d of %d idle", d.conns.Idle(), max)
	}
	for range 3 {
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		c, err := Dial(cctx, addr, nil)
		require.NoError(t, err)
		require.NoError(t, c.Call(cctx, "ping", nil, &n))
		cancel()
		c.Close()
		assert.Less(t, time.Since(start), 2*time.Second)
	}
	assert.Regexp(t, `^yaq: flood: 127\.0\.0\.1:\d+: 8 connections open, the limit: closing the one idle longest \(for \d+ms\) to accept a new one, and so on while the limit holds\n$`, logs.String())
}

// Connections that connect and say nothing hold no place a client needs: at
// the limit the one silent longest is closed for a client that speaks.
func TestDaemonCapClosesSilent(t *testing.T) {
	d, addr, _ := floodDaemon(t, func(d *Daemon) { d.MaxConnections = 3 })
	for range 3 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
	}
	for deadline := time.Now().Add(3 * time.Second); d.conns.Idle() < 3; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the silent connections wait as idle ones")
	}
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := Dial(ctx, addr, nil)
		require.NoError(t, err)
		var n int
		require.NoError(t, c.Call(ctx, "ping", nil, &n))
		cancel()
		defer c.Close()
	}
}
