package ndpack_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// hostileTargets are the Go values users decode whole messages into; bare
// msgpack.Unmarshal into each of them dies on some hostile input.
func hostileTargets() map[string]func() any {
	return map[string]func() any{
		"any":                 func() any { var v any; return &v },
		"[]any":               func() any { var v []any; return &v },
		"[]int64":             func() any { var v []int64; return &v },
		"[]*ndarray.Array":    func() any { var v []*ndarray.Array; return &v },
		"map[string]any":      func() any { var v map[string]any; return &v },
		"struct{map[string]}": func() any { var v struct{ Params map[string]any }; return &v },
	}
}

// checkRefused runs decode on in and checks the hostile-input bounds: an
// error, in time, in bounded memory.
func checkRefused(t *testing.T, in hostile.Input, decode func() error) error {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := hostile.CPUTime()
	err := decode()
	took := hostile.CPUTime() - start
	runtime.ReadMemStats(&after)
	t.Logf("%d-byte input: %v, %d bytes allocated: %v", len(in.Bytes), took, after.TotalAlloc-before.TotalAlloc, err)
	require.Error(t, err)
	assert.Less(t, took, hostile.MaxTime)
	assert.LessOrEqual(t, after.TotalAlloc-before.TotalAlloc, hostile.MaxAlloc(in), "bytes allocated")
	return err
}

func TestUnmarshalMessageRefusesHostileInput(t *testing.T) {
	for _, in := range hostile.Inputs() {
		for name, target := range hostileTargets() {
			t.Run(in.Name+"/"+name, func(t *testing.T) {
				v := target()
				err := checkRefused(t, in, func() error { return ndpack.MessageOptions{}.UnmarshalMessage(in.Bytes, v) })
				assert.True(t, errors.Is(err, ndarray.ErrTruncated) || errors.Is(err, ndarray.ErrTooDeep) ||
					errors.Is(err, ndarray.ErrTooLarge), "%v", err)
				var e *ndarray.Error
				require.ErrorAs(t, err, &e)
				assert.Regexp(t, `^ndpack: `, err.Error())
			})
			t.Run("stream/"+in.Name+"/"+name, func(t *testing.T) {
				v := target()
				dec := ndpack.NewMessageDecoder(bytes.NewReader(in.Bytes))
				err := checkRefused(t, in, func() error { return dec.Decode(v) })
				// A stream cannot tell a lie about length from a message
				// still arriving: a claim past the size limit is too large,
				// one within it is cut short.
				assert.True(t, errors.Is(err, ndarray.ErrTooLarge) || errors.Is(err, ndarray.ErrTruncated) ||
					errors.Is(err, ndarray.ErrTooDeep), "%v", err)
			})
		}
	}
}

func TestUnmarshalMessageLimits(t *testing.T) {
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	msg := mustMarshalMessage(t, map[string]any{"id": 1, "result": []any{a, "x"}})

	var m map[string]any
	require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(msg, &m))
	got := m["result"].([]any)[0].(*ndarray.Array)
	assert.True(t, got.Equal(a))

	// The message nests 2 levels (a map holding an array).
	require.NoError(t, ndpack.MessageOptions{MaxDepth: 2}.UnmarshalMessage(msg, &m))
	err := ndpack.MessageOptions{MaxDepth: 1}.UnmarshalMessage(msg, &m)
	assert.ErrorIs(t, err, ndarray.ErrTooDeep)
	assert.EqualError(t, err, "ndpack: nested too deep at byte 12: arrays and maps nest more than 1 deep")

	err = ndpack.MessageOptions{MaxSize: int64(len(msg) - 1)}.UnmarshalMessage(msg, &m)
	assert.ErrorIs(t, err, ndarray.ErrTooLarge)
	require.NoError(t, ndpack.MessageOptions{MaxSize: int64(len(msg))}.UnmarshalMessage(msg, &m))

	// Many one-entry maps would cost 117 times their bytes decoded:
	// refused once past 48 times plus 4 MiB, unless the limit is raised.
	tiny := hostile.TinyMapsRequest(1 << 20)
	err = ndpack.MessageOptions{}.UnmarshalMessage(tiny, &m)
	assert.ErrorIs(t, err, ndarray.ErrTooLarge)
	assert.Regexp(t, `^ndpack: too large: decoding \d+ bytes would allocate about \d+, more than 48 times as much`, err.Error())
	require.NoError(t, ndpack.MessageOptions{MaxExpansion: 200}.UnmarshalMessage(tiny, &m))
	assert.Len(t, m["params"].([]any)[0], 1<<20)

	// Exactly one message: bytes after it are refused, a cut one is
	// truncated.
	err = ndpack.MessageOptions{}.UnmarshalMessage(append(msg, 0xc0), &m)
	assert.ErrorIs(t, err, ndarray.ErrMalformed)
	assert.EqualError(t, err, fmt.Sprintf("ndpack: malformed message at byte %d: 1 byte after the message", len(msg)))
	assert.ErrorIs(t, ndpack.MessageOptions{}.UnmarshalMessage(msg[:len(msg)-1], &m), ndarray.ErrTruncated)
	assert.ErrorIs(t, ndpack.MessageOptions{}.UnmarshalMessage(nil, &m), ndarray.ErrTruncated)

	// A bad ext 110 value inside is reported as such.
	bad := bytes.Replace(msg, []byte("<i2"), []byte("<i3"), 1)
	err = ndpack.MessageOptions{}.UnmarshalMessage(bad, &m)
	assert.ErrorIs(t, err, ndarray.ErrMalformed)
	assert.ErrorIs(t, err, ndarray.ErrDType)
}

