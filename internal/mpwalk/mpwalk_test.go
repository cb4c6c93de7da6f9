package mpwalk

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

func TestReadSplitsAStream(t *testing.T) {
	var stream bytes.Buffer
	values := []any{
		map[string]any{"ver": "1.0", "method": "measure", "id": 7, "params": []any{1, "x", nil, true, 2.5}},
		"hello", int64(-1 << 40), []byte{1, 2, 3}, map[string]any{"nested": []any{[]any{[]any{}}}},
	}
	var want [][]byte
	for _, v := range values {
		b, err := msgpack.Marshal(v)
		require.NoError(t, err)
		want = append(want, b)
		stream.Write(b)
	}
	stream.Write([]byte{0xc7, 3, 110, 1, 2, 3}) // an ext
	want = append(want, []byte{0xc7, 3, 110, 1, 2, 3})
	r := bufio.NewReader(&stream)
	for _, w := range want {
		got, err := Read(r, 1<<20, Limits{MaxDepth: 512})
		require.NoError(t, err)
		assert.Equal(t, w, got)
	}
	_, err := Read(r, 1<<20, Limits{MaxDepth: 512})
	assert.Equal(t, io.EOF, err)
}

func TestReadRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		in   []byte
		max  int64
		want any
	}{
		"str over the limit":      {[]byte{0xdb, 0, 1, 0, 0}, 1000, &BudgetError{}},
		"4 GiB bin in 6 bytes":    {[]byte{0xc6, 0xff, 0xff, 0xff, 0xff, 0}, 64 << 20, &BudgetError{}},
		"huge map claim":          {[]byte{0xdf, 0x7f, 0xff, 0xff, 0xff}, 64 << 20, &BudgetError{}},
		"never-used byte":         {[]byte{0x91, 0xc1}, 100, &InvalidError{}},
		"truncated":               {[]byte{0x92, 0x01}, 100, io.ErrUnexpectedEOF},
		"truncated inside a str":  {[]byte{0xa5, 'a', 'b'}, 100, io.ErrUnexpectedEOF},
		"deep nesting, no memory": {bytes.Repeat([]byte{0x91}, 100000), 1 << 20, &DepthError{}},
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Read(bufio.NewReader(bytes.NewReader(c.in)), c.max, Limits{MaxDepth: 512})
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			switch w := c.want.(type) {
			case *BudgetError:
				assert.True(t, errors.As(err, &w), "%v", err)
			case *InvalidError:
				assert.True(t, errors.As(err, &w), "%v", err)
			case *DepthError:
				assert.True(t, errors.As(err, &w), "%v", err)
			default:
				assert.ErrorIs(t, err, c.want.(error))
			}
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20)+uint64(len(c.in))*4)
		})
	}
	var be *BudgetError
	_, err := Read(bufio.NewReader(bytes.NewReader([]byte{0xc6, 0xff, 0xff, 0xff, 0xff})), 1000, Limits{MaxDepth: 512})
	require.True(t, errors.As(err, &be))
	assert.Equal(t, "bin claims 4294967295, only 995 bytes remain", be.Error())
}

