package yaq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
)

// goDaemon serves a small protocol for the Go client's own tests: echo
// (an array), slow (sleeps the given seconds), fail (an error answer) and
// explode (a panicking handler). calls counts the requests that reached a
// handler.
func goDaemon(t *testing.T) (addr string, calls *atomic.Int64) {
	proto := `{"protocol": "gotest", "types": [` + avro.ArraySchema + `], "messages": {
	  "echo": {"request": [{"name": "a", "type": "ndarray"}], "response": "ndarray"},
	  "slow": {"request": [{"name": "seconds", "type": "double"}], "response": "null"},
	  "fail": {"request": [], "response": "null"},
	  "explode": {"request": [], "response": "null"},
	  "shutdown": {"request": [{"name": "restart", "type": "boolean", "default": false}], "response": "null"}}}`
	d, err := NewDaemon("gotest", proto)
	require.NoError(t, err)
	d.ErrorLog = log.New(io.Discard, "", 0)
	calls = new(atomic.Int64)
	require.NoError(t, d.Handle("echo", func(_ context.Context, p []any) (any, error) {
		calls.Add(1)
		return p[0], nil
	}))
	require.NoError(t, d.Handle("slow", func(ctx context.Context, p []any) (any, error) {
		calls.Add(1)
		select {
		case <-time.After(time.Duration(p[0].(float64) * float64(time.Second))):
		case <-ctx.Done():
		}
		return nil, nil
	}))
	require.NoError(t, d.Handle("fail", func(context.Context, []any) (any, error) {
		calls.Add(1)
		return nil, errors.New("ValueError('no light')")
	}))
	require.NoError(t, d.Handle("explode", func(context.Context, []any) (any, error) {
		calls.Add(1)
		panic("handler bug")
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go d.Serve(l)
	t.Cleanup(func() { d.Close() })
	return l.Addr().String(), calls
}

// Calls from many goroutines share one client; each gets its own answer.
func TestClientConcurrentCalls(t *testing.T) {
	addr, calls := goDaemon(t)
	c, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	const workers, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				want := make([]int32, 1+(w*each+i)%300)
				for k := range want {
					want[k] = int32(w*1_000_000 + i*1000 + k)
				}
				a, _ := ndarray.FromSlice(want)
				var back *ndarray.Array
				if err := c.Call(context.Background(), "echo", []any{a}, &back); err != nil {
					errs <- err
					return
				}
				got, err := ndarray.Values[int32](back)
				if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
					errs <- fmt.Errorf("worker %d call %d: got %v, want %v (%v)", w, i, got, want, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.EqualValues(t, workers*each, calls.Load())
}

// A call whose context ends before its answer leaves the client usable: the
// next call reconnects and gets its own answer, not the late one.
func TestClientCancelledCall(t *testing.T) {
	addr, _ := goDaemon(t)
	c, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = c.Call(ctx, "slow", []any{0.3}, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 250*time.Millisecond, "the call waited for the answer")

	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { time.Sleep(30 * time.Millisecond); cancel2() }()
	require.ErrorIs(t, c.Call(ctx2, "slow", []any{0.3}, nil), context.Canceled)

	// Contexts ending around the moment the answer arrives: each call
	// either answers or reports its context's end, and the call after it,
	// with a context that does not end, always answers.
	a, _ := ndarray.FromSlice([]float64{1.5, -2, 3})
	for i := range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i)*5*time.Microsecond)
		err := c.Call(ctx, "echo", []any{a}, nil)
		cancel()
		if err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded, "call %d", i)
		}
		require.NoError(t, c.Call(context.Background(), "echo", []any{a}, nil), "call after %d", i)
	}
	for range 3 {
		var back *ndarray.Array
		require.NoError(t, c.Call(context.Background(), "echo", []any{a}, &back))
		v, _ := ndarray.Values[float64](back)
		assert.Equal(t, []float64{1.5, -2, 3}, v)
	}
}

