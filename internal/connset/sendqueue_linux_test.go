package connset

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A peer that stops reading while its answers still fit in the kernel's
// buffers (small answers, a few a second) is cut off within the write
// timeout of stopping, not once megabytes of buffer have filled: what
// counts is what the peer has acknowledged, not what the kernel accepted.
func TestWriteTimeoutCountsWhatThePeerTook(t *testing.T) {
	const wt = 400 * time.Millisecond
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := New((&logLines{}).logf)
	t.Cleanup(s.Close)
	type result struct {
		err     error
		written int64
	}
	ended := make(chan result, 1)
	go s.Serve(l, Limits{WriteTimeout: wt}, func(nc net.Conn) {
		c := Wrap(nc)
		defer c.Close()
		answer := make([]byte, 1<<10)
		for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(2 * time.Millisecond) {
			if _, err := c.Write(answer); err != nil {
				ended <- result{err, c.written}
				return
			}
		}
		ended <- result{nil, c.written}
	}, errTestClosed)
	stuck, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer stuck.Close()
	stuck.(*net.TCPConn).SetReadBuffer(16 << 10)
	start := time.Now()
	select {
	case r := <-ended:
		var te *TimeoutError
		require.ErrorAs(t, r.err, &te)
		took := time.Since(start)
		t.Logf("cut off after %v, %d KiB written", took, r.written>>10)
		assert.Less(t, took, 3*wt)
	case <-time.After(5 * time.Second):
		t.Fatal("the peer that stopped reading was not cut off while its answers fitted in the buffers")
	}
}

// Writing an answer under the write timeout allocates no more than a bare
// writev (whose iovec cache the runtime allocates), and asking the kernel
// what the peer has taken allocates nothing.
func TestWriteAllocatesAsABareWritev(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		peer, err := l.Accept()
		if err == nil {
			io.Copy(io.Discard, peer)
			peer.Close()
		}
	}()
	nc, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	s := New((&logLines{}).logf)
	c := &Conn{Conn: nc, set: s, lim: Limits{}.resolve(), markAt: time.Now()}
	defer c.Close()
	head, body := []byte{0, 0, 0, 5}, []byte("hello")
	var bufs net.Buffers
	write := func() {
		bufs = append(bufs[:0], head, body)
		if _, err := c.WriteBuffers(&bufs); err != nil {
			t.Fatal(err)
		}
	}
	write()
	bare := testing.AllocsPerRun(100, func() {
		bufs = append(bufs[:0], head, body)
		if _, err := bufs.WriteTo(nc); err != nil {
			t.Fatal(err)
		}
	})
	assert.Equal(t, bare, testing.AllocsPerRun(100, write))
	assert.Zero(t, testing.AllocsPerRun(100, func() { c.progress(time.Now(), true) }))
	_, ok := c.queue.unsent(c.Conn)
	assert.True(t, ok, "the kernel says")
}

// A peer that pipelines calls and reads just fast enough to pass the write
// timeout's progress rule cannot make the server queue more than
// MaxSendBacklog and one answer for it: the server reads its next request
// only once the backlog has drained below that. The peer still gets every
// answer, and another client is served meanwhile. The old server queued
// whatever the kernel's send buffer took (megabytes) for as long as the
// peer kept reading 64 KiB per 20 s.
func TestBacklogBounded(t *testing.T) {
	const (
		calls  = 2000
		answer = 512
	)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := New((&logLines{}).logf)
	t.Cleanup(s.Close)
	var mu sync.Mutex
	most := map[string]int{} // per peer, the most unacknowledged after an answer
	go s.Serve(l, Limits{}, func(nc net.Conn) {
		c := Wrap(nc)
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			c.Idle()
			if _, err := br.Peek(1); err != nil {
				return
			}
			c.Request()
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if _, err := c.Write([]byte(line)); err != nil {
				return
			}
			if n, ok := c.queue.unsent(c.Conn); ok {
				mu.Lock()
				most[nc.RemoteAddr().String()] = max(most[nc.RemoteAddr().String()], n)
				mu.Unlock()
			}
		}
	}, errTestClosed)

	slow, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer slow.Close()
	// Its receive buffer is fixed, so that the kernel does not take the
	// answers off the server's hands; 128 KiB, as a smaller window slows
	// loopback to the persist timer's pace.
	slow.(*net.TCPConn).SetReadBuffer(128 << 10)
	line := []byte(strings.Repeat("x", answer-1) + "\n")
	go func() {
		for range calls {
			if _, err := slow.Write(line); err != nil {
				return
			}
		}
	}()
	start := time.Now()
	var got int
	buf := make([]byte, 64<<10)
	served := false
	for got < calls*answer && time.Since(start) < 8*time.Second {
		time.Sleep(50 * time.Millisecond)
		slow.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := io.ReadAtLeast(slow, buf, min(len(buf), calls*answer-got))
		got += n
		require.NoError(t, err)
		if !served && got > calls*answer/4 {
			c, err := net.Dial("tcp", l.Addr().String())
			require.NoError(t, err)
			began := time.Now()
			echo(t, c, "meanwhile\n")
			c.Close()
			assert.Less(t, time.Since(began), 2*time.Second)
			served = true
		}
	}
	assert.Equal(t, calls*answer, got, "every answer arrived")
	assert.True(t, served)
	mu.Lock()
	peak := most[slow.LocalAddr().String()]
	mu.Unlock()
	t.Logf("most queued for the slow peer: %d KiB, in %v", peak>>10, time.Since(start))
	assert.Greater(t, peak, MaxSendBacklog/2, "the slow peer's backlog was sampled and built up")
	assert.LessOrEqual(t, peak, MaxSendBacklog+answer)
}
