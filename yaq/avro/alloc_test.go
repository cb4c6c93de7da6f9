package avro

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// JSON denser in values than any protocol is refused before it is
// decoded; what is accepted decodes allocating under 20 times its bytes,
// garbage included. (1 MiB of "[]," allocated 41 MiB, of "0," 57 MiB.)
func TestParseProtocolBoundsMemory(t *testing.T) {
	text := hostile.HugeProtocol(1 << 20)
	var err error
	allocated, _ := hostile.HeapCost(func() { _, err = ParseProtocol(text) })
	assert.ErrorIs(t, err, ErrSchema)
	assert.ErrorContains(t, err, fmt.Sprintf("the JSON holds %d values (an object counting as 4) in %d bytes, more than the %d (one per 8 bytes and 4096 more) a schema or protocol may hold",
		strings.Count(text, ",")+strings.Count(text, "[")+4*strings.Count(text, "{"), len(text), len(text)/8+4096))
	assert.Less(t, allocated, uint64(2*len(text)), "bytes allocated refusing %d bytes", len(text))

	// As dense as allowed, in the costliest values there are.
	for _, unit := range []string{"[],", "{},", `{"":0},`, "0,", `"",`, `{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0},`} {
		pad := unit + strings.Repeat(" ", max(0, 8*(strings.Count(unit, ",")+strings.Count(unit, "[")+4*strings.Count(unit, "{"))-len(unit)))
		text := `{"protocol": "dense", "messages": {}, "x": [` + strings.Repeat(pad, (1<<20)/len(pad)) + `[]]}`
		var p *Protocol
		allocated, _ := hostile.HeapCost(func() { p, err = ParseProtocol(text) })
		require.NoError(t, err, unit)
		assert.Equal(t, "dense", p.Name)
		t.Logf("%q: %d bytes parsed with %d bytes allocated (%.1fx)", unit, len(text), allocated, float64(allocated)/float64(len(text)))
		assert.Less(t, allocated, uint64(20*len(text)), "bytes allocated parsing %d bytes of %q", len(text), unit)
	}
}

// decodeCost decodes b as s and returns what was allocated and what the
// decoder estimated.
func decodeCost(s *Schema, b []byte) (allocated uint64, estimate int64, err error) {
	d := valueDecoder{r: reader{b: b}, memMax: int64(len(b))*decodedPerByte + decodedSlack}
	var v any
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v, err = d.value(s, 0)
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return after.TotalAlloc - before.TotalAlloc, d.mem, err
}

// The decoder's estimate of the memory a value takes is not below what
// decoding it allocates, for the containers that take the least bytes:
// an empty array is a slice header boxed in an interface, 24 bytes that
// went uncounted, so that 8 MiB of empty arrays in an array became 311 MiB
// (39 per byte, over the 32 per byte and 16 MiB the budget allows).
func TestDecodeEstimatesContainers(t *testing.T) {
	const n = 1 << 16
	items := func(item []byte) []byte {
		b := appendVarint(nil, n)
		for range n {
			b = append(b, item...)
		}
		return append(b, 0x00)
	}
	entries := func(value []byte) []byte {
		b := appendVarint(nil, n)
		for i := range n {
			b = append(append(b, 0x06), byte(i), byte(i>>8), byte(i>>16))
			b = append(b, value...)
		}
		return append(b, 0x00)
	}
	for _, c := range []struct {
		schema string
		value  []byte
		slack  int64 // a growing map's old tables are left out of the estimate
	}{
		{`{"type": "array", "items": {"type": "array", "items": "long"}}`, items([]byte{0x00}), 1},
		{`{"type": "array", "items": {"type": "array", "items": "null"}}`, items([]byte{0x02, 0x00}), 1},
		{`{"type": "array", "items": {"type": "map", "values": "long"}}`, items([]byte{0x00}), 1},
		{`{"type": "array", "items": ["null", {"type": "array", "items": "long"}]}`, items([]byte{0x02, 0x00}), 1},
		{`{"type": "map", "values": {"type": "array", "items": "long"}}`, entries([]byte{0x00}), 2},
	} {
		s, err := ParseSchema(c.schema)
		require.NoError(t, err)
		allocated, estimate, err := decodeCost(s, c.value)
		require.NoError(t, err, c.schema)
		t.Logf("%s: %d bytes, %d allocated, %d estimated", s, len(c.value), allocated, estimate)
		assert.LessOrEqual(t, allocated, uint64(c.slack*estimate)+64<<10, "%s: allocated beyond the estimate", s)
	}
}

// The reviewer's value, end to end: empty arrays in an array, 3 MiB of
// them, are refused at the budget (32 bytes per byte and 16 MiB), having
// allocated no more than it; they were decoded into 120 MiB.
func TestDecodeRefusesArraysOverBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 100 MiB")
	}
	const n = 3 << 20
	b := append(appendVarint(nil, n), make([]byte, n+1)...)
	s, err := ParseSchema(`{"type": "array", "items": {"type": "array", "items": "long"}}`)
	require.NoError(t, err)
	allocated, _, err := decodeCost(s, b)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ndarray.ErrTooLarge), "%v", err)
	budget := uint64(len(b)*decodedPerByte + decodedSlack)
	assert.LessOrEqual(t, allocated, budget+64<<10, "bytes allocated")
}
