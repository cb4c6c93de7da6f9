package yaq

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/require"
)

// The daemon's limit is MaxSize, an int64 like every package's, and 0
// means the module's one default.
func TestDaemonMaxSize(t *testing.T) {
	for _, c := range []struct {
		d    Daemon
		want int64
	}{{Daemon{}, ndarray.DefaultMaxSize}, {Daemon{MaxSize: 100}, 100}, {Daemon{MaxSize: 1 << 40}, 1 << 40}} {
		require.Equal(t, c.want, c.d.maxFrame())
	}
}

// A client reads answers up to its MaxSize, which may be raised past the
// default; an answer over it fails matching the shared ErrTooLarge, and the
// next call reconnects.
func TestClientMaxSize(t *testing.T) {
	d, err := NewDaemon("big", `{"protocol": "big", "messages": {"blob": {"request": [{"name": "n", "type": "long"}], "response": "bytes"}}}`)
	require.NoError(t, err)
	require.NoError(t, d.Handle("blob", func(_ context.Context, p []any) (any, error) {
		return bytes.Repeat([]byte{1}, int(p[0].(int64))), nil
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go d.Serve(l)
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	small, err := Dial(ctx, l.Addr().String(), &DialOptions{MaxSize: 1 << 20})
	require.NoError(t, err)
	defer small.Close()
	var b []byte
	err = small.Call(ctx, "blob", []any{int64(2 << 20)}, &b)
	require.Error(t, err)
	require.True(t, errors.Is(err, ndarray.ErrTooLarge) && errors.Is(err, codecerr.ErrTooLarge), "%v", err)
	require.NoError(t, small.Call(ctx, "blob", []any{int64(1000)}, &b), "the next call reconnects")
	require.Len(t, b, 1000)

	over := ndarray.DefaultMaxSize + 1<<20
	def, err := Dial(ctx, l.Addr().String(), nil)
	require.NoError(t, err)
	defer def.Close()
	require.ErrorIs(t, def.Call(ctx, "blob", []any{int64(over)}, &b), ndarray.ErrTooLarge)

	big, err := Dial(ctx, l.Addr().String(), &DialOptions{MaxSize: 2 * ndarray.DefaultMaxSize})
	require.NoError(t, err)
	defer big.Close()
	require.NoError(t, big.Call(ctx, "blob", []any{int64(over)}, &b))
	require.Len(t, b, over)
}