func TestDepthLimit(t *testing.T) {
	nest := func(levels int, leaf ...byte) []byte {
		return append(bytes.Repeat([]byte{0x91}, levels-1), leaf...)
	}
	// 512 levels: 511 one-element arrays around an empty one.
	n, err := Len(nest(512, 0x90), Limits{MaxDepth: 512})
	require.NoError(t, err)
	assert.Equal(t, 512, n)
	// One more level fails at the container that goes past the limit,
	// before the rest of the input is looked at.
	deep := nest(513, 0x90)
	_, err = Len(deep, Limits{MaxDepth: 512})
	var de *DepthError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, &DepthError{Limit: 512, Offset: 512}, de)
	assert.Equal(t, "arrays and maps nested more than 512 deep (at byte 512)", de.Error())
	// Scalars do not add depth; maps count like arrays.
	_, err = Len([]byte{0x81, 0xa1, 'k', 0x81, 0xa1, 'k', 0x91, 0x01}, Limits{MaxDepth: 3})
	require.NoError(t, err)
	_, err = Len([]byte{0x81, 0xa1, 'k', 0x81, 0xa1, 'k', 0x91, 0x01}, Limits{MaxDepth: 2})
	require.ErrorAs(t, err, &de)
	assert.Equal(t, int64(6), de.Offset)
	// Siblings return to the parent's depth: [[[]], [[]], 1] is 3 deep.
	sib := []byte{0x93, 0x91, 0x90, 0x91, 0x90, 0x01}
	n, err = Len(sib, Limits{MaxDepth: 3})
	require.NoError(t, err)
	assert.Equal(t, len(sib), n)
	// A stream of 2,000,000 one-element arrays is refused within the first
	// kilobyte, with no memory growing with the input.
	huge := nest(2000000, 0x01)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := Read(bufio.NewReader(bytes.NewReader(huge)), 64<<20, Limits{MaxDepth: 512})
	runtime.ReadMemStats(&after)
	require.ErrorAs(t, err, &de)
	assert.Less(t, len(got), 1024)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10))
	// Without a limit the same input is one value, walked in constant
	// stack.
	n, err = Len(huge, Limits{})
	require.NoError(t, err)
	assert.Equal(t, len(huge), n)
}

// listOf is an array32 of n copies of item.
func listOf(n int, item []byte) []byte {
	b := []byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
	return append(b, bytes.Repeat(item, n)...)
}

// Shapes of data, from what services send to what attackers send.
var shapes = map[string][]byte{
	"small ints":    {0x07},
	"floats":        {0xcb, 1, 2, 3, 4, 5, 6, 7, 8},
	"strings":       append([]byte{0xa5}, "hello"...),
	"records":       append(append([]byte{0x82, 0xa4}, "name"...), append([]byte{0xa3, 'c', 'h', '0', 0xa5}, append([]byte("units"), 0xa1, 'V')...)...),
	"xyz records":   {0x83, 0xa1, 'x', 0x01, 0xa1, 'y', 0x02, 0xa1, 'z', 0x03},
	"pairs":         {0x92, 0x01, 0x02},
	"16-entry maps": append([]byte{0xde, 0, 16}, bytes.Repeat([]byte{0xa1, 'k', 0x01}, 16)...),
	"nils":          {0xc0},
	"bins":          {0xc4, 3, 1, 2, 3},
	"empty arrays":  {0x90},
	"empty maps":    {0x80},
	"tiny maps":     {0x81, 0xa0, 0xc0},
}

// The estimate follows what msgpack/v5 really allocates decoding into any.
func TestExpansionEstimate(t *testing.T) {
	for name, item := range shapes {
		b := listOf((1<<20)/len(item), item)
		_, cost, err := walk(&input{b: b}, int64(len(b)), Limits{MaxExpansion: 1 << 30})
		require.NoError(t, err)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var v any
		require.NoError(t, msgpack.Unmarshal(b, &v))
		runtime.ReadMemStats(&after)
		real := float64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("%-14s estimate %5.1fx, real %5.1fx", name, float64(cost)/float64(len(b)), real/float64(len(b)))
		assert.InDelta(t, 1, float64(cost)/real, 0.35, "%s: estimate %d, real %.0f", name, cost, real)
	}
}

func TestExpansionLimit(t *testing.T) {
	lim := Limits{MaxExpansion: 48}
	for name, item := range shapes {
		b := listOf((16<<20)/len(item), item)
		n, err := Len(b, lim)
		switch name {
		case "empty maps", "tiny maps": // 80 and 123 times their bytes
			var ee *ExpansionError
			require.ErrorAs(t, err, &ee, name)
			assert.Less(t, n, 1<<20, "%s: refused as soon as the estimate passes the limit", name)
			assert.Contains(t, ee.Error(), "more than 48 times as much")
			_, err = Len(b, Limits{})
			assert.NoError(t, err, "without the limit")
		default:
			assert.NoError(t, err, name)
		}
	}
}
