package yaqrpc

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Shutdown lets the request in hand be answered, closes idle connections
// and makes Serve return net.ErrClosed; with a context that ends first,
// it closes everything and says so.
func TestShutdown(t *testing.T) {
	for _, patient := range []bool{true, false} {
		srv := &Server{}
		started := make(chan struct{})
		srv.Handle("slow", func(context.Context, *Request) (any, error) {
			close(started)
			time.Sleep(300 * time.Millisecond)
			return "done", nil
		})
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		busy := dial(t, l.Addr().String())
		idle := dial(t, l.Addr().String())
		var rpcErr *Error
		require.ErrorAs(t, idle.Call(context.Background(), "nothing", nil, nil), &rpcErr) // connected and answered
		answer := make(chan error, 1)
		var got string
		go func() { answer <- busy.Call(context.Background(), "slow", nil, &got) }()
		<-started
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		if !patient {
			ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
		}
		err = srv.Shutdown(ctx)
		cancel()
		if patient {
			require.NoError(t, err)
			require.NoError(t, <-answer)
			assert.Equal(t, "done", got)
		} else {
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Error(t, <-answer)
		}
		assert.ErrorIs(t, <-served, net.ErrClosed)
		err = idle.Call(context.Background(), "nothing", nil, nil)
		require.Error(t, err)
		assert.False(t, errors.As(err, &rpcErr), "the idle connection is closed, not answered: %v", err)
		_, err = net.DialTimeout("tcp", l.Addr().String(), time.Second)
		assert.Error(t, err, "still accepting")
	}
}
