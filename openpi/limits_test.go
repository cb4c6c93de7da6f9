package openpi

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log"
	"net"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
)

// waitClosed waits up to limit for the server to close conn (a read
// that ends), and returns how long it took.
func waitClosed(t *testing.T, conn net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	conn.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %v", limit)
	}
	return time.Since(start)
}

// TestServerPings: a connection that waits is pinged; a client that
// answers (this package's, whose reader answers between calls) keeps its
// connection however long it waits, and one that does not is closed
// within two or three intervals, without a line in the log.
func TestServerPings(t *testing.T) {
	var logged hostile.Log
	const every = 300 * time.Millisecond // a loaded machine's client answers within it
	addr := startServer(t, &Server{Policy: Echo, PingInterval: every, ErrorLog: log.New(&logged, "", 0)})
	c := dialT(t, addr, nil)
	if _, err := c.Infer(ctx10(t), map[string]any{"x": int64(1)}); err != nil {
		t.Fatal(err)
	}
	deaf, _ := rawClient(t, addr) // shakes hands, then reads nothing
	took := waitClosed(t, deaf, 5*time.Second)
	t.Logf("a client that does not answer pings was closed after %v", took)
	if took > 3*every+time.Second {
		t.Errorf("closed after %v, pinging every %v", took, every)
	}
	time.Sleep(5 * every) // more pings, which the client's reader answers
	action, err := c.Infer(ctx10(t), map[string]any{"x": int64(2)})
	if err != nil || action["x"] != int64(2) {
		t.Errorf("after %v idle: %v %v", took, action, err)
	}
	if logged.String() != "" {
		t.Errorf("logged %q", logged.String())
	}
}

// TestServerIdleTimeout: a connection that waits for an observation
// longer than IdleTimeout is closed, without a line in the log; one that
// calls in time is not.
func TestServerIdleTimeout(t *testing.T) {
	var logged hostile.Log
	const idle = time.Second
	addr := startServer(t, &Server{Policy: Echo, IdleTimeout: idle, ErrorLog: log.New(&logged, "", 0)})
	c := dialT(t, addr, nil)
	for range 4 {
		time.Sleep(idle / 10)
		if _, err := c.Infer(ctx10(t), nil); err != nil {
			t.Fatal(err)
		}
	}
	took := waitClosed(t, mustRaw(t, addr), 5*idle)
	if took < idle*9/10 || took > 4*idle {
		t.Errorf("an idle connection was closed after %v, with an idle timeout of %v", took, idle)
	}
	time.Sleep(idle * 13 / 10)
	if _, err := c.Infer(ctx10(t), nil); err == nil {
		t.Error("a client idle for longer than the idle timeout was not closed")
	}
	if logged.String() != "" {
		t.Errorf("logged %q", logged.String())
	}
}

func mustRaw(t *testing.T, addr string) net.Conn {
	conn, _ := rawClient(t, addr)
	return conn
}

// TestServerQuietOnNormalClose: clients that leave as clients do (a
// close handshake, or the socket closed at a program's exit) leave no
// line in the log, where every one logged "failed to get reader: failed
// to read frame header: EOF"; and the memory budget is whole again.
func TestServerQuietOnNormalClose(t *testing.T) {
	var logged hostile.Log
	s := &Server{Policy: Echo, ErrorLog: log.New(&logged, "", 0)}
	addr := startServer(t, s)
	for _, leave := range []func(c *Client){
		func(c *Client) { c.Close() },
		func(c *Client) { c.conn.CloseNow() }, // no close frame: the process exited
	} {
		c := dialT(t, addr, nil)
		if _, err := c.Infer(ctx10(t), observation(t)); err != nil {
			t.Fatal(err)
		}
		leave(c)
	}
	conn, _ := rawClient(t, addr)
	conn.Close() // before any observation
	waitFor(t, func() bool { return s.budget().InUse() == 0 }, "the budget to be whole")
	time.Sleep(100 * time.Millisecond)
	if logged.String() != "" {
		t.Errorf("logged %q", logged.String())
	}
}

// waitFor waits up to 10 s for cond, polling.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// TestServerGivesBackIdleMemory: a connection holds the memory of its
// last messages, for the next, only for keepBuffers while it waits: then
// an idle client holds none of the budget, and its next call still works.
func TestServerGivesBackIdleMemory(t *testing.T) {
	k := keepBuffers
	t.Cleanup(func() { keepBuffers = k }) // after the server has stopped
	keepBuffers = 300 * time.Millisecond
	s := &Server{Policy: Echo}
	c := dialT(t, startServer(t, s), nil)
	obs := map[string]any{"x": make([]byte, 1<<20)}
	var most int64
	for range 3 {
		if _, err := c.Infer(ctx10(t), obs); err != nil {
			t.Fatal(err)
		}
		held := s.budget().InUse() // unless the machine paused for keepBuffers
		most = max(most, held)
		if held > 5<<20 {
			t.Errorf("%d bytes held after a call of 1 MiB each way", held)
		}
	}
	if most < 2<<20 {
		t.Errorf("at most %d bytes held after calls of 1 MiB each way", most)
	}
	waitFor(t, func() bool { return s.budget().InUse() == 0 }, "an idle connection to give back its memory")
	if _, err := c.Infer(ctx10(t), obs); err != nil {
		t.Fatal(err)
	}
}