func TestMessageDecoderStream(t *testing.T) {
	a, _ := ndarray.FromSlice([]float64{1, 2})
	var stream bytes.Buffer
	for i := range 3 {
		stream.Write(mustMarshalMessage(t, map[string]any{"id": i, "a": a}))
	}
	deepAt := int64(stream.Len())
	stream.Write(hostile.Nested(600))
	dec := ndpack.NewMessageDecoder(&stream)
	for i := range 3 {
		var m struct {
			ID int            `msgpack:"id"`
			A  *ndarray.Array `msgpack:"a"`
		}
		require.NoError(t, dec.Decode(&m))
		assert.Equal(t, i, m.ID)
		assert.True(t, m.A.Equal(a))
	}
	var v any
	err := dec.Decode(&v)
	assert.ErrorIs(t, err, ndarray.ErrTooDeep)
	// Offsets count from the start of the stream.
	var e *ndarray.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, deepAt+512, e.Offset)

	dec = ndpack.NewMessageDecoder(bytes.NewReader(nil))
	assert.Equal(t, io.EOF, dec.Decode(&v))

	dec = ndpack.NewMessageDecoder(bytes.NewReader([]byte{0xc6, 0, 0, 1, 0}))
	dec.Options.MaxSize = 100
	err = dec.Decode(&v)
	assert.ErrorIs(t, err, ndarray.ErrTooLarge)
	assert.EqualError(t, err, "ndpack: too large at byte 0: message exceeds the limit of 100 bytes: bin claims 256, only 95 bytes remain (MessageOptions.MaxSize)")
}

// mustMarshalMessage encodes v with map keys sorted, so that the byte
// offsets tests expect do not depend on Go's map order.
func mustMarshalMessage(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	enc.SetSortMapKeys(true)
	require.NoError(t, enc.Encode(v))
	return b.Bytes()
}

// Maps of a dialect's size nested in each other, each with its child last:
// finding the dialects' later markers costs one walk of the message, not
// one per level (500 walks of the list at the bottom).
func TestUnmarshalMessageFindsLaterMarkersInLinearTime(t *testing.T) {
	list := append([]byte{0xdd, 0, 0x10, 0, 0}, bytes.Repeat([]byte{0x01}, 1<<20)...)
	var nested []byte
	for range 500 {
		nested = append(nested, 0x83, 0xa1, 'a', 0x01, 0xa1, 'b', 0x02, 0xa1, 'c')
	}
	nested = append(nested, list...)
	took := func(msg []byte) time.Duration {
		best := time.Hour
		for range 3 {
			start := time.Now()
			var v any
			require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(msg, &v))
			best = min(best, time.Since(start))
		}
		return best
	}
	if n, l := took(nested), took(list); n > 10*l {
		t.Errorf("%v for the nested maps, %v for the list alone", n, l)
	}
}
