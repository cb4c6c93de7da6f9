package yaqrpc

import (
	"bytes"
	"context"
	"io"
	"log"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/connset"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// floodServer serves image (1 MiB of bytes) and ping on 127.0.0.1 with the
// limits set by tune.
func floodServer(t *testing.T, tune func(s *Server)) (*Server, string, *hostile.Log) {
	srv := &Server{}
	logs := &hostile.Log{}
	srv.ErrorLog = log.New(logs, "", 0)
	image := bytes.Repeat([]byte{7}, 1<<20)
	srv.Handle("image", func(context.Context, *Request) (any, error) { return image, nil })
	srv.Handle("ping", func(context.Context, *Request) (any, error) { return 1, nil })
	tune(srv)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan struct{})
	go func() { srv.Serve(l); close(served) }()
	t.Cleanup(func() { srv.Close(); <-served })
	return srv, l.Addr().String(), logs
}

// Peers that pipeline requests for large answers and never read them are
// cut off within the write timeout of their buffers filling, while a normal
// client's calls keep being answered within 2 s; afterwards no goroutine is
// left and the server serves on. (With no write timeout the peers are held
// until they leave: the test fails.)
func TestServerCutsOffPeersThatDoNotRead(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	peers := 100
	if raceEnabled {
		peers = 20 // the race detector slows the server several times over
	}
	var calls []byte
	for i := range 4096 {
		b, err := msgpack.Marshal(map[string]any{"ver": Version, "id": i, "method": "image"})
		require.NoError(t, err)
		calls = append(calls, b...)
	}
	var logs *hostile.Log
	hostile.Flood[*Client]{
		Server: "server",
		Start: func(wt time.Duration) hostile.Served {
			var srv *Server
			var addr string
			srv, addr, logs = floodServer(t, func(s *Server) { s.WriteTimeout = wt })
			return hostile.Served{Addr: addr, Conns: srv.ready().Len, Log: logs}
		},
		Client: hostile.NewClient(func(ctx context.Context, addr string) (*Client, error) { return Dial(ctx, addr, nil) }, (*Client).Call),
		Calls:  calls,
		Peers:  peers,
	}.Run(t)
	assert.Contains(t, logs.String(), "yaqrpc: 127.0.0.1:")
}

// A request that stops half way is closed after the read timeout; a pause
// between requests longer than it is not, and a client idle past the idle
// timeout is closed without a log line. Over MaxConnections, an idle
// connection is closed to make room, and when none is idle new connections
// are closed at once, with one log line for each burst.
func TestServerReadTimeoutsAndCap(t *testing.T) {
	const rt = 200 * time.Millisecond
	_, addr, logs := floodServer(t, func(s *Server) {
		s.ReadTimeout, s.IdleTimeout = rt, 2*time.Second
	})
	ctx := context.Background()
	patient := dial(t, addr)
	var n int
	require.NoError(t, patient.Call(ctx, "ping", nil, &n))
	time.Sleep(2 * rt)
	require.NoError(t, patient.Call(ctx, "ping", nil, &n), "a pause between requests is not a stalled request")

	start := time.Now()
	half, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer half.Close()
	_, err = half.Write([]byte{0x84, 0xa3, 'v', 'e'}) // a map of 4, and half a key
	require.NoError(t, err)
	half.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err = io.Copy(io.Discard, half)
	assert.NoError(t, err, "closed by the server")
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, rt)
	assert.Less(t, took, rt+500*time.Millisecond)
	assert.Regexp(t, `^yaqrpc: 127\.0\.0\.1:\d+: a request still incomplete 200ms after it began \(the read timeout\); closing the connection\n$`, logs.String())

	// The cap, on a server whose requests may take their time: with three
	// connections mid-request, the rest are refused at once, with one log
	// line.
	capped, capAddr, capLogs := floodServer(t, func(s *Server) { s.MaxConnections = 3 })
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", capAddr)
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Write([]byte{0x84, 0xa3, 'v', 'e'})
		require.NoError(t, err)
		held = append(held, c)
	}
	// (Not served yet, a connection is neither idle nor mid-request.)
	for deadline := time.Now().Add(3 * time.Second); capped.ready().Len() < 3 || capped.ready().Idle() > 0 || capped.ready().Unserved() > 0; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline))
	}
	for range 5 {
		start := time.Now()
		c, err := Dial(ctx, capAddr, nil)
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			err = c.Call(cctx, "ping", nil, &n)
			cancel()
			c.Close()
		}
		require.Error(t, err)
		assert.NotErrorIs(t, err, context.DeadlineExceeded, "refused at once")
		assert.Less(t, time.Since(start), time.Second)
	}
	assert.Regexp(t, `^yaqrpc: 127\.0\.0\.1:\d+: 3 connections open, the limit: refusing new ones until some close\n$`, capLogs.String())
	// An idle connection, though, makes room for a new one: an hour of
	// idle timeout must not lock clients out.
	held[0].Close()
	for deadline := time.Now().Add(3 * time.Second); capped.ready().Len() > 2; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline))
	}
	idleBefore := capped.ready().Idle()
	idle := dial(t, capAddr)
	require.NoError(t, idle.Call(ctx, "ping", nil, &n))
	// The answer can reach the client before the server has marked the
	// connection idle again (after its write returns): only an idle one
	// is closed to make room, so wait for it to be one.
	for deadline := time.Now().Add(3 * time.Second); capped.ready().Idle() <= idleBefore; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the connections did not go idle")
	}
	fresh := dial(t, capAddr)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	require.NoError(t, fresh.Call(cctx, "ping", nil, &n), "served by closing the idle connection")
	cancel()
	// Past the client's idle check before its call, and past the log's one-second
	// burst, so that the next closing has a line of its own.
	time.Sleep(max(connset.ProbeIdleAfter, time.Second) + 100*time.Millisecond)
	require.NoError(t, idle.Call(ctx, "ping", nil, &n), "the closed client reconnects")
	lines := strings.Split(strings.TrimSpace(capLogs.String()), "\n")
	require.Len(t, lines, 3, "a line for each burst of closings, a second apart: %s", capLogs)
	for _, line := range lines[1:] {
		assert.Regexp(t, `^yaqrpc: 127\.0\.0\.1:\d+: 3 connections open, the limit: closing the one idle longest \(for [0-9.]+m?s\) to accept a new one, and so on while the limit holds$`, line)
	}

	// Idle past the idle timeout: closed, and nothing logged; the client,
	// made by Dial, reconnects for its next call.
	before := patient.conn
	time.Sleep(2 * time.Second)
	assert.NoError(t, patient.Call(ctx, "ping", nil, &n))
	assert.NotSame(t, before, patient.conn, "closed by the server, so the client reconnected")
	assert.Len(t, strings.Split(strings.TrimSpace(logs.String()), "\n"), 1, "%s", logs)
}