// TestServerNonReadersPinTheBudget: 20 clients that each send a 30 MiB
// observation to an echo server and never read its answer hold at most
// the server's memory budget (256 MiB, 4 times MaxSize), where they held
// 1.43 GB: the server's live heap never grows past it (and the
// measure's allowance), and each is cut off by the write timeout or
// refused for want of memory. A robot's calls meanwhile are answered.
func TestServerNonReadersPinTheBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector multiplies memory")
	}
	msg := append(rawFrameHeader(30<<20), make([]byte, 30<<20)...)
	copy(msg[14:], []byte{0x81, 0xa1, 'x', 0xc6, 0x01, 0xdf, 0xff, 0xf8}) // {"x": bin of 30 MiB - 8}
	var logged hostile.Log
	s := &Server{Policy: Echo, WriteTimeout: time.Second, ErrorLog: log.New(&logged, "", 0)}
	addr := startServer(t, s)
	base := liveHeap()

	var peers sync.WaitGroup
	for range 20 {
		conn, _ := rawClient(t, addr)
		conn.(*net.TCPConn).SetReadBuffer(4 << 10)
		peers.Add(1)
		go func() {
			defer peers.Done()
			conn.SetWriteDeadline(time.Now().Add(20 * time.Second))
			conn.Write(msg) // and never read
		}()
	}
	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			// What one collection finds live may include memory freed
			// while it ran: what is pinned is live for two in a row.
			live := min(liveHeap(), liveHeap())
			peak = max(peak, live-min(live, base))
		}
	}()
	c := dialT(t, addr, nil)
	start := time.Now()
	var slowest time.Duration
	// The robot calls on until a peer has been cut off by the write
	// timeout (it takes a second once the server has read a message and
	// written into a full socket; under load, reading 20 messages of
	// 30 MiB takes longer), for at least 4 seconds and at most 60.
	cutOff := func() bool { return strings.Contains(logged.String(), "stopped reading (the write timeout)") }
	for time.Since(start) < 4*time.Second || !cutOff() && time.Since(start) < time.Minute {
		call := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := c.Infer(ctx, map[string]any{"x": int64(1)})
		cancel()
		if err != nil {
			t.Fatalf("a robot's call %v into the flood: %v", time.Since(start), err)
		}
		slowest = max(slowest, time.Since(call))
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	<-sampled
	t.Logf("20 peers that do not read: the server's live heap grew by at most %d MiB; a robot's slowest call %v", peak>>20, slowest)
	// A collection counts as live what was reachable when it began: a
	// buffer given back meanwhile, while another is made, is counted
	// twice, sometimes by two collections in a row. Hence the allowance
	// of one message (64 MiB).
	if limit := uint64(5 * ndarray.DefaultMaxSize); peak > limit {
		t.Errorf("the live heap grew by %d MiB, more than the budget of 256 MiB and 64", peak>>20)
	}
	if !cutOff() {
		t.Errorf("no peer was cut off by the write timeout: %q", logged.String())
	}
}

// liveHeap collects garbage and returns the bytes it found live: what the
// heap holds, however much is allocated meanwhile.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// rawFrameHeader is the header of a client's binary frame of n bytes,
// masked with the zero key (so that the payload goes as it is).
func rawFrameHeader(n int) []byte {
	return append(binary.BigEndian.AppendUint64([]byte{0x82, 0x80 | 127}, uint64(n)), 0, 0, 0, 0)
}

// TestServeHTTPLimits: a Server mounted on another HTTP server bounds its
// websockets as Serve does (here, its pings and idle timeout), and gives
// its memory back when they end.
func TestServeHTTPLimits(t *testing.T) {
	const every = 300 * time.Millisecond
	s := &Server{Policy: Echo, PingInterval: every, IdleTimeout: 10 * time.Second}
	addr := serveHTTP(t, s.ServeHTTP)
	c := dialT(t, addr, nil)
	if _, err := c.Infer(ctx10(t), observation(t)); err != nil {
		t.Fatal(err)
	}
	if took := waitClosed(t, mustRaw(t, addr), 5*time.Second); took > 3*every+time.Second {
		t.Errorf("a client that does not answer pings was closed after %v, pinging every %v", took, every)
	}
	if _, err := c.Infer(ctx10(t), observation(t)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	waitFor(t, func() bool { return s.budget().InUse() == 0 }, "the budget to be whole")
}
