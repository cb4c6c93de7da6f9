package yaq

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigMeta encodes a meta map of about size bytes: entries with distinct
// 4-byte keys and empty values, six bytes each, which decode into some 20
// times their bytes.
func bigMeta(size int) []byte {
	n := size / 6
	b := appendVarint(nil, int64(n))
	for i := 0; i < n; i++ {
		b = append(b, 0x08)
		b = binary.BigEndian.AppendUint32(b, uint32(i))
		b = append(b, 0x00)
	}
	return append(b, 0x00)
}

// A call whose meta map is megabytes is refused at the frame that holds
// it, before it is read or decoded, naming the limit; the connection
// closes (with the answers due before it) and the daemon serves on. A
// handshake's meta, which nothing uses, is read past without being
// decoded. Without either, 2 MiB of meta became some 50 to 90 MiB of Go
// map per connection, and a 64 MiB frame 1.5 GB.
func TestDaemonCapsHandshakeAndMeta(t *testing.T) {
	d, addr, logs := floodDaemon(t, func(*Daemon) {})
	meta := bigMeta(2 << 20)
	spaces := bytes.Repeat([]byte{' '}, 16)
	hs, err := handshakeRequest.Append(nil, map[string]any{"clientHash": spaces, "clientProtocol": "x", "serverHash": d.hash[:], "meta": nil})
	require.NoError(t, err)
	// The request's meta is its last field: null (0x00) becomes the map.
	hsMeta := append(append(hs[:len(hs)-1:len(hs)-1], 0x02), meta...)
	t.Run("handshake meta", func(t *testing.T) {
		var got [][]byte
		allocated, _ := heapCost(func() {
			conn := dialRaw(t, addr)
			defer conn.Close()
			go conn.Write(append(append(append(limitFrame(hsMeta...), limitFrame(0)...), limitFrame(avroString("")...)...), rawCall("ping")...))
			got = readFrames(conn, 5+4)
		})
		require.Len(t, got, 9, "the handshake and the call answered")
		assert.Equal(t, []byte{0x00, 0x00, 0x00, 0x00}, got[0], "BOTH")
		assert.Equal(t, []byte{0x02}, got[7], "ping's 1")
		t.Logf("%d bytes of handshake meta skipped, %d bytes allocated", len(hsMeta), allocated)
		assert.Less(t, allocated, uint64(3*len(hsMeta)+1<<20), "bytes allocated")
	})
	for _, c := range []struct {
		name    string
		stream  []byte
		answers int // frames answered before the connection closes
		log     string
		most    int // bytes allocated: the frames read whole, not decoded
	}{
		{"call meta", append(rawHandshake(t, d), append(append(limitFrame(meta...), limitFrame(avroString("ping")...)...), limitFrame()...)...), 5,
			fmt.Sprintf("sent a frame of %d bytes, which with the 0 bytes before it is over the limit of %d bytes on a meta map", len(meta), maxMetaSize), 1 << 20},
		// The next call's meta in the rest of a call's name frame.
		{"meta after a name", append(rawHandshake(t, d), append(append(limitFrame(0), limitFrame(append(avroString("ping"), meta...)...)...), limitFrame()...)...), 5 + 4,
			fmt.Sprintf("sent a meta map of more than %d bytes, the most it may take", maxMetaSize), 2*len(meta) + 1<<20},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got [][]byte
			var rest []byte
			allocated, _ := heapCost(func() {
				conn := dialRaw(t, addr)
				defer conn.Close()
				go conn.Write(c.stream)
				got = readFrames(conn, c.answers)
				rest, _ = io.ReadAll(conn)
			})
			assert.Len(t, got, c.answers, "frames answered")
			assert.Zero(t, len(rest), "bytes answered after the meta")
			assert.Less(t, allocated, uint64(c.most), "bytes allocated")
			require.Eventually(t, func() bool { return strings.Contains(logs.String(), c.log) }, 2*time.Second, 10*time.Millisecond,
				"the log says %q; it has %q", c.log, logs.String())
			assert.Contains(t, logs.String(), "over a decoding limit")
		})
	}
	// A small meta is still echoed, and the daemon serves on.
	small := append(append(appendVarint(nil, 1), avroString("k")...), avroString("v")...)
	small = append(small, 0x00)
	conn := dialRaw(t, addr)
	defer conn.Close()
	go conn.Write(append(rawHandshake(t, d), append(append(limitFrame(small...), limitFrame(avroString("ping")...)...), limitFrame()...)...))
	got := readFrames(conn, 5+4)
	require.Len(t, got, 9)
	assert.Equal(t, small, got[5], "the meta echoed")
	assert.Equal(t, []byte{0x00}, got[6], "flag")
	assert.Equal(t, []byte{0x02}, got[7], "ping's 1")
}

