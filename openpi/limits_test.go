package openpi

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
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
	const every = 100 * time.Millisecond
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
	addr := startServer(t, &Server{Policy: Echo, IdleTimeout: 300 * time.Millisecond, ErrorLog: log.New(&logged, "", 0)})
	c := dialT(t, addr, nil)
	for range 4 {
		time.Sleep(100 * time.Millisecond)
		if _, err := c.Infer(ctx10(t), nil); err != nil {
			t.Fatal(err)
		}
	}
	took := waitClosed(t, mustRaw(t, addr), 5*time.Second)
	if took < 250*time.Millisecond || took > 3*time.Second {
		t.Errorf("an idle connection was closed after %v, with an idle timeout of 300ms", took)
	}
	time.Sleep(400 * time.Millisecond)
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
	waitFor(t, func() bool { return s.budget().inUse() == 0 }, "the budget to be whole")
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

// TestBudget: memory is taken while it is there, waited for while others
// hold it, refused after the wait or when it can never be had, and what
// is given back wakes those that wait.
func TestBudget(t *testing.T) {
	b := &budget{limit: 100}
	ctx := context.Background()
	if err := b.take(ctx, 60, "a"); err != nil {
		t.Fatal(err)
	}
	err := b.take(ctx, 101, "a message")
	var be *budgetError
	if !errors.As(err, &be) || !be.never || !strings.Contains(err.Error(), "more than the server's whole memory budget of 100") {
		t.Errorf("more than the budget: %v", err)
	}
	got := make(chan error, 1)
	go func() { got <- b.take(ctx, 50, "b") }()
	select {
	case err := <-got:
		t.Fatalf("took 50 of the 40 left: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	b.give(30)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if b.inUse() != 80 {
		t.Errorf("in use %d, want 80", b.inUse())
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := b.take(short, 30, "c"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting past the context: %v", err)
	}
	defer func(w time.Duration) { budgetWait = w }(budgetWait)
	budgetWait = 50 * time.Millisecond
	if err := b.take(ctx, 30, "an observation"); !errors.As(err, &be) || be.never || !strings.Contains(err.Error(), "which other connections hold") {
		t.Errorf("waiting past budgetWait: %v", err)
	}
	unbounded := &budget{}
	if err := unbounded.take(ctx, 1<<60, "x"); err != nil {
		t.Errorf("no limit: %v", err)
	}
}

// TestServerGivesBackIdleMemory: a connection holds the memory of its
// last messages, for the next, only for keepBuffers while it waits: then
// an idle client holds none of the budget, and its next call still works.
func TestServerGivesBackIdleMemory(t *testing.T) {
	k := keepBuffers
	t.Cleanup(func() { keepBuffers = k }) // after the server has stopped
	keepBuffers = 100 * time.Millisecond
	s := &Server{Policy: Echo}
	c := dialT(t, startServer(t, s), nil)
	obs := map[string]any{"x": make([]byte, 1<<20)}
	for range 3 {
		if _, err := c.Infer(ctx10(t), obs); err != nil {
			t.Fatal(err)
		}
		if held := s.budget().inUse(); held < 2<<20 || held > 5<<20 {
			t.Errorf("%d bytes held after a call of 1 MiB each way", held)
		}
	}
	waitFor(t, func() bool { return s.budget().inUse() == 0 }, "an idle connection to give back its memory")
	if _, err := c.Infer(ctx10(t), obs); err != nil {
		t.Fatal(err)
	}
}
