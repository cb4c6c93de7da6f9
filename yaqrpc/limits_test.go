package yaqrpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// syncLog is a log that tests can read while the server writes it.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// floodServer serves image (1 MiB of bytes) and ping on 127.0.0.1 with the
// limits set by tune.
func floodServer(t *testing.T, tune func(s *Server)) (*Server, string, *syncLog) {
	srv := NewServer()
	logs := &syncLog{}
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

// pingEvery calls ping on a client of its own every 20 ms until stop, each
// call with a 2 s deadline, and returns the slowest call and any error.
func pingEvery(t *testing.T, addr string, stop chan struct{}) (slowest func() (time.Duration, error)) {
	c, err := Dial(context.Background(), addr)
	require.NoError(t, err)
	var worst time.Duration
	var failed error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.Close()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			start := time.Now()
			var n int
			err := c.Call(ctx, "ping", nil, &n)
			cancel()
			worst = max(worst, time.Since(start))
			if err != nil && failed == nil {
				failed = err
			}
		}
	}()
	return func() (time.Duration, error) { <-done; return worst, failed }
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
	runtime.GC()
	goroutines := runtime.NumGoroutine()
	const wt = 500 * time.Millisecond
	peers := 100
	if raceEnabled {
		peers = 20 // the race detector slows the server several times over
	}
	srv, addr, logs := floodServer(t, func(s *Server) { s.WriteTimeout = wt })
	stop := make(chan struct{})
	slowest := pingEvery(t, addr, stop)

	var calls []byte
	for i := range 4096 {
		b, err := msgpack.Marshal(map[string]any{"ver": Version, "id": i, "method": "image"})
		require.NoError(t, err)
		calls = append(calls, b...)
	}
	var cutOff atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range peers {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		// The peer's own buffers stay small: the test is about the server's.
		c.(*net.TCPConn).SetReadBuffer(4 << 10)
		c.(*net.TCPConn).SetWriteBuffer(64 << 10)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			for {
				if _, err := c.Write(calls); err != nil {
					var ne net.Error
					if !errors.As(err, &ne) || !ne.Timeout() {
						cutOff.Add(1) // reset by the server
					}
					return
				}
			}
		}()
	}
	dialled := time.Since(start)
	var closedAt time.Duration
	for deadline := time.Now().Add(wt + 4*time.Second); ; time.Sleep(10 * time.Millisecond) {
		if srv.conns.Len() == 1 { // the normal client
			closedAt = time.Since(start)
			break
		}
		require.True(t, time.Now().Before(deadline), "%d connections still open %v after the peers began", srv.conns.Len(), time.Since(start))
	}
	t.Logf("%d peers that do not read, dialled in %v: all cut off %v after the first began", peers, dialled, closedAt)
	assert.Less(t, closedAt-dialled, wt+wt/4+time.Second)
	wg.Wait()
	assert.Equal(t, int64(peers), cutOff.Load(), "peers whose writes the server's close ended")
	assert.Contains(t, logs.String(), "yaqrpc: 127.0.0.1:")
	assert.Contains(t, logs.String(), "it has stopped reading (the write timeout); closing the connection")
	assert.LessOrEqual(t, strings.Count(logs.String(), "\n"), int(time.Since(start)/time.Second)+2, "timeouts logged at most once a second:\n%s", logs)
	close(stop)
	worst, err := slowest()
	require.NoError(t, err, "the normal client's calls")
	t.Logf("the normal client's slowest call during the flood: %v", worst)
	assert.Less(t, worst, 2*time.Second)

	c, err := Dial(context.Background(), addr)
	require.NoError(t, err)
	var n int
	require.NoError(t, c.Call(context.Background(), "ping", nil, &n), "the server serves on")
	assert.Equal(t, 1, n)
	c.Close()
	for deadline := time.Now().Add(3 * time.Second); runtime.NumGoroutine() > goroutines+1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), goroutines, buf[:runtime.Stack(buf, true)])
		}
	}
}

// A request that stops half way is closed after the read timeout; a pause
// between requests longer than it is not, and a client idle past the idle
// timeout is closed without a log line. Over MaxConnections, connections
// are closed at once, with one log line.
func TestServerReadTimeoutsAndCap(t *testing.T) {
	const rt = 200 * time.Millisecond
	srv, addr, logs := floodServer(t, func(s *Server) {
		s.ReadTimeout, s.IdleTimeout, s.MaxConnections = rt, 2*time.Second, 3
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

	// The cap: patient and two more are open; the rest are refused.
	for deadline := time.Now().Add(3 * time.Second); srv.conns.Len() > 1; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the half request's connection is gone")
	}
	for range 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
	}
	for deadline := time.Now().Add(3 * time.Second); srv.conns.Len() < 3; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline))
	}
	for range 5 {
		start := time.Now()
		c, err := Dial(ctx, addr)
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
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 2, "%s", logs)
	assert.Regexp(t, `^yaqrpc: 127\.0\.0\.1:\d+: 3 connections open, the limit: refusing new ones until some close$`, lines[1])

	// Idle past the idle timeout: closed, and nothing logged; the client,
	// made by Dial, reconnects for its next call.
	before := patient.conn
	time.Sleep(2 * time.Second)
	assert.NoError(t, patient.Call(ctx, "ping", nil, &n))
	assert.NotSame(t, before, patient.conn, "closed by the server, so the client reconnected")
	assert.Len(t, strings.Split(strings.TrimSpace(logs.String()), "\n"), 2, "%s", logs)
}
