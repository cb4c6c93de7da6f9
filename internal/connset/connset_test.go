package connset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptListener's Accept returns its script's errors and connections in
// turn, then waits for Close.
type scriptListener struct {
	mu     sync.Mutex
	script []any // error or net.Conn
	closed chan struct{}
	once   sync.Once
}

var scriptAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}

func (l *scriptListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if len(l.script) > 0 {
		next := l.script[0]
		l.script = l.script[1:]
		l.mu.Unlock()
		if err, ok := next.(error); ok {
			return nil, err
		}
		return next.(net.Conn), nil
	}
	l.mu.Unlock()
	<-l.closed
	return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: scriptAddr, Err: net.ErrClosed}
}

func (l *scriptListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *scriptListener) Addr() net.Addr { return scriptAddr }

// acceptErr is what accept4 at a limit looks like from Accept.
func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Addr: scriptAddr, Err: os.NewSyscallError("accept4", errno)}
}

// logLines collects what a Set logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

var errTestClosed = errors.New("test: closed")

// At the open-file limit the accept loop waits 5 ms, doubling to 1 s, and
// tries again, logging one line per run of failures; a success starts the
// waits over. The old loop returned the first EMFILE, which ended the
// daemons.
func TestAcceptBacksOffOnPassingErrors(t *testing.T) {
	var script []any
	for range 10 {
		script = append(script, acceptErr(syscall.EMFILE))
	}
	a1, b1 := net.Pipe()
	script = append(script, b1, acceptErr(syscall.ENFILE), acceptErr(syscall.ENOBUFS), acceptErr(syscall.ECONNABORTED))
	a2, b2 := net.Pipe()
	script = append(script, b2)
	defer a1.Close()
	defer a2.Close()
	l := &scriptListener{script: script, closed: make(chan struct{})}
	var logs logLines
	s := New(logs.logf)
	var slept []time.Duration
	s.sleep = func(d time.Duration) bool { slept = append(slept, d); return true }
	served := make(chan net.Conn, 2)
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(l, Limits{}, func(c net.Conn) { served <- c; io.Copy(io.Discard, c) }, errTestClosed)
	}()
	for range 2 {
		select {
		case <-served:
		case err := <-done:
			t.Fatalf("Serve returned %v before serving both connections", err)
		case <-time.After(5 * time.Second):
			t.Fatal("the connections after the errors were not served")
		}
	}
	s.Close()
	assert.Equal(t, errTestClosed, <-done)
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, time.Second, time.Second,
		5 * ms, 10 * ms, 20 * ms}, slept)
	assert.Equal(t, []string{
		"127.0.0.1:1: accept tcp 127.0.0.1:1: accept4: too many open files; retrying after 5ms, doubling to 1s, until accept succeeds",
		"127.0.0.1:1: accept tcp 127.0.0.1:1: accept4: too many open files in system; retrying after 5ms, doubling to 1s, until accept succeeds",
	}, logs.get())
}

// An accept error that does not pass by itself ends Serve with it; Close
// during a backoff wait ends Serve at once, not after the wait.
func TestAcceptEnds(t *testing.T) {
	boom := errors.New("boom")
	s := New((&logLines{}).logf)
	err := s.Serve(&scriptListener{script: []any{boom}, closed: make(chan struct{})}, Limits{}, func(net.Conn) {}, errTestClosed)
	assert.Equal(t, boom, err)

	var script []any
	for range 1000 {
		script = append(script, acceptErr(syscall.EMFILE))
	}
	s = New((&logLines{}).logf)
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(&scriptListener{script: script, closed: make(chan struct{})}, Limits{}, func(net.Conn) {}, errTestClosed)
	}()
	time.Sleep(800 * time.Millisecond) // into the 640 ms wait, which ends at 1275 ms
	start := time.Now()
	s.Close()
	select {
	case err := <-done:
		assert.Equal(t, errTestClosed, err)
		assert.Less(t, time.Since(start), 200*time.Millisecond)
	case <-time.After(3 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
}

// listen serves an echo of lines on 127.0.0.1 under lim, each connection
// waiting Idle between lines and Request during one; the Set's log and
// the errors that end connections are collected.
func listen(t *testing.T, lim Limits) (s *Set, addr string, logs *logLines, ended chan error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	logs = &logLines{}
	s = New(logs.logf)
	ended = make(chan error, 100)
	go s.Serve(l, lim, func(nc net.Conn) {
		c := Wrap(nc)
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			c.Idle()
			if _, err := br.Peek(1); err != nil {
				ended <- err
				return
			}
			c.Request()
			line, err := br.ReadString('\n')
			if err != nil {
				ended <- err
				return
			}
			if _, err := c.Write([]byte(line)); err != nil {
				ended <- err
				return
			}
		}
	}, errTestClosed)
	t.Cleanup(s.Close)
	return s, l.Addr().String(), logs, ended
}

