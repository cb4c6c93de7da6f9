package yaqrpc

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// filled returns an n-byte uint8 array of b.
func filled(n int, b byte) *ndarray.Array {
	a, _ := ndarray.New(ndarray.DTypeOf[uint8](), []int{n}, bytes.Repeat([]byte{b}, n))
	return a
}

// CallReusing reads each response into the memory of the last: the earlier
// result is overwritten, and a same-sized answer allocates nothing of its
// size.
func TestCallReusingReadsIntoTheSameMemory(t *testing.T) {
	addr, _ := testServer(t, 0)
	c := dial(t, addr)
	ctx := context.Background()
	var buf ResultBuffer
	var first *ndarray.Array
	require.NoError(t, c.CallReusing(ctx, "echo", []any{filled(1<<20, 1)}, &first, &buf))
	require.Equal(t, filled(1<<20, 1).Data, first.Data)

	var second *ndarray.Array
	require.NoError(t, c.CallReusing(ctx, "echo", []any{filled(1<<20, 2)}, &second, &buf))
	assert.Equal(t, filled(1<<20, 2).Data, second.Data)
	assert.Equal(t, byte(2), first.Data[1000], "the first result is overwritten: its memory was reused")

	// Sizes vary: smaller answers fit, a larger one gets new memory that
	// the buffer then keeps.
	for i, n := range []int{10, 1 << 20, 3 << 20, 5, 3 << 20} {
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
	// The server allocates each request (it does not reuse here); the
	// client allocates nothing of the answer's size.
	perCall := (after.TotalAlloc - before.TotalAlloc) / 10
	t.Logf("allocated %d per call", perCall)
	assert.Less(t, perCall, uint64(len(a.Data))*3/2, "allocated per 1 MiB call, both sides")

	// Call, unlike CallReusing, leaves the results alone.
	var kept, next *ndarray.Array
	require.NoError(t, c.Call(ctx, "echo", []any{filled(100, 8)}, &kept))
	require.NoError(t, c.CallReusing(ctx, "echo", []any{filled(100, 9)}, &next, &buf))
	assert.Equal(t, filled(100, 8).Data, kept.Data)
}

// With many goroutines calling on one client, some lending buffers and
// some not, no result lands in memory that another call then reuses.
func TestCallReusingConcurrentCalls(t *testing.T) {
	addr, _ := testServer(t, 0)
	c := dial(t, addr)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf ResultBuffer
			var kept []*ndarray.Array
			for i := range 30 {
				v := byte(g*31 + i)
				var back *ndarray.Array
				var err error
				if g%2 == 0 {
					err = c.CallReusing(ctx, "echo", []any{filled(64<<10+i, v)}, &back, &buf)
				} else {
					err = c.Call(ctx, "echo", []any{filled(64<<10+i, v)}, &back)
					kept = append(kept, back)
				}
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(back.Data, filled(64<<10+i, v).Data) {
					errs <- fmt.Errorf("goroutine %d call %d: wrong answer", g, i)
					return
				}
			}
			// Results of Call are still intact after every other call.
			for i, a := range kept {
				if !bytes.Equal(a.Data, filled(64<<10+i, byte(g*31+i)).Data) {
					errs <- fmt.Errorf("goroutine %d: result %d was overwritten", g, i)
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
}

// Reusing on both sides (CallReusing against ReuseRequestBuffers), an echo
// of a 1 MiB <f8 array allocates nothing of its size on either side, and
// the array comes back aligned for typed access: the reader lays each
// message out so that its array's bytes land aligned, instead of the
// decoder copying them there.
func TestReusingBothSidesAllocatesNoPayload(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own account")
	}
	addr, _ := testServer(t, 0, func(s *Server) { s.ReuseRequestBuffers = true })
	c := dial(t, addr)
	ctx := context.Background()
	a, err := ndarray.New(ndarray.DTypeOf[float64](), []int{1 << 17}, bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 1<<17))
	require.NoError(t, err)
	var buf ResultBuffer
	var back *ndarray.Array
	for range 3 { // buffers grown to size on both sides
		require.NoError(t, c.CallReusing(ctx, "echo", []any{a}, &back, &buf))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		require.NoError(t, c.CallReusing(ctx, "echo", []any{a}, &back, &buf))
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / 10
	t.Logf("allocated %d per 1 MiB call, both sides", perCall)
	assert.Less(t, perCall, uint64(32<<10))
	assert.True(t, a.Equal(back))
	assert.True(t, back.Aligned(), "the answer's data is aligned")
}
