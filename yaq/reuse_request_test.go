package yaq

import (
	"context"
	"io"
	"log"
	"net"
	"sync"
	"testing"
	"unsafe"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With ReuseRequestBuffers a connection reads each request's array into
// the memory of the last one, once that was answered, and every answer is
// still the right one, whatever the sizes in turn.
func TestDaemonReusesRequestBuffers(t *testing.T) {
	proto := `{"protocol": "reuse", "types": [` + avro.ArraySchema + `], "messages": {
	  "echo": {"request": [{"name": "a", "type": "ndarray"}], "response": "ndarray"}}}`
	d, err := NewDaemon("reuse", proto)
	require.NoError(t, err)
	d.ErrorLog = log.New(io.Discard, "", 0)
	d.ReuseRequestBuffers = true
	var mu sync.Mutex
	var addrs []uintptr
	require.NoError(t, d.Handle("echo", func(_ context.Context, p []any) (any, error) {
		a := p[0].(*ndarray.Array)
		if len(a.Data) > 0 {
			mu.Lock()
			addrs = append(addrs, uintptr(unsafe.Pointer(&a.Data[0])))
			mu.Unlock()
		}
		return a, nil
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go d.Serve(l)
	defer d.Close()
	c, err := Dial(context.Background(), l.Addr().String(), nil)
	require.NoError(t, err)
	defer c.Close()
	for i, n := range []int{1 << 20, 1 << 20, 1000, 1 << 20, 3 << 20, 3 << 20} {
		v := make([]float64, n/8)
		for k := range v {
			v[k] = float64(i*1000 + k)
		}
		a, _ := ndarray.FromSlice(v)
		var back *ndarray.Array
		require.NoError(t, c.Call(context.Background(), "echo", []any{a}, &back))
		require.True(t, a.Equal(back), "answer %d", i)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, addrs, 6)
	assert.Equal(t, addrs[0], addrs[1], "the second request read into the first's memory")
	assert.Equal(t, addrs[4], addrs[5], "a larger request's memory is kept for the next")
}
