package yaqrpc

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// A request that cannot be encoded fails with that, at once, and leaves
// the client usable: nothing was written.
func TestCallUnencodableParams(t *testing.T) {
	addr, _ := testServer(t, 0)
	c := dial(t, addr)
	ctx := context.Background()
	err := c.Call(ctx, "echo", []any{make(chan int)}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "encoding the request")
	var sum int64
	require.NoError(t, c.Call(ctx, "add", []any{2, 3}, &sum), "the client still works")
	assert.Equal(t, int64(5), sum)
}

// Responses past the client's limits match the shared sentinels.
func TestCallOverLimitsMatchSentinels(t *testing.T) {
	addr, _ := testServer(t, 0)
	ctx := context.Background()
	c, err := Dial(ctx, addr, &DialOptions{MaxSize: 1 << 10})
	require.NoError(t, err)
	defer c.Close()
	var v any
	err = c.Call(ctx, "echo", []any{bytes.Repeat([]byte{1}, 4<<10)}, &v)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ndarray.ErrTooLarge) && errors.Is(err, codecerr.ErrTooLarge), "%v", err)

	// A response nested past the limit, from a daemon that sends one.
	reply := []byte{0x83, 0xa3, 'v', 'e', 'r', 0xa3, '1', '.', '0', 0xa2, 'i', 'd', 0x01, 0xa6, 'r', 'e', 's', 'u', 'l', 't'}
	reply = append(reply, bytes.Repeat([]byte{0x91}, 600)...)
	reply = append(reply, 0xc0)
	d := dial(t, fakeDaemon(t, reply))
	err = d.Call(ctx, "echo", nil, &v)
	require.Error(t, err)
	assert.ErrorIs(t, err, ndarray.ErrTooDeep)
}

// Notify and Close on a closed client say so as Call does.
func TestClosedClient(t *testing.T) {
	addr, _ := testServer(t, 0)
	c, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	assert.ErrorIs(t, c.Notify(context.Background(), "note", []any{"x"}), net.ErrClosed)
	assert.ErrorIs(t, c.Call(context.Background(), "add", []any{1, 2}, nil), net.ErrClosed)
	assert.NoError(t, c.Close(), "closing twice is no error")
}
