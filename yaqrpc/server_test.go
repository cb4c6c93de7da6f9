package yaqrpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// testServer serves a few methods on a loopback port.
func testServer(t testing.TB, maxMessage int64, configure ...func(*Server)) (addr string, notified <-chan string) {
	srv := &Server{}
	srv.MaxSize = maxMessage
	for _, f := range configure {
		f(srv)
	}
	srv.ErrorLog = log.New(io.Discard, "", 0)
	notes := make(chan string, 10)
	srv.Handle("echo", func(_ context.Context, r *Request) (any, error) {
		v, _ := r.Param(0, "value")
		return v, nil
	})
	srv.Handle("add", func(_ context.Context, r *Request) (any, error) {
		a, err := ParamAs[int64](r, 0, "a")
		if err != nil {
			return nil, err
		}
		b, err := ParamAs[int64](r, 1, "b")
		if err != nil {
			return nil, err
		}
		return a + b, nil
	})
	srv.Handle("note", func(_ context.Context, r *Request) (any, error) {
		s, _ := ParamAs[string](r, 0, "text")
		notes <- s
		return nil, nil
	})
	srv.Handle("fail", func(context.Context, *Request) (any, error) { return nil, errors.New("the lamp is broken") })
	srv.Handle("panic", func(context.Context, *Request) (any, error) { panic("boom") })
	srv.Handle("sleep", func(ctx context.Context, r *Request) (any, error) {
		time.Sleep(200 * time.Millisecond)
		return "slept", nil
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), notes
}

func dial(t testing.TB, addr string) *Client {
	c, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCalls(t *testing.T) {
	addr, notes := testServer(t, 0)
	c := dial(t, addr)
	ctx := context.Background()

	var sum int64
	require.NoError(t, c.Call(ctx, "add", []any{2, 40}, &sum))
	assert.Equal(t, int64(42), sum)
	require.NoError(t, c.Call(ctx, "add", map[string]any{"a": uint8(200), "b": -1}, &sum))
	assert.Equal(t, int64(199), sum)

	a, _ := ndarray.FromSlice([]float32{1.5, -2}, 2, 1)
	var back *ndarray.Array
	require.NoError(t, c.Call(ctx, "echo", []any{a}, &back))
	assert.True(t, a.Equal(back))

	var anyBack any
	require.NoError(t, c.Call(ctx, "echo", []any{nil}, &anyBack))
	assert.Nil(t, anyBack)

	var rpcErr *Error
	err := c.Call(ctx, "nope", nil, nil)
	require.True(t, errors.As(err, &rpcErr))
	assert.Equal(t, CodeMethodNotFound, rpcErr.Code)
	err = c.Call(ctx, "add", []any{"x", 1}, nil)
	require.True(t, errors.As(err, &rpcErr))
	assert.Equal(t, CodeInvalidParams, rpcErr.Code)
	assert.Contains(t, rpcErr.Message, `parameter 0 ("a") is a string`)
	err = c.Call(ctx, "add", []any{1}, nil)
	require.True(t, errors.As(err, &rpcErr))
	assert.Equal(t, CodeInvalidParams, rpcErr.Code)
	err = c.Call(ctx, "fail", nil, nil)
	require.True(t, errors.As(err, &rpcErr))
	assert.Equal(t, &Error{Code: CodeInternalError, Message: "the lamp is broken"}, rpcErr)
	err = c.Call(ctx, "panic", nil, nil)
	require.True(t, errors.As(err, &rpcErr))
	assert.Equal(t, CodeInternalError, rpcErr.Code)

	// A notification runs and is never answered: the next answer is the
	// next call's.
	require.NoError(t, c.Notify(ctx, "note", []any{"hello"}))
	assert.Equal(t, "hello", <-notes)
	require.NoError(t, c.Call(ctx, "add", []any{1, 1}, &sum))
	assert.Equal(t, int64(2), sum)

	// A cancelled call returns at once; the client stays usable.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, c.Call(short, "sleep", nil, nil), context.DeadlineExceeded)
	var s string
	require.NoError(t, c.Call(ctx, "sleep", nil, &s))
	assert.Equal(t, "slept", s)
}

func TestConcurrentClients(t *testing.T) {
	addr, _ := testServer(t, 0)
	const clients, calls = 50, 100
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := Dial(context.Background(), addr, nil)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			// Half the calls in parallel on one connection, to mix ids.
			var inner sync.WaitGroup
			for j := 0; j < calls; j++ {
				inner.Add(1)
				go func(j int) {
					defer inner.Done()
					want := fmt.Sprintf("client %d call %d", i, j)
					var got string
					if err := c.Call(context.Background(), "echo", []any{want}, &got); err != nil {
						errs <- err
					} else if got != want {
						errs <- fmt.Errorf("crossed response: sent %q, got %q", want, got)
					}
				}(j)
				if j%2 == 0 {
					inner.Wait()
				}
			}
			inner.Wait()
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLargeArrayRoundTrip(t *testing.T) {
	addr, _ := testServer(t, 0)
	c := dial(t, addr)
	a, err := ndarray.Zeros(ndarray.DTypeOf[float64](), 4<<20) // 32 MiB
	require.NoError(t, err)
	for i := 0; i < len(a.Data); i += 4093 {
		a.Data[i] = byte(i)
	}
	var back *ndarray.Array
	require.NoError(t, c.Call(context.Background(), "echo", []any{a}, &back))
	assert.True(t, a.Equal(back))
}

// rawConn sends bytes the client would never write.
func rawConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	return conn, bufio.NewReader(conn)
}

func readResponse(t *testing.T, br *bufio.Reader) map[string]any {
	var m map[string]any
	require.NoError(t, msgpack.NewDecoder(br).Decode(&m))
	return m
}

func errorCode(m map[string]any) any {
	e, _ := m["error"].(map[string]any)
	return e["code"]
}

func TestBadRequestsKeepTheConnection(t *testing.T) {
	addr, _ := testServer(t, 0)
	conn, br := rawConn(t, addr)
	for _, c := range []struct {
		msg  any
		code int
		id   any
	}{
		{[]any{1, 2}, CodeInvalidRequest, nil},
		{map[string]any{"ver": "1.0", "method": "echo", "id": 1.5}, CodeInvalidRequest, nil},
		{map[string]any{"ver": "2.0", "method": "echo", "id": 7}, CodeInvalidRequest, int8(7)},
		{map[string]any{"method": "echo", "id": "a"}, CodeInvalidRequest, "a"},
		{map[string]any{"ver": "1.0", "method": 3, "id": 8}, CodeInvalidRequest, int8(8)},
		{map[string]any{"ver": "1.0", "method": "echo", "params": 3, "id": 9}, CodeInvalidRequest, int8(9)},
		{map[string]any{"ver": "1.0", "method": "nope", "id": 10}, CodeMethodNotFound, int8(10)},
	} {
		b, _ := msgpack.Marshal(c.msg)
		_, err := conn.Write(b)
		require.NoError(t, err)
		m := readResponse(t, br)
		assert.EqualValues(t, c.code, errorCode(m), "%v", c.msg)
		assert.Equal(t, c.id, m["id"], "%v", c.msg)
	}
	// An ext 110 object that does not decode is a parse error.
	bad := []byte{0x81, 0xa3, 'v', 'e', 'r', 0xc7, 3, 110, 1, 2, 3}
	conn.Write(bad)
	assert.EqualValues(t, CodeParseError, errorCode(readResponse(t, br)))
	// The connection still serves.
	b, _ := msgpack.Marshal(map[string]any{"ver": "1.0", "method": "echo", "params": []any{"ok"}, "id": 11})
	conn.Write(b)
	assert.Equal(t, "ok", readResponse(t, br)["result"])
}

func TestFramingErrorsCloseTheConnection(t *testing.T) {
	addr, _ := testServer(t, 1<<20)
	for name, c := range map[string]struct {
		in   []byte
		code int
	}{
		"garbage":                       {[]byte{0xc1, 0xff, 0x00}, CodeParseError},
		"str claims 100 MiB over 1 MiB": {[]byte{0x81, 0xdb, 0x06, 0x40, 0, 0}, CodeInvalidRequest},
		"map claims 2^32 entries":       {[]byte{0xdf, 0xff, 0xff, 0xff, 0xff}, CodeInvalidRequest},
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			conn, br := rawConn(t, addr)
			conn.Write(c.in)
			m := readResponse(t, br)
			assert.EqualValues(t, c.code, errorCode(m))
			assert.Nil(t, m["id"])
			_, err := br.ReadByte()
			assert.ErrorIs(t, err, io.EOF, "the server closes the connection")
			runtime.ReadMemStats(&after)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "nothing is allocated for the claim")
		})
	}
	// Truncated: the peer goes away mid-message; nothing is answered.
	conn, br := rawConn(t, addr)
	conn.Write([]byte{0x84, 0xa3, 'v', 'e'})
	conn.(*net.TCPConn).CloseWrite()
	_, err := br.ReadByte()
	assert.ErrorIs(t, err, io.EOF)

	// After all of it the server still answers.
	c := dial(t, addr)
	var s string
	require.NoError(t, c.Call(context.Background(), "echo", []any{"alive"}, &s))
	assert.Equal(t, "alive", s)
}