func echo(t *testing.T, c net.Conn, line string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	_, err := c.Write([]byte(line))
	require.NoError(t, err)
	got := make([]byte, len(line))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, line, string(got))
}

func waitLen(t *testing.T, s *Set, n int) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); s.Len() != n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want %d", s.Len(), n)
		}
	}
}

// waitIdle waits until n connections are open and idle of them.
func waitIdle(t *testing.T, s *Set, n, idle int) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); s.Len() != n || s.Idle() != idle; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, %d idle; want %d, %d", s.Len(), s.Idle(), n, idle)
		}
	}
}

// Over the cap, with every connection mid-request, a new connection is
// closed as soon as it is accepted, with one log line per run of
// refusals, and served again once others have closed.
func TestConnectionCap(t *testing.T) {
	s, addr, logs, _ := listen(t, Limits{MaxConns: 2})
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		echo(t, c, "held\n")
		_, err = c.Write([]byte("half a li")) // mid-request: not to be closed for room
		require.NoError(t, err)
		held = append(held, c)
	}
	waitIdle(t, s, 2, 0)
	refused := func() {
		t.Helper()
		for range 5 {
			start := time.Now()
			c, err := net.Dial("tcp", addr)
			if err != nil { // reset before connect returned
				assert.ErrorIs(t, err, syscall.ECONNRESET)
				continue
			}
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			_, err = c.Read(make([]byte, 1))
			c.Close()
			require.Error(t, err)
			var ne net.Error
			assert.False(t, errors.As(err, &ne) && ne.Timeout(), "closed by the server, not left waiting: %v", err)
			assert.Less(t, time.Since(start), time.Second)
		}
	}
	refused()
	want := fmt.Sprintf("%s: 2 connections open, the limit: refusing new ones until some close", addr)
	assert.Equal(t, []string{want}, logs.get())
	held[0].Close()
	waitLen(t, s, 1)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	echo(t, c, "served again\n")
	_, err = c.Write([]byte("half a li"))
	require.NoError(t, err)
	waitIdle(t, s, 2, 0)
	refused()
	assert.Equal(t, []string{want, want}, logs.get(), "a new run of refusals, a new line")
}

// The default cap is 1024, or three quarters of the open-file limit when
// that is less; 0s become the default timeouts, negatives no limit.
func TestLimitsResolve(t *testing.T) {
	want := DefaultMaxConns
	if n := openFileLimit(); n > 0 && n/4*3 < want {
		want = n / 4 * 3
	}
	assert.Equal(t, Limits{MaxConns: want, IdleTimeout: time.Hour, ReadTimeout: time.Minute, WriteTimeout: 20 * time.Second}, Limits{}.resolve())
	assert.Equal(t, Limits{MaxConns: -1, IdleTimeout: -1, ReadTimeout: -1, WriteTimeout: 2 * time.Second},
		Limits{MaxConns: -5, IdleTimeout: -time.Second, ReadTimeout: -1, WriteTimeout: 2 * time.Second}.resolve())
}

