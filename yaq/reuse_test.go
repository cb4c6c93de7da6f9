package yaq

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
)

// filled returns an n-byte uint8 array of b.
func filled(n int, b byte) *ndarray.Array {
	a, _ := ndarray.New(ndarray.DTypeOf[uint8](), []int{n}, bytes.Repeat([]byte{b}, n))
	return a
}

// CallReusing reads each answer into the memory of the last: the earlier
// result is overwritten, and a same-sized answer allocates nothing of its
// size; Call leaves its results alone.
func TestCallReusingReadsIntoTheSameMemory(t *testing.T) {
	addr, _ := goDaemon(t)
	c, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	var buf ResultBuffer
	var first, second *ndarray.Array
	require.NoError(t, c.CallReusing(ctx, "echo", []any{filled(1<<20, 1)}, &first, &buf))
	require.Equal(t, filled(1<<20, 1).Data, first.Data)
	require.NoError(t, c.CallReusing(ctx, "echo", []any{filled(1<<20, 2)}, &second, &buf))
	assert.Equal(t, filled(1<<20, 2).Data, second.Data)
	assert.Equal(t, byte(2), first.Data[1000], "the first result is overwritten: its memory was reused")

	for i, n := range []int{10, 1 << 20, 3 << 20, 0, 5, 3 << 20} {
		var back *ndarray.Array
		require.NoError(t, c.CallReusing(ctx, "echo", []any{filled(n, byte(i+3))}, &back, &buf))
		require.Equal(t, filled(n, byte(i+3)).Data, back.Data, "answer %d (%d bytes)", i, n)
	}

	a := filled(1<<20, 7)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		var back *ndarray.Array
		require.NoError(t, c.CallReusing(ctx, "echo", []any{a}, &back, &buf))
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / 10
	t.Logf("allocated %d per call, daemon and client", perCall)
	// The daemon allocates each request; the client nothing of the
	// answer's size.
	assert.Less(t, perCall, uint64(len(a.Data))*3/2)

	var kept, next *ndarray.Array
	require.NoError(t, c.Call(ctx, "echo", []any{filled(100, 8)}, &kept))
	require.NoError(t, c.CallReusing(ctx, "echo", []any{filled(100, 9)}, &next, &buf))
	assert.Equal(t, filled(100, 8).Data, kept.Data)
}