// Parameters that do not fit their schema, a wrong count or an unknown
// method are refused before anything is sent, with errors naming them.
func TestClientChecksParametersBeforeSending(t *testing.T) {
	addr, calls := goDaemon(t)
	c, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer c.Close()

	err = c.Call(context.Background(), "echo", []any{"not an array"}, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, avro.ErrDoesNotFit)
	assert.Equal(t, `yaq: value does not fit its schema: echo: parameter "a": a string is not a ndarray`, err.Error())

	err = c.Call(context.Background(), "slow", []any{1.0, 2.0}, nil)
	require.Error(t, err)
	assert.Equal(t, "yaq: slow takes 1 parameter ([seconds]), got 2", err.Error())
	assert.ErrorIs(t, err, ErrParams)

	err = c.Call(context.Background(), "nope", nil, nil)
	require.Error(t, err)
	assert.Equal(t, `yaq: gotest has no method "nope"`, err.Error())
	assert.ErrorIs(t, err, ErrNoMethod)
	assert.EqualValues(t, 0, calls.Load())
}

// Error answers and panicking handlers come back as *RemoteError; the
// connection and the daemon go on.
func TestClientRemoteErrors(t *testing.T) {
	addr, calls := goDaemon(t)
	c, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer c.Close()

	var re *RemoteError
	err = c.Call(context.Background(), "fail", nil, nil)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "fail", re.Method)
	assert.Equal(t, "ValueError('no light')", re.Message)

	err = c.Call(context.Background(), "explode", nil, nil)
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Message, "handler bug")

	a, _ := ndarray.FromSlice([]uint8{7})
	var back *ndarray.Array
	require.NoError(t, c.Call(context.Background(), "echo", []any{a}, &back))
	assert.Equal(t, []byte{7}, back.Data)
	assert.EqualValues(t, 3, calls.Load())

	require.NoError(t, c.Close())
	require.ErrorIs(t, c.Call(context.Background(), "echo", []any{a}, nil), net.ErrClosed)
}

// A shutdown lets a call another client has in hand be answered first.
func TestDaemonShutdownAnswersCallsInHand(t *testing.T) {
	addr, _ := goDaemon(t)
	slow, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer slow.Close()
	other, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer other.Close()
	answered := make(chan error, 1)
	go func() { answered <- slow.Call(context.Background(), "slow", []any{0.3}, nil) }()
	time.Sleep(50 * time.Millisecond) // the slow call is in hand
	require.NoError(t, other.Call(context.Background(), "shutdown", []any{false}, nil))
	require.NoError(t, <-answered)
	_, err = net.DialTimeout("tcp", addr, time.Second)
	assert.Error(t, err, "still accepting after shutdown")
}

// Answers go into Go values only where they fit unchanged, and defaults
// are not written into the room a caller's parameter slice has.
func TestClientResultsAndDefaults(t *testing.T) {
	proto := `{"protocol": "numbers", "messages": {
	  "get": {"request": [{"name": "which", "type": "string", "default": "int"}], "response": ["long", "double"]}}}`
	d, err := NewDaemon("numbers", proto)
	require.NoError(t, err)
	answers := map[string]any{"int": int64(300), "negative": int64(-1), "half": 2.5, "nan": math.NaN(), "tiny": 1e-50}
	require.NoError(t, d.Handle("get", func(_ context.Context, p []any) (any, error) { return answers[p[0].(string)], nil }))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go d.Serve(l)
	defer d.Close()
	c, err := Dial(context.Background(), l.Addr().String(), nil)
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()

	room := []any{"not a parameter"}
	var i16 int16
	require.NoError(t, c.Call(ctx, "get", room[:0], &i16))
	assert.Equal(t, int16(300), i16)
	assert.Equal(t, "not a parameter", room[0], "the default was written into the caller's array")

	var u8 uint8
	assert.EqualError(t, c.Call(ctx, "get", []any{"int"}, &u8), "yaq: cannot store 300 in a uint8 without changing it")
	assert.ErrorIs(t, c.Call(ctx, "get", []any{"int"}, &u8), ErrResult)
	var u uint
	assert.EqualError(t, c.Call(ctx, "get", []any{"negative"}, &u), "yaq: cannot store -1 in a uint without changing it")
	var n int
	assert.EqualError(t, c.Call(ctx, "get", []any{"half"}, &n), "yaq: cannot store 2.5 in a int without changing it")
	var f32 float32
	assert.EqualError(t, c.Call(ctx, "get", []any{"tiny"}, &f32), "yaq: cannot store 1e-50 in a float32 without changing it")
	require.NoError(t, c.Call(ctx, "get", []any{"nan"}, &f32))
	assert.True(t, math.IsNaN(float64(f32)))
	var f64 float64
	require.NoError(t, c.Call(ctx, "get", []any{"half"}, &f64))
	assert.Equal(t, 2.5, f64)
}