func TestClientFailsPendingCallsWhenTheServerGoes(t *testing.T) {
	addr, _ := testServer(t, 0)
	c := dial(t, addr)
	done := make(chan error)
	go func() { done <- c.Call(context.Background(), "sleep", nil, nil) }()
	time.Sleep(50 * time.Millisecond)
	c.conn.Close()
	select {
	case err := <-done:
		assert.Error(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("a pending call was never released")
	}
	assert.Error(t, c.Call(context.Background(), "echo", nil, nil))
}

// A call whose context has already ended, or ends while it waits, returns
// ctx.Err() and leaves the client usable.
func TestCancelledCallsLeaveTheClientUsable(t *testing.T) {
	addr, _ := testServer(t, 0)
	c := dial(t, addr)
	var sum int64

	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	err := c.Call(expired, "add", []any{1, 2}, &sum)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	assert.ErrorIs(t, c.Call(cancelled, "add", []any{1, 2}, &sum), context.Canceled)

	short, cancel3 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel3()
	var slept string
	assert.ErrorIs(t, c.Call(short, "sleep", nil, &slept), context.DeadlineExceeded)

	for i := range 5 {
		require.NoError(t, c.Call(context.Background(), "add", []any{i, 2}, &sum))
		assert.Equal(t, int64(i+2), sum)
	}
	// The late answer to the timed-out call was dropped, not delivered to
	// a later call.
	require.NoError(t, c.Call(context.Background(), "sleep", nil, &slept))
	assert.Equal(t, "slept", slept)
}

// With ReuseRequestBuffers, a request's arrays are valid until its answer
// is written: echoing arrays of changing contents and sizes back to back
// returns each one intact.
func TestReuseRequestBuffers(t *testing.T) {
	addr, _ := testServer(t, 0, func(s *Server) { s.ReuseRequestBuffers = true })
	c := dial(t, addr)
	for i, n := range []int{1 << 20, 100, 1 << 16, 1 << 20, 3} {
		data := make([]byte, n)
		for k := range data {
			data[k] = byte(i*31 + k)
		}
		a, _ := ndarray.New(ndarray.DTypeOf[uint8](), []int{n}, data)
		var back *ndarray.Array
		require.NoError(t, c.Call(context.Background(), "echo", []any{a}, &back))
		assert.True(t, a.Equal(back), "call %d", i)
	}
}
