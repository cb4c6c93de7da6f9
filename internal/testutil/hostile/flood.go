package hostile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Log is a log that tests can read while a server writes it.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p, for log.New.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns what has been logged so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Client is how a test talks to a server of one protocol, whose client
// is C.
type Client[C io.Closer] struct {
	// Dial makes a client of the test's own.
	Dial func(ctx context.Context, addr string) (C, error)
	// Call calls method on c with no parameters and decodes its answer
	// into result.
	Call func(ctx context.Context, c C, method string, result any) error
}

// NewClient is the Client of dial and call, a client's Call method as a
// method expression (such as (*yaq.Client).Call), for calls that pass no
// parameters.
func NewClient[C io.Closer, P any](dial func(context.Context, string) (C, error), call func(C, context.Context, string, P, any) error) Client[C] {
	return Client[C]{Dial: dial, Call: func(ctx context.Context, c C, method string, result any) error {
		var none P // nil, whether P is []any or any: no parameters
		return call(c, ctx, method, none, result)
	}}
}

// Flood is a server under the flood test (Run) and how the test talks to
// it; C is its protocol's client. The yaqrpc server and the yaq daemon
// differ only in these.
type Flood[C io.Closer] struct {
	// Server is what the failure messages call it ("server", "daemon").
	Server string
	// Start serves, on 127.0.0.1 until the test ends, "image" answering
	// 1 MiB and "ping" answering 1, with the write timeout wt.
	Start func(wt time.Duration) Served
	Client[C]
	// Calls is many pipelined calls of image, which a peer sends over and
	// over.
	Calls []byte
	// Peers is how many peers flood the server at once.
	Peers int
}

// Served is a server that Flood.Start started.
type Served struct {
	Addr  string
	Conns func() int // how many connections it holds open
	Log   *Log
	// Greeting is what a peer sends once when it connects (a handshake),
	// or nil.
	Greeting []byte
}

// Run opens f.Peers connections that pipeline calls for large answers and
// never read them, and checks that the server cuts them all off within its
// write timeout (and a quarter, plus a second) of their buffers filling,
// rather than holding megabytes of socket buffer each for as long as they
// please; that it logs the timeouts at most once a second; that a normal
// client's calls keep being answered within 2 s meanwhile; and that
// afterwards the server serves on and no goroutine is left.
func (f Flood[C]) Run(t *testing.T) {
	runtime.GC()
	goroutines := runtime.NumGoroutine()
	const wt = 500 * time.Millisecond
	srv := f.Start(wt)
	addr, conns, logs := srv.Addr, srv.Conns, srv.Log
	stop := make(chan struct{})
	slowest := f.pingEvery(t, addr, stop)

	var cutOff atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range f.Peers {
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
			if len(srv.Greeting) > 0 {
				if _, err := c.Write(srv.Greeting); err != nil {
					return
				}
			}
			for {
				if _, err := c.Write(f.Calls); err != nil {
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
	// Every peer is cut off within the write timeout (and a quarter) of
	// its buffers filling, which takes a moment.
	var closedAt time.Duration
	for deadline := time.Now().Add(wt + 4*time.Second); ; time.Sleep(10 * time.Millisecond) {
		if conns() == 1 { // the normal client
			closedAt = time.Since(start)
			break
		}
		require.True(t, time.Now().Before(deadline), "%d connections still open %v after the peers began", conns(), time.Since(start))
	}
	t.Logf("%d peers that do not read, dialled in %v: all cut off %v after the first began", f.Peers, dialled, closedAt)
	assert.Less(t, closedAt-dialled, wt+wt/4+time.Second)
	wg.Wait()
	assert.Equal(t, int64(f.Peers), cutOff.Load(), "peers whose writes the %s's close ended", f.Server)
	assert.Contains(t, logs.String(), "it has stopped reading (the write timeout); closing the connection")
	assert.LessOrEqual(t, strings.Count(logs.String(), "\n"), int(time.Since(start)/time.Second)+2, "timeouts logged at most once a second:\n%s", logs)
	close(stop)
	worst, err := slowest()
	require.NoError(t, err, "the normal client's calls")
	t.Logf("the normal client's slowest call during the flood: %v", worst)
	assert.Less(t, worst, 2*time.Second)

	c, err := f.Dial(context.Background(), addr)
	require.NoError(t, err)
	var n int
	require.NoError(t, f.Call(context.Background(), c, "ping", &n), "the %s serves on", f.Server)
	assert.Equal(t, 1, n)
	c.Close()
	for deadline := time.Now().Add(3 * time.Second); runtime.NumGoroutine() > goroutines+1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), goroutines, buf[:runtime.Stack(buf, true)])
		}
	}
}

// pingEvery calls ping on a client of its own every 20 ms until stop, each
// call with a 2 s deadline, and returns the slowest call and any error.
func (f Flood[C]) pingEvery(t *testing.T, addr string, stop chan struct{}) (slowest func() (time.Duration, error)) {
	c, err := f.Dial(context.Background(), addr)
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
			err := f.Call(ctx, c, "ping", &n)
			cancel()
			worst = max(worst, time.Since(start))
			if err != nil && failed == nil {
				failed = err
			}
		}
	}()
	return func() (time.Duration, error) { <-done; return worst, failed }
}
