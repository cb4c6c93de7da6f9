package yaqrpc

import (
	"context"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/connset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A daemon closes a connection idle past its IdleTimeout; a client made by
// Dial notices before its next request and reconnects, so the call answers
// and nothing is sent twice.
func TestClientReconnectsAfterIdleClose(t *testing.T) {
	_, addr, logs := floodServer(t, func(s *Server) { s.IdleTimeout = 200 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, nil)
	require.NoError(t, err)
	defer c.Close()
	var n int
	require.NoError(t, c.Call(ctx, "ping", nil, &n))
	first := c.conn
	time.Sleep(connset.ProbeIdleAfter + 300*time.Millisecond)
	require.NoError(t, c.Call(ctx, "ping", nil, &n), "the call after an idle close; server log: %s", logs)
	assert.Equal(t, 1, n)
	assert.NotSame(t, first, c.conn, "the client reconnected")
	// Calls in a row do not probe or reconnect.
	second := c.conn
	for i := 0; i < 50; i++ {
		require.NoError(t, c.Call(ctx, "ping", nil, &n))
	}
	assert.Same(t, second, c.conn)
}

// A client made from a connection by NewClient cannot dial again: its call
// after the daemon's idle close fails and says the daemon closed it.
func TestNewClientDoesNotReconnect(t *testing.T) {
	_, addr, _ := floodServer(t, func(s *Server) { s.IdleTimeout = 200 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := Dial(ctx, addr, nil)
	require.NoError(t, err)
	c := newClient(d.conn, nil)
	defer c.Close()
	var n int
	require.NoError(t, c.Call(ctx, "ping", nil, &n))
	time.Sleep(connset.ProbeIdleAfter + 300*time.Millisecond)
	err = c.Call(ctx, "ping", nil, &n)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the daemon closed the connection")
}

// When the daemon closed the idle connection and is gone, the call says
// that connecting again failed, and why, instead of sending on the closed
// connection.
func TestClientSaysWhyItCannotReconnect(t *testing.T) {
	srv, addr, _ := floodServer(t, func(s *Server) { s.IdleTimeout = 100 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, nil)
	require.NoError(t, err)
	defer c.Close()
	var n int
	require.NoError(t, c.Call(ctx, "ping", nil, &n))
	srv.Close()
	time.Sleep(connset.ProbeIdleAfter + 200*time.Millisecond)
	err = c.Call(ctx, "ping", nil, &n)
	require.Error(t, err)
	assert.Regexp(t, `^yaqrpc: 127\.0\.0\.1:\d+ closed the idle connection, and connecting again failed: dial tcp 127\.0\.0\.1:\d+: connect: connection refused$`, err.Error())
}