// A connection that sends nothing is closed after IdleTimeout; one whose
// request stops half way, ReadTimeout after the request began; one that
// pauses between requests for longer than ReadTimeout is served.
func TestReadTimeouts(t *testing.T) {
	_, addr, _, ended := listen(t, Limits{IdleTimeout: 600 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	start := time.Now()
	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	trickle, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer trickle.Close()
	_, err = trickle.Write([]byte("half a li"))
	require.NoError(t, err)
	for _, want := range []struct {
		text  string
		after time.Duration
	}{
		{"a request still incomplete 200ms after it began (the read timeout)", 200 * time.Millisecond},
		{"no request for 600ms (the idle timeout)", 600 * time.Millisecond},
	} {
		select {
		case err := <-ended:
			took := time.Since(start)
			var te *TimeoutError
			require.ErrorAs(t, err, &te)
			assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
			assert.Equal(t, want.text, err.Error())
			assert.GreaterOrEqual(t, took, want.after)
			assert.Less(t, took, 5*want.after, "closed, if late, within a loaded machine's margin")
		case <-time.After(3 * time.Second):
			t.Fatal("a connection was not closed by its timeout")
		}
	}
	// Both peers see the close.
	for _, c := range []net.Conn{silent, trickle} {
		c.SetReadDeadline(time.Now().Add(time.Second))
		_, err := c.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF)
	}

	// A wait between requests longer than ReadTimeout is the idle
	// timeout's to judge, not the read timeout's: on a server whose idle
	// timeout is far (12x) beyond the wait, so that a loaded machine's
	// delays cannot close the connection first.
	_, addr, _, _ = listen(t, Limits{IdleTimeout: 5 * time.Second, ReadTimeout: 200 * time.Millisecond})
	patient, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer patient.Close()
	echo(t, patient, "one\n")
	time.Sleep(400 * time.Millisecond) // twice ReadTimeout, within IdleTimeout
	echo(t, patient, "two\n")
}

// writeServer serves one 4 MiB answer per connection under WriteTimeout
// wt, its socket's send buffer small so that a peer that does not read
// fills it at once; the writes' errors (nil for success) are sent on
// ended. Unless askKernel, the kernel is not asked what the peer has taken,
// as on systems where it cannot say.
func writeServer(t *testing.T, wt time.Duration, askKernel bool) (string, chan error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := New((&logLines{}).logf)
	ended := make(chan error, 10)
	answer := make([]byte, 4<<20)
	go s.Serve(l, Limits{WriteTimeout: wt}, func(nc net.Conn) {
		c := Wrap(nc)
		defer c.Close()
		c.queue.cannot = !askKernel
		c.Conn.(*net.TCPConn).SetWriteBuffer(64 << 10)
		b := net.Buffers{answer[:4], answer[4:]}
		_, err := c.WriteBuffers(&b)
		ended <- err
	}, errTestClosed)
	t.Cleanup(s.Close)
	return l.Addr().String(), ended
}

// A peer that stops reading has its answer's write fail within
// WriteTimeout (and a quarter) of stopping; a slow peer that keeps reading
// gets the whole answer, however long it takes.
func TestWriteTimeout(t *testing.T) {
	for _, askKernel := range []bool{true, false} {
		t.Run(fmt.Sprintf("asking the kernel %v", askKernel), func(t *testing.T) { testWriteTimeout(t, askKernel) })
	}
}

func testWriteTimeout(t *testing.T, askKernel bool) {
	const wt = 400 * time.Millisecond
	addr, ended := writeServer(t, wt, askKernel)
	stuck, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer stuck.Close()
	stuck.(*net.TCPConn).SetReadBuffer(16 << 10)
	start := time.Now()
	select {
	case err := <-ended:
		took := time.Since(start)
		var te *TimeoutError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, "the peer took less than 64 KiB of its answers in 400ms: it has stopped reading (the write timeout)", err.Error())
		assert.GreaterOrEqual(t, took, wt)
		assert.Less(t, took, wt+wt/4+300*time.Millisecond)
	case <-time.After(5 * time.Second):
		t.Fatal("the write to a peer that does not read did not end")
	}

	// The slow peer reads 64 KiB per 30 ms or more: 2 MiB/s at most, two
	// seconds for the answer, twice the write timeout, which tolerates a
	// stall of the reader (the machine is busy) shorter than a second. Its
	// receive buffer is fixed, so that the kernel does not take the answer
	// off the writer's hands.
	if testing.Short() {
		return
	}
	const slowWT = time.Second
	addr, ended = writeServer(t, slowWT, askKernel)
	slow, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer slow.Close()
	slow.(*net.TCPConn).SetReadBuffer(128 << 10)
	start = time.Now()
	var got int
	buf := make([]byte, 64<<10)
	for got < 4<<20 && time.Since(start) < 10*time.Second {
		time.Sleep(30 * time.Millisecond)
		slow.SetReadDeadline(time.Now().Add(time.Second))
		n, err := io.ReadFull(slow, buf)
		got += n
		if err != nil {
			break
		}
	}
	assert.Equal(t, 4<<20, got, "the slow peer's answer arrived whole")
	assert.Greater(t, time.Since(start), slowWT, "slower than the write timeout")
	select {
	case err := <-ended:
		assert.NoError(t, err)
	case <-time.After(3 * time.Second):
		t.Fatal("the write to the slow peer did not end")
	}
}