// hugeProtocol is a protocol of about size bytes, nearly all "[],".
func hugeProtocol(size int) string {
	return `{"protocol": "evil", "messages": {}, "x": [` + strings.Repeat("[],", size/3) + `[]]}`
}

// A daemon that serves a protocol of megabytes is refused by Dial, naming
// the daemon and the limit, with little memory spent: parsing 16 MiB of
// "[]," took some 400 MiB.
func TestClientCapsServedProtocol(t *testing.T) {
	for _, c := range []struct {
		name, protocol, want string
	}{
		{"4 MiB", hugeProtocol(4 << 20), "over the limit of %d bytes on a handshake response"},
		{"1 MiB and 1 byte", hugeProtocol(maxProtocolSize)[:maxProtocolSize+1], "served a protocol of 1048577 bytes, over the limit of 1048576 a client parses"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, _ := fakeDaemon(t, c.protocol, []byte{0x00})
			var err error
			allocated, _ := heapCost(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				var cl *Client
				if cl, err = Dial(ctx, addr); cl != nil {
					cl.Close()
				}
			})
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrLimit)
			want := c.want
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, maxProtocolSize+maxHandshakeSize)
			}
			assert.Contains(t, err.Error(), "daemon "+addr)
			assert.Contains(t, err.Error(), want)
			assert.Less(t, allocated, uint64(3*maxProtocolSize+1<<20), "bytes allocated")
		})
	}
}

// JSON denser in values than any protocol is refused before it is
// decoded; what is accepted decodes allocating under 20 times its bytes,
// garbage included. (1 MiB of "[]," allocated 41 MiB, of "0," 57 MiB.)
func TestParseProtocolBoundsMemory(t *testing.T) {
	text := hugeProtocol(1 << 20)
	var err error
	allocated, _ := heapCost(func() { _, err = ParseProtocol(text) })
	assert.ErrorIs(t, err, ErrSchema)
	assert.ErrorContains(t, err, fmt.Sprintf("the JSON holds %d values (an object counting as 4) in %d bytes, more than the %d (one per 8 bytes and 4096 more) a schema or protocol may hold",
		strings.Count(text, ",")+strings.Count(text, "[")+4*strings.Count(text, "{"), len(text), len(text)/8+4096))
	assert.Less(t, allocated, uint64(2*len(text)), "bytes allocated refusing %d bytes", len(text))

	// As dense as allowed, in the costliest values there are.
	for _, unit := range []string{"[],", "{},", `{"":0},`, "0,", `"",`, `{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0},`} {
		pad := unit + strings.Repeat(" ", max(0, 8*(strings.Count(unit, ",")+strings.Count(unit, "[")+4*strings.Count(unit, "{"))-len(unit)))
		text := `{"protocol": "dense", "messages": {}, "x": [` + strings.Repeat(pad, (1<<20)/len(pad)) + `[]]}`
		var p *Protocol
		allocated, _ := heapCost(func() { p, err = ParseProtocol(text) })
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
	assert.True(t, errors.Is(err, ErrLimit), "%v", err)
	budget := uint64(len(b)*decodedPerByte + decodedSlack)
	assert.LessOrEqual(t, allocated, budget+64<<10, "bytes allocated")
}
