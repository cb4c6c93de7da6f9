package connset

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// PeerClosed tells a peer that hung up from one that is quiet, looks past
// what skippable allows and stops at anything else.
func TestPeerClosed(t *testing.T) {
	zeros := func(b []byte) bool {
		for _, c := range b {
			if c != 0 {
				return false
			}
		}
		return true
	}
	for _, c := range []struct {
		name      string
		sent      []byte
		hangUp    bool
		skippable func([]byte) bool
		want      bool
	}{
		{"quiet", nil, false, nil, false},
		{"hung up", nil, true, nil, true},
		{"sent something, then hung up", []byte{1}, true, nil, false},
		{"skippable bytes, then hung up", []byte{0, 0, 0, 0, 0, 0, 0, 0}, true, zeros, true},
		{"skippable bytes, quiet", []byte{0, 0, 0, 0}, false, zeros, false},
		{"skippable, then something", []byte{0, 0, 0, 0, 7}, true, zeros, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := tcpPair(t)
			if len(c.sent) > 0 {
				_, err := b.Write(c.sent)
				require.NoError(t, err)
			}
			if c.hangUp {
				b.Close()
			}
			time.Sleep(20 * time.Millisecond) // let the bytes and the FIN arrive
			start := time.Now()
			assert.Equal(t, c.want, PeerClosed(a, bufio.NewReader(a), c.skippable))
			assert.Less(t, time.Since(start), 100*time.Millisecond)
		})
	}
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	a, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	b := <-accepted
	require.NotNil(t, b)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// On TCP the kernel is asked (no deadline, so no dependence on how soon
// the checking goroutine runs); a connection that is no socket falls back
// to the read with a deadline, with the same answers.
func TestPeerClosedAsksTheSocket(t *testing.T) {
	a, b := tcpPair(t)
	if !canPeek {
		assert.Equal(t, socketUnknown, peekSocket(a))
		t.Skip("this system's sockets are checked with a deadline")
	}
	assert.Equal(t, socketQuiet, peekSocket(a), "quiet")
	_, err := b.Write([]byte{9})
	require.NoError(t, err)
	for deadline := time.Now().Add(2 * time.Second); peekSocket(a) == socketQuiet && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, socketReadable, peekSocket(a))
	assert.Equal(t, socketReadable, peekSocket(a), "peeking takes nothing")
	b.Close()
	br := bufio.NewReader(a)
	_, err = br.ReadByte()
	require.NoError(t, err)
	for deadline := time.Now().Add(2 * time.Second); peekSocket(a) != socketClosed && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, socketClosed, peekSocket(a))
	assert.True(t, PeerClosed(a, br, nil))

	p, q := net.Pipe()
	defer p.Close()
	assert.Equal(t, socketUnknown, peekSocket(p))
	assert.False(t, PeerClosed(p, bufio.NewReader(p), nil), "a quiet pipe")
	q.Close()
	assert.True(t, PeerClosed(p, bufio.NewReader(p), nil), "a pipe whose other end closed")
}