// Shutdown during a backoff wait, and with no connection, returns at once.
func TestShutdownStopsBackoff(t *testing.T) {
	var script []any
	for range 100 {
		script = append(script, acceptErr(syscall.EMFILE))
	}
	s := New((&logLines{}).logf)
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(&scriptListener{script: script, closed: make(chan struct{})}, Limits{}, func(net.Conn) {}, errTestClosed)
	}()
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, s.Shutdown(context.Background()))
	select {
	case err := <-done:
		assert.Equal(t, errTestClosed, err)
	case <-time.After(time.Second):
		t.Fatal("Serve did not return after Shutdown")
	}
}

// At the cap, a new connection is served by closing the one idle longest,
// so that peers that connect, shake hands and sit idle cannot lock clients
// out for the idle timeout; a connection mid-request is never closed for
// room, and a burst of closings is logged in one line. The old loop
// refused every new connection while the idle ones stayed.
func TestCapClosesTheLongestIdle(t *testing.T) {
	const max = 8
	s, addr, logs, _ := listen(t, Limits{MaxConns: max})
	busy, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer busy.Close()
	echo(t, busy, "busy\n")
	_, err = busy.Write([]byte("half a li")) // mid-request from here on
	require.NoError(t, err)
	var idle []net.Conn
	for i := range max - 1 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		echo(t, c, fmt.Sprintf("idle %d\n", i))
		idle = append(idle, c)
		time.Sleep(5 * time.Millisecond) // a distinct idle age for each
	}
	waitIdle(t, s, max, max-1)

	// Each new client, answered within 2 s, closes the oldest idle one.
	for i := range max + 2 {
		start := time.Now()
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		echo(t, c, fmt.Sprintf("new %d\n", i))
		assert.Less(t, time.Since(start), 2*time.Second)
		if i < len(idle) {
			idle[i].SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err := idle[i].Read(make([]byte, 1))
			assert.ErrorIs(t, err, io.EOF, "the oldest idle connection, %d, was closed", i)
		}
		assert.Equal(t, max, s.Len())
	}
	// The connection mid-request outlived them all and is answered.
	_, err = busy.Write([]byte("ne\n"))
	require.NoError(t, err)
	got := make([]byte, len("half a line\n"))
	busy.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err = io.ReadFull(busy, got)
	require.NoError(t, err)
	assert.Equal(t, "half a line\n", string(got))
	lines := logs.get()
	require.Len(t, lines, 1, "one line for the burst: %q", lines)
	assert.Regexp(t, `^`+regexp.QuoteMeta(addr)+`: 8 connections open, the limit: closing the one idle longest \(for \d+ms\) to accept a new one, and so on while the limit holds$`, lines[0])
}

// A connection that sends nothing at all, served as a yaq daemon serves
// (the peer speaks first, so the request begins at once), is said to have
// sent nothing, not to have left a request incomplete.
func TestSilentPeer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := New((&logLines{}).logf)
	t.Cleanup(s.Close)
	ended := make(chan error, 2)
	go s.Serve(l, Limits{ReadTimeout: 200 * time.Millisecond}, func(nc net.Conn) {
		c := Wrap(nc)
		defer c.Close()
		c.Request()
		_, err := io.ReadFull(c, make([]byte, 4))
		ended <- err
	}, errTestClosed)
	for _, send := range []string{"", "ab"} {
		c, err := net.Dial("tcp", l.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Write([]byte(send))
		require.NoError(t, err)
		select {
		case err := <-ended:
			if send == "" {
				assert.EqualError(t, err, "sent nothing (no handshake, no request) within 200ms of connecting (the read timeout)")
			} else {
				assert.EqualError(t, err, "a request still incomplete 200ms after it began (the read timeout)")
			}
		case <-time.After(3 * time.Second):
			t.Fatal("the read timeout did not end the connection")
		}
	}
}

// A connection its server has not yet marked counts as unserved, neither
// idle nor mid-request, until the server says Idle, Greet or Request.
func TestUnserved(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := New((&logLines{}).logf)
	release := make(chan struct{})
	go s.Serve(l, Limits{}, func(nc net.Conn) {
		c := Wrap(nc)
		defer c.Close()
		<-release
		c.Request()
		io.Copy(io.Discard, c)
	}, errTestClosed)
	defer s.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	for deadline := time.Now().Add(3 * time.Second); s.Len() < 1; time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(deadline))
	}
	assert.Equal(t, 1, s.Unserved())
	assert.Equal(t, 0, s.Idle())
	close(release)
	for deadline := time.Now().Add(3 * time.Second); s.Unserved() > 0; time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "marked by Request")
	}
	assert.Equal(t, 1, s.Len())
}
