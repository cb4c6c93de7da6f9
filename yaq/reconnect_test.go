package yaq

import (
	"context"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/connset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A daemon closes a connection idle past its IdleTimeout; the client
// notices before its next call and reconnects, as yaqc does, so the call
// answers, and calls in a row neither probe nor reconnect.
func TestClientReconnectsAfterIdleClose(t *testing.T) {
	_, addr, logs := floodDaemon(t, func(d *Daemon) { d.IdleTimeout = 200 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, nil)
	require.NoError(t, err)
	defer c.Close()
	var n int
	require.NoError(t, c.Call(ctx, "ping", nil, &n))
	first := c.conn
	time.Sleep(connset.ProbeIdleAfter + 300*time.Millisecond)
	require.NoError(t, c.Call(ctx, "ping", nil, &n), "the call after an idle close; daemon log: %s", logs)
	assert.Equal(t, 1, n)
	assert.NotSame(t, first, c.conn, "the client reconnected")
	second := c.conn
	for range 50 {
		require.NoError(t, c.Call(ctx, "ping", nil, &n))
	}
	assert.Same(t, second, c.conn)
	// A live connection idle as long is kept.
	_, addr2, _ := floodDaemon(t, func(d *Daemon) {})
	c2, err := Dial(ctx, addr2, nil)
	require.NoError(t, err)
	defer c2.Close()
	require.NoError(t, c2.Call(ctx, "ping", nil, &n))
	kept := c2.conn
	time.Sleep(connset.ProbeIdleAfter + 100*time.Millisecond)
	require.NoError(t, c2.Call(ctx, "ping", nil, &n))
	assert.Same(t, kept, c2.conn, "a live connection is not replaced")
}
