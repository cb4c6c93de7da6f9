package connset

import (
	"io"
	"net"
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
